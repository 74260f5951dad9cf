"""Keyword arguments from Python: positional calls, keyword calls and construction of Rust
`#[ffi_func]` / `#[ffi(init)]` code against the C++ twins (`benches/cpp/bench_functions.cc`), in
one process; optionally the positional call against another revision's build (`--main REV`,
default off; built from a temporary worktree with its keys renamed, and timed in the same
processes).

Usage (from the repository root, after `bash scripts/setup.sh`):

    .venv/bin/python benches/kwargs.py [--rounds R] [--number N] [--no-build] [--main main]

Rows (`f` is `bench.add3(a, b, c)` in Rust, `bench_cpp.add3` in C++; `Pair` has an explicit
constructor `(a, b)` on both sides):

- `positional`: `f(1, 2, 3)`;
- `KWARGS`: `f(1, KWARGS, "b", 2, "c", 3)`: keywords in the runtime's convention, bound by name
  in the Rust call path (a C++ typed function refuses them);
- `py wrapper`: `g(1, b=2, c=3)` with `g = tvm_ffi.utils.kwargs_wrapper.make_kwargs_wrapper(f,
  ["a", "b", "c"])`, the per-call Python wrapper C++ users write for keyword syntax;
- `pkg call`, `pkg call kw`, `pkg call kw all`: `h(1, 2, 3)`, `h(1, b=2, c=3)`, `h(a=1, b=2,
  c=3)` through the function a shipped package's `_ffi_api.py` exposes: for Rust the Python
  function `signatures` of the helpers module (`tvm_ffi_build/ffi_helpers.py`) makes around
  the runtime's (keywords in the runtime's `KWARGS` convention), for C++ the runtime's `Function` (keywords refused);
- `construct`: `Pair(1, 2)`; `construct kw`: `Pair(a=1, b=2)` (the runtime's `__init__` passes
  the keywords in its KWARGS convention: Rust binds them, C++ refuses them); `auto-init`:
  `RwPair(1, 2)` (no constructor declared: the runtime's generic field-by-field `__ffi_init__`
  on both sides), all through the `__init__` the runtime installs on a registered class;
- `pkg ...`: the same three through the classes a shipped package defines: the Rust package's
  `_ffi_api.py` hands `Type(...)` straight to `__ffi_init__` (the build backend's
  `CONSTRUCTORS_HELPER`); a C++ package (tvm-ffi-stubgen's) keeps the runtime's `__init__`.

A benchmark reports figures; it never fails on a missed goal (the machine may be noisy).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import timeit

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))

ROWS = ["positional", "KWARGS", "py wrapper", "pkg call", "pkg call kw", "pkg call kw all",
        "construct", "construct kw", "auto-init", "pkg construct", "pkg construct kw",
        "pkg auto-init"]
FUNCTION_ROWS = ("positional", "KWARGS", "py wrapper", "pkg call", "pkg call kw", "pkg call kw all")
PACKAGE_ROWS = {"pkg construct": "Pair(1, 2)", "pkg construct kw": "Pair(a=1, b=2)",
                "pkg auto-init": "RwPair(1, 2)"}


def package_helper(name: str):
    """A function of the helpers module a shipped package's `_ffi_api.py` runs when imported
    (`tvm_ffi_build/ffi_helpers.py`, placed next to it as `_ffi_helpers.py`):
    `fast_constructors(namespace, lib)` makes its classes' direct constructors,
    `signatures(namespace, prefix, lib)` its keyword functions."""
    from tvm_ffi_build import ffi_helpers

    return getattr(ffi_helpers, name)


def worker(rust_lib: str, cpp_lib: str, number: int, repeat: int, main_lib: str, reverse: bool) -> dict:
    """Times the rows on both sides in this process, and the positional call of another
    revision's build (`main_lib`, its keys renamed `bench_main.*`; "" for none): {row: {side:
    best ns}}. `reverse` times the sides in the opposite order."""
    import tvm_ffi
    from tvm_ffi import core
    from tvm_ffi.utils.kwargs_wrapper import make_kwargs_wrapper

    # The libraries load in alternating order too (a library's place in the process shows in
    # its figures: a build timed against itself renamed reads 1.06 when always loaded first).
    libs = [rust_lib, cpp_lib] + ([main_lib] if main_lib else [])
    modules = {}
    for lib in reversed(libs) if reverse else libs:
        modules[lib] = tvm_ffi.load_module(lib)
    sides = [("C++", "bench_cpp", "all"), ("Rust", "bench", "all")]
    if main_lib:
        sides.append(("main", "bench_main", "positional"))
    if reverse:
        sides.reverse()
    out: dict = {}
    for side, prefix, rows in sides:
        f = tvm_ffi.get_global_func(f"{prefix}.add3")
        g = make_kwargs_wrapper(f, ["a", "b", "c"])
        env = {"f": f, "g": g, "K": core.KWARGS, "h": f}
        if side == "Rust":
            package = {"add3": tvm_ffi.get_global_func(f"{prefix}.add3")}
            package_helper("signatures")(package, f"{prefix}.", modules[rust_lib])
            assert getattr(package["add3"], "__ffi_keywords__", False)
            env["h"] = package["add3"]
        if rows == "all":

            class Pair(tvm_ffi.Object):
                pass

            class RwPair(tvm_ffi.Object):
                pass

            env["Pair"] = tvm_ffi.register_object(f"{prefix}.Pair")(Pair)
            env["RwPair"] = tvm_ffi.register_object(f"{prefix}.RwPair")(RwPair)
        stmts = {
            "positional": "f(1, 2, 3)",
            "KWARGS": 'f(1, K, "b", 2, "c", 3)',
            "py wrapper": "g(1, b=2, c=3)",
            "pkg call": "h(1, 2, 3)",
            "pkg call kw": "h(1, b=2, c=3)",
            "pkg call kw all": "h(a=1, b=2, c=3)",
            "construct": "Pair(1, 2)",
            "construct kw": "Pair(a=1, b=2)",
            "auto-init": "RwPair(1, 2)",
            **PACKAGE_ROWS,
        }
        for row, stmt in stmts.items():
            if rows != "all" and row != rows:
                continue
            if row == "pkg construct" and side == "Rust":
                # What the Rust package ships; a C++ package (tvm-ffi-stubgen's) keeps the
                # runtime's `__init__`, so its rows time that again.
                package_helper("fast_constructors")({"Pair": env["Pair"], "RwPair": env["RwPair"]},
                                       modules[rust_lib])
            try:
                eval(stmt, env)
            except TypeError:
                out.setdefault(row, {})[side] = None  # refused
                continue
            timer = timeit.Timer(stmt, globals=env)
            best = min(timer.repeat(repeat=repeat, number=number)) * 1e9 / number
            out.setdefault(row, {})[side] = best
    return out


def build_rust(target: pathlib.Path, source: pathlib.Path) -> pathlib.Path:
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "tvm-ffi-benches", "--lib"],
                   cwd=source, env=env, check=True)
    return target / "release" / "libtvm_ffi_bench_functions.so"


def build_revision(rev: str) -> pathlib.Path:
    """The bench library of revision `rev`, built from a temporary worktree with its keys
    renamed `bench_main.*` (so that it loads beside this build's, in the same process)."""
    target = ROOT / "target" / f"bench-{rev.replace('/', '_')}"
    with tempfile.TemporaryDirectory(prefix="kwargs-bench-") as tmp:
        tree = pathlib.Path(tmp) / "src"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), rev], cwd=ROOT, check=True)
        functions = tree / "benches" / "src" / "functions.rs"
        functions.write_text(functions.read_text().replace('"bench.', '"bench_main.'))
        try:
            return build_rust(target, tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)


