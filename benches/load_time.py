"""Load time of a Rust library against its C++ twin: `tvm_ffi.load_module` of a library with N
object types (two reflected fields each) and N global functions, for N = 1 and N = 200.

Each library is generated (Rust: one crate with `#[derive(Object)]` types and `#[ffi_func]`
functions; C++: `refl::ObjectDef` types and `refl::GlobalDef` functions), built in release as
the package build backend ships it (link-time optimisation, one codegen unit) / `-O2`, then loaded in fresh Python processes, C++ and Rust interleaved, one load per process
(registration happens once per process). The time is `tvm_ffi.load_module` alone, measured in
the child after `import tvm_ffi`. Best and median of the rounds are printed with the Rust/C++
ratio; the goal is Rust/C++ <= 1.2.

    .venv/bin/python benches/load_time.py [--rounds R] [--types 1 200] [--no-build]

Beside it, the `import` of a shipped package: `import my_ext` (`examples/point`, its library
built the same way), against `load_module` of that library alone; the difference is the
Python side of the import (the runtime's class registration, the package's stubs module and
its helpers: keyword functions, direct constructors).

The generated sources and builds live under target/bench-load/. Not a test: prints figures,
never fails on a missed goal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
CONFIG = ROOT / ".venv" / "bin" / "tvm-ffi-config"
OUT = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "bench-load"


def shipped_profile_env() -> dict:
    """The release profile the package build backend ships libraries with."""
    from tvm_ffi_build.project import SHIPPED_PROFILE_ENV

    return dict(SHIPPED_PROFILE_ENV)


def config(flag: str) -> str:
    return subprocess.check_output([str(CONFIG), flag], text=True).strip()


def rust_source(n: int) -> str:
    items = ["use tvm_ffi::{ffi_func, Object};\n"]
    for i in range(n):
        items.append(
            f"""
/// Generated type {i}.
#[derive(Object)]
#[ffi_type(key = "bench_load_rs.T{i}")]
#[repr(C)]
pub struct T{i} {{
    /// A number.
    pub a: i64,
    /// A name.
    pub b: tvm_ffi::String,
}}

#[ffi_func(name = "bench_load_rs.f{i}")]
fn f{i}(a: i64, b: i64) -> i64 {{
    a + b + {i}
}}
"""
        )
    return "".join(items)


def cpp_source(n: int) -> str:
    lines = [
        "#include <tvm/ffi/function.h>",
        "#include <tvm/ffi/object.h>",
        "#include <tvm/ffi/string.h>",
        "#include <tvm/ffi/reflection/registry.h>",
        "#include <cstdint>",
        "namespace ffi = tvm::ffi;",
        "namespace {",
    ]
    for i in range(n):
        lines += [
            f"class T{i}Obj : public ffi::Object {{",
            " public:",
            "  int64_t a = 0;",
            "  ffi::String b;",
            f'  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_load_cpp.T{i}", T{i}Obj, ffi::Object);',
            "};",
        ]
    lines += ["}  // namespace", "TVM_FFI_STATIC_INIT_BLOCK() {", "  namespace refl = tvm::ffi::reflection;"]
    for i in range(n):
        lines += [
            f'  refl::ObjectDef<T{i}Obj>().def_ro("a", &T{i}Obj::a).def_ro("b", &T{i}Obj::b);',
            f'  refl::GlobalDef().def("bench_load_cpp.f{i}", [](int64_t a, int64_t b) {{ return a + b + {i}; }});',
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def build_rust(n: int) -> Path:
    crate = OUT / f"rust-{n}"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        f"""[package]
name = "bench_load_rs_{n}"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
tvm-ffi-sdk = {{ path = "{ROOT / 'tvm-ffi'}" }}

