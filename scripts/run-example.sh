#!/usr/bin/env bash
# The main example end to end: builds the Rust library examples/point and uses its functions
# from Python and from a C++ program compiled against the wheel's headers.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh --python-only
# Only the two example libraries (and the SDK crates they depend on), with cargo's own progress.
echo "==> cargo build -p tvm-ffi-example-point -p tvm-ffi-example-ir"
echo "    (the first build compiles the SDK and its dependencies: it may take minutes on a cold cache)"
cargo build -p tvm-ffi-example-point -p tvm-ffi-example-ir
lib="$root/target/debug/libtvm_ffi_example_point.so"
echo "==> Python uses the Rust library"
.venv/bin/python examples/point/python/main.py "$lib"
echo "==> C++ uses the Rust library"
bash examples/point/cpp/build.sh "$root/target/example-cpp"
# The C++ test peer defines `testing.TestCxxClassBase`, the parent of the Rust `my_ext.CxxChild`.
"$root/target/example-cpp/point_main" "$lib" "$(.venv/bin/tvm-ffi-config --libdir)/libtvm_ffi_testing.so"
echo "==> The expression IR of examples/ir from Python"
ir="$root/target/debug/libtvm_ffi_example_ir.so"
.venv/bin/python examples/ir/python/main.py "$ir"
echo "==> ... and from C++"
config="$root/.venv/bin/tvm-ffi-config"
g++ -std=c++17 -O1 -I"$("$config" --includedir)" examples/ir/cpp/main.cc -o "$root/target/example-cpp/ir_main" \
  -L"$("$config" --libdir)" -ltvm_ffi -Wl,-rpath,"$("$config" --libdir)" -ldl
"$root/target/example-cpp/ir_main" "$ir"