def run_worker(rust_lib, cpp_lib, number, repeat, main_lib, reverse=False) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", str(rust_lib), str(cpp_lib), str(number), str(repeat),
         str(main_lib or ""), "rev" if reverse else "fwd"],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        sys.exit(f"error: the timing process failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(ns):
    return "refused" if ns is None else f"{ns:.1f}"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        rust_lib, cpp_lib, number, repeat, main_lib, order = sys.argv[2:8]
        print(json.dumps(worker(rust_lib, cpp_lib, int(number), int(repeat), main_lib, order == "rev")))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="worker processes per side (default 5)")
    parser.add_argument("--number", type=int, default=100_000, help="calls per timing (default 100000)")
    parser.add_argument("--no-build", action="store_true", help="use the libraries of a previous run")
    parser.add_argument("--main", metavar="REV", help="also time the positional call of REV's build")
    args = parser.parse_args()

    from python_call_overhead import build_cpp, target_dir

    if args.no_build:
        rust_lib = target_dir() / "release" / "libtvm_ffi_bench_functions.so"
        cpp_lib = target_dir() / "bench-cpp" / "libbench_functions_cpp.so"
    else:
        print("== building the Rust functions (release) and the C++ twins", file=sys.stderr)
        rust_lib = build_rust(target_dir(), ROOT)
        cpp_lib = build_cpp()
    main_lib = None
    if args.main:
        main_lib = target_dir() / f"bench-{args.main.replace('/', '_')}" / "release" / "libtvm_ffi_bench_functions.so"
        if not (args.no_build and main_lib.exists()):
            print(f"== building the Rust functions of {args.main}", file=sys.stderr)
            main_lib = build_revision(args.main)

    best: dict = {}
    against_main = []  # per process: this build's positional call / main's, timed back to back
    for round_index in range(args.rounds):
        # The sides in alternating order from process to process: no side is always timed first.
        result = run_worker(rust_lib, cpp_lib, args.number, 5, main_lib, round_index % 2 == 1)
        if main_lib is not None:
            against_main.append(result["positional"]["Rust"] / result["positional"]["main"])
        for row, sides in result.items():
            for side, ns in sides.items():
                old = best.setdefault(row, {}).get(side)
                best[row][side] = ns if old is None or (ns is not None and ns < old) else old
        print(f"   round {round_index + 1}/{args.rounds} done", file=sys.stderr)

    import tvm_ffi

    print(f"Python calls, best of {args.rounds} processes x 5 x {args.number} calls "
          f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}), tvm_ffi {tvm_ffi.__version__}")
    print("%-16s %9s %9s %9s %14s" % ("row", "C++ ns", "Rust ns", "Rust/C++", "/ positional"))
    for row in ROWS:
        cpp, rust = best[row]["C++"], best[row]["Rust"]
        ratio = "-" if cpp is None or rust is None else f"{rust / cpp:.3f}"
        base = best["positional" if row in FUNCTION_ROWS
                    else "pkg construct" if row.startswith("pkg") else "construct"]["Rust"]
        per = "-" if rust is None else f"{rust / base:.2f}x"
        print("%-16s %9s %9s %9s %14s" % (row, fmt(cpp), fmt(rust), ratio, per))
    if main_lib is not None:
        here = best["positional"]
        print(f"\npositional call f(1, 2, 3), same process: this build {here['Rust']:.1f} ns, "
              f"{args.main} {here['main']:.1f} ns, C++ {here['C++']:.1f} ns: this build / "
              f"{args.main} = {here['Rust'] / here['main']:.3f} (best of each); median of the "
              f"per-process ratios {statistics.median(against_main):.3f} "
              f"(range {min(against_main):.3f}-{max(against_main):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