[workspace]
"""
    )
    src = crate / "src" / "lib.rs"
    text = rust_source(n)
    if not src.exists() or src.read_text() != text:
        src.write_text(text)
    target = OUT / "cargo-target"
    # Built as the package build backend ships a library (link-time optimisation, one unit).
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--manifest-path", str(crate / "Cargo.toml")],
        check=True,
        env={**os.environ, **shipped_profile_env(), "CARGO_TARGET_DIR": str(target)},
    )
    return target / "release" / f"libbench_load_rs_{n}.so"


def build_cpp(n: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    src = OUT / f"cpp_{n}.cc"
    lib = OUT / f"libbench_load_cpp_{n}.so"
    src.write_text(cpp_source(n))
    libdir = config("--libdir")
    subprocess.run(
        [
            os.environ.get("CXX", "g++"),
            "-O2",
            "-std=c++17",
            "-shared",
            "-fPIC",
            f"-I{config('--includedir')}",
            f"-I{config('--dlpack-includedir')}",
            str(src),
            "-o",
            str(lib),
            f"-L{libdir}",
            "-ltvm_ffi",
            f"-Wl,-rpath,{libdir}",
        ],
        check=True,
    )
    return lib


def build_point() -> Path:
    """`examples/point`'s library, built as the package build backend ships it."""
    target = OUT / "point-target"
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "-p", "tvm-ffi-example-point"],
        check=True, cwd=ROOT,
        env={**os.environ, **shipped_profile_env(), "CARGO_TARGET_DIR": str(target)},
    )
    return target / "release" / "libtvm_ffi_example_point.so"


IMPORT_CHILD = """
import time
import tvm_ffi
start = time.perf_counter()
import my_ext
print((time.perf_counter() - start) * 1e3)
"""


def import_ms(lib: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "examples" / "point" / "python"),
           "LD_LIBRARY_PATH": str(lib.parent)}
    out = subprocess.check_output([str(PYTHON), "-c", IMPORT_CHILD], text=True, env=env)
    return float(out.strip().splitlines()[-1])


CHILD = """
import sys, time
import tvm_ffi
start = time.perf_counter()
tvm_ffi.load_module(sys.argv[1])
print((time.perf_counter() - start) * 1e3)
"""


def load_ms(lib: Path) -> float:
    out = subprocess.check_output([str(PYTHON), "-c", CHILD, str(lib)], text=True)
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--types", type=int, nargs="+", default=[1, 200])
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()

    libs = {}
    for n in args.types:
        if args.no_build:
            libs[n] = (
                OUT / f"libbench_load_cpp_{n}.so",
                OUT / "cargo-target" / "release" / f"libbench_load_rs_{n}.so",
            )
        else:
            print(f"== building the C++ and Rust libraries with {n} types and {n} functions")
            libs[n] = (build_cpp(n), build_rust(n))

    print(f"\nload_module time, {args.rounds} fresh processes each, C++ and Rust interleaved")
    print(f"{'library':<28} {'C++ ms':>8} {'Rust ms':>8} {'Rust/C++':>9}   (best; median)")
    for n, (cpp_lib, rust_lib) in libs.items():
        cpp, rust = [], []
        for _ in range(args.rounds):
            cpp.append(load_ms(cpp_lib))
            rust.append(load_ms(rust_lib))
        best = min(rust) / min(cpp)
        median = statistics.median(rust) / statistics.median(cpp)
        label = f"{n} types + {n} functions"
        print(
            f"{label:<28} {min(cpp):8.2f} {min(rust):8.2f} {best:9.2f}"
            f"   (median {statistics.median(cpp):.2f} / {statistics.median(rust):.2f} = {median:.2f})"
        )
    print("goal: Rust/C++ <= 1.2")

    point = OUT / "point-target" / "release" / "libtvm_ffi_example_point.so"
    if not args.no_build or not point.exists():
        point = build_point()
    imports, loads = [], []
    for _ in range(args.rounds):
        imports.append(import_ms(point))
        loads.append(load_ms(point))
    print(f"\nimport of a shipped package, {args.rounds} fresh processes each (best; median):")
    print(f"  import my_ext (examples/point)      {min(imports):6.2f} ms; {statistics.median(imports):.2f} ms")
    print(f"  load_module of its library alone    {min(loads):6.2f} ms; {statistics.median(loads):.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
