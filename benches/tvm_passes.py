"""TVM passes written in Rust (`examples/tvm-passes`) against TVM's own C++ passes, on a large
generated input (issue 39 §2: the goal is Rust/C++ at most 1.0 per pass).

Usage (from the repository root, after `bash scripts/setup.sh`, which installs apache-tvm):

    .venv/bin/python benches/tvm_passes.py [--blocks B] [--functions F] [--rounds R] [--number N]
                                           [--no-build]

What it does:
1. builds `libtvm_passes.so` (`cargo build --release -p tvm-ffi-example-tvm-passes`) and loads
   it into a process that imported `tvm`;
2. builds a `PrimFunc` of `B` loop nests full of no-ops (about 13,000 statements at the
   default `B`: `examples/tvm-passes/python/tvm_passes_workload.py`);
3. builds a Relax module of `F` functions (300 by default) full of dead bindings and unused
   functions, and the `PrimFunc`s they call (`dead_code_module` in the same file);
4. for each pass (`RemoveNoOp` on that function, `ConvertSSA` on a module holding it twice, so
   that every variable of the second copy is a redefinition, `DeadCodeElimination` on the Relax
   module), checks that the Rust pass's output is structurally equal to the C++ pass's, then,
   for `R` rounds, times `N` runs of each (alternating) and prints the best of each, in ms,
   with the ratio Rust/C++.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import timeit

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "tvm-passes" / "python"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=160)
    parser.add_argument("--functions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=3)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    try:
        import tvm
    except ImportError:
        sys.exit("apache-tvm is not installed: run `bash scripts/setup.sh`")
    import tvm_ffi
    from tvm_passes_workload import binding_count, dead_code_module, no_op_heavy_module, statement_count

    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "tvm-ffi-example-tvm-passes"],
                       cwd=ROOT, check=True)
    tvm_ffi.load_module(str(ROOT / "target" / "release" / "libtvm_passes.so"))
    mod = no_op_heavy_module(args.blocks)
    func = mod["main"]
    # The same function under two names: every variable of the second is defined again.
    twice = tvm.IRModule({"f": func.with_attr("global_symbol", "f"), "g": func.with_attr("global_symbol", "g")})
    relax_mod = dead_code_module(args.functions)
    passes = {
        "RemoveNoOp": (tvm.tirx.transform.RemoveNoOp(),
                       tvm_ffi.get_global_func("tvm_passes.RemoveNoOp")(), mod),
        "ConvertSSA": (tvm.tirx.transform.ConvertSSA(),
                       tvm_ffi.get_global_func("tvm_passes.ConvertSSA")(), twice),
        "DeadCodeElimination": (tvm.relax.transform.DeadCodeElimination(),
                                tvm_ffi.get_global_func("tvm_passes.DeadCodeElimination")(), relax_mod),
    }
    print(f"tirx.PrimFunc of {statement_count(mod)} statements ({args.blocks} loop nests); "
          "ConvertSSA runs on a module holding it twice")
    print(f"Relax module of {args.functions} functions, {binding_count(relax_mod)} bindings "
          f"({len(relax_mod.functions)} functions with the PrimFuncs) for DeadCodeElimination")
    print(f"{'pass':<20} {'C++ ms':>9} {'Rust ms':>9} {'Rust/C++':>9}")
    for name, (cxx_pass, rust_pass, mod) in passes.items():
        tvm.ir.assert_structural_equal(rust_pass(mod), cxx_pass(mod))
        best_cxx = best_rust = float("inf")
        for _ in range(args.rounds):
            best_cxx = min(best_cxx, timeit.timeit(lambda: cxx_pass(mod), number=args.number) / args.number)
            best_rust = min(best_rust, timeit.timeit(lambda: rust_pass(mod), number=args.number) / args.number)
        print(f"{name:<20} {best_cxx * 1e3:9.2f} {best_rust * 1e3:9.2f} {best_rust / best_cxx:8.2f}x")


if __name__ == "__main__":
    main()
