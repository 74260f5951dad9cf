#!/usr/bin/env python3
"""Prints the size of the code the macros generate for `examples/point`'s `Point` (3 fields,
4 methods), in rustfmt-formatted lines, and fails above the budget: 156 lines for the type
(the `#[derive(Object)]` output, one `const _: () = { .. };` block after the struct) and 40
per method (the `#[ffi_methods]` output, one `const _: () = { .. };` block after the impl,
divided by the number of methods it registers).

Usage: scripts/expansion-size.py [EXPANDED.rs]   (default: expands examples/point itself)
"""
import os
import re
import subprocess
import sys
import tempfile

TYPE_BUDGET = 156  # 150, +1 for the entry's `child_slots`, +5 for the key claim macro (E0428)
METHOD_BUDGET = 40
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expanded_source():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            return f.read()
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    return subprocess.run(
        ["cargo", "rustc", "-q", "-p", "tvm-ffi-example-point", "--lib", "--",
         "-Zunpretty=expanded"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    ).stdout


def rustfmt(source):
    with tempfile.NamedTemporaryFile("w", suffix=".rs", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        subprocess.run(["rustfmt", "--edition", "2021", path], check=True)
        with open(path) as f:
            return f.read().splitlines()
    finally:
        os.unlink(path)


def block_end(lines, start):
    """The index of the line that closes the brace opened on `lines[start]`."""
    depth = 0
    for i in range(start, len(lines)):
        # Braces in string literals are rare in generated code and balanced where they occur.
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0 and i > start or (depth == 0 and "{" in lines[i] and "}" in lines[i]):
            return i
    raise SystemExit("unbalanced braces in the expansion")


def const_blocks_after(lines, start):
    """The sizes of the consecutive top-level `const _: () = {` blocks after `lines[start]`."""
    sizes = []
    i = start
    while i < len(lines) and lines[i].startswith("const _: () = {"):
        end = block_end(lines, i)
        sizes.append(end - i + 1)
        i = end + 1
    return sizes


def main():
    lines = rustfmt(expanded_source())
    struct = next(i for i, l in enumerate(lines) if re.match(r"pub struct Point \{", l))
    type_blocks = const_blocks_after(lines, block_end(lines, struct) + 1)
    impl = next(i for i, l in enumerate(lines) if l == "impl Point {")
    method_blocks = const_blocks_after(lines, block_end(lines, impl) + 1)
    if len(type_blocks) != 1 or not method_blocks:
        raise SystemExit(
            f"expected one derive block and #[ffi_methods] blocks after Point, found "
            f"{len(type_blocks)} and {len(method_blocks)}")
    start = block_end(lines, impl) + 1
    block = lines[start:start + sum(method_blocks)]
    count = sum(bool(re.search(r"MethodEntry \{$", l)) for l in block)
    per_method = sum(method_blocks) / count
    print(f"Point (#[derive(Object)]): {type_blocks[0]} lines (budget {TYPE_BUDGET})")
    print(f"Point's {count} methods (#[ffi_methods]): {sum(method_blocks)} lines, "
          f"{per_method:.1f} per method (budget {METHOD_BUDGET})")
    sys.stdout.flush()
    if type_blocks[0] > TYPE_BUDGET or per_method > METHOD_BUDGET:
        print("error: the expansion of Point is over budget", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
