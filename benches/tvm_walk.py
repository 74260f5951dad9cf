"""A full Rust walk (and an identity map) of a large Apache TVM `tirx.PrimFunc`, through TVM's
C++ `__s_visit__` / `__s_mutate__` hooks, against the runtime's own C++ traversal of it, its
structural hash (issue 38 §3: the goal is a Rust walk at most 1.0x the C++ hash).

Usage (from the repository root, after `bash scripts/setup.sh`, which installs apache-tvm):

    .venv/bin/python benches/tvm_walk.py [--statements S] [--rounds R] [--number N] [--no-build]

What it does:
1. builds `libtvm_ffi_bench_functions.so` (`cargo build --release -p tvm-ffi-benches --lib`;
   its `bench.structural_walk_and_map` times `N` Rust walks, a callback on every value, and `N`
   `structural::map`s that change nothing) and loads it into a process that imported `tvm`;
2. builds a PrimFunc of `S` statements from TVMScript text (about 60,000 values reached by a
   walk at the default `S`);
3. for `R` rounds, times `N` C++ structural hashes (`ffi.StructuralHash`, through `timeit`)
   and the Rust walk and map, and prints the best of each, in ms, with the ratio Rust/C++.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import timeit

ROOT = pathlib.Path(__file__).resolve().parents[1]


def prim_func_source(statements: int) -> str:
    lines = [
        "@T.prim_func",
        "def big(A: T.Buffer((64, 64), \"float32\"), B: T.Buffer((64, 64), \"float32\"), n: T.int32):",
    ]
    for s in range(statements):
        lines.append(f"    for i{s}, j{s} in T.grid(64, 64):")
        lines.append(f"        B[i{s}, j{s}] = A[i{s}, j{s}] * T.float32({s}) + T.Cast(\"float32\", n + i{s} * {s % 7 + 1})")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=900)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=5)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    try:
        import tvm  # noqa: F401  (registers TVM's IR and its hooks)
    except ImportError:
        sys.exit("apache-tvm is not installed: run `bash scripts/setup.sh`")
    import tvm_ffi

    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "tvm-ffi-benches", "--lib"],
                       cwd=ROOT, check=True)
    tvm_ffi.load_module(str(ROOT / "target" / "release" / "libtvm_ffi_bench_functions.so"))
    rust = tvm_ffi.get_global_func("bench.structural_walk_and_map")
    cxx_hash = tvm_ffi.get_global_func("ffi.StructuralHash")

    func = tvm.script.from_source(prim_func_source(args.statements))
    values, _, _ = rust(func, 1)
    # The identity map returns the function itself: nothing was copied.
    assert tvm_ffi.get_global_func("ffi.StructuralEqual")(func, func, False, False)

    best = {"C++ structural hash": float("inf"), "Rust walk": float("inf"),
            "Rust map (identity)": float("inf")}
    for _ in range(args.rounds):
        cxx = timeit.timeit(lambda: cxx_hash(func, False, False), number=args.number) / args.number
        _, walk, map_ = rust(func, args.number)
        best["C++ structural hash"] = min(best["C++ structural hash"], cxx)
        best["Rust walk"] = min(best["Rust walk"], walk)
        best["Rust map (identity)"] = min(best["Rust map (identity)"], map_)
    base = best["C++ structural hash"]
    print(f"tirx.PrimFunc of {args.statements} statements: {int(values)} values reached by a walk")
    print(f"{'traversal':<22} {'ms':>9} {'ratio':>7}")
    for name, seconds in best.items():
        print(f"{name:<22} {seconds * 1e3:9.3f} {seconds / base:6.2f}x")


if __name__ == "__main__":
    main()
