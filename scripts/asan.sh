#!/usr/bin/env bash
# The test suite under AddressSanitizer: the workspace is built instrumented (target/asan), the
# cargo tests run against it (C++ peer programs are compiled with -fsanitize=address), and the
# Python suite loads the instrumented libraries with the compiler's ASan runtime preloaded.
# Any sanitizer report fails the run. Needs the toolchain's ASan runtime (`RUSTC_BOOTSTRAP=1`
# unlocks `-Zsanitizer` on the stable toolchain) and gcc's libasan.
#
# Left out, and why (docs/book/src/soundness.md, "AddressSanitizer in CI"):
# - leak detection (`detect_leaks=0`): the runtime's registries live until exit by design;
# - tests/python/test_packaging.py and test_downstream.py: they build wheels and crates with
#   cargo and pip in subprocesses, which would inherit the preloaded runtime; they check the
#   build, not memory accesses, and run in the normal suite;
# - the ui-tests crate (compile-time checks only) and benches.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh >/dev/null
target=x86_64-unknown-linux-gnu
export RUSTC_BOOTSTRAP=1
# `-rdynamic`: test executables carry the runtime and export it to the libraries they load.
export RUSTFLAGS="-Zsanitizer=address -Clink-arg=-rdynamic"
export RUSTDOCFLAGS="-Zsanitizer=address"
# Memory requests the tests make on purpose to see a MemoryError fail instead of aborting.
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:abort_on_error=0"
export TVM_FFI_SANITIZE=address
packages=()
for crate in tvm-ffi-sys tvm-ffi tvm-ffi-kernels tests examples/point examples/kernels examples/cuda \
  examples/rmsnorm examples/ir \
  tests/layout-variants tests/testing-twins tests/peer tests/containers tests/hook-docs tests/mirrors; do
  packages+=(-p "$(sed -n 's/^name = "\(.*\)"/\1/p' "$crate/Cargo.toml" | head -1)")
done
echo "==> cargo build (AddressSanitizer, target/asan)"
cargo build -q --target "$target" --target-dir target/asan "${packages[@]}"
echo "==> cargo test (AddressSanitizer)"
cargo test -q --target "$target" --target-dir target/asan "${packages[@]}" 2>&1 \
  | tee target/asan/cargo-test.log | grep -E "^test result|FAILED|panicked|ERROR: AddressSanitizer" || true
# A report is an `ERROR:`; ASan's `WARNING: ... failed to allocate` is what a test of a designed
# allocation failure (a `MemoryError` or `OverflowError` instead of an abort) makes it print
# under `allocator_may_return_null=1`.
if grep -qE "ERROR: AddressSanitizer|SUMMARY: AddressSanitizer" target/asan/cargo-test.log \
  || ! grep -q "^test result" target/asan/cargo-test.log \
  || grep -qE "^test result: FAILED|^error" target/asan/cargo-test.log; then
  echo "error: the cargo tests under AddressSanitizer failed (target/asan/cargo-test.log)" >&2
  exit 1
fi
echo "==> pytest (AddressSanitizer)"
libasan="$(gcc -print-file-name=libasan.so)"
libstdcxx="$(gcc -print-file-name=libstdc++.so)"
# libstdc++ right after the runtime: its `__cxa_throw` interceptor needs the real one.
TVM_FFI_TARGET_DIR="$root/target/asan/$target/debug" LD_PRELOAD="$libasan $libstdcxx" \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/python \
  --ignore tests/python/test_packaging.py --ignore tests/python/test_downstream.py 2>&1 | tee target/asan/pytest.log | tail -3
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ] || grep -q "ERROR: AddressSanitizer" target/asan/pytest.log; then
  echo "error: the Python suite under AddressSanitizer failed (target/asan/pytest.log)" >&2
  exit 1
fi
