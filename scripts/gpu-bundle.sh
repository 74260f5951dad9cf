#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh checks into target/gpu-bundle/, for a GPU machine that has
# PyTorch, JAX and nvcc but no cargo and no network (the device machines lent to this project):
# the CUDA examples' libraries and the toolkit's Rust test binaries (debug, stripped), the
# release RMSNorm library with its C++ launcher and C++ TVM-FFI twin, the apache-tvm-ffi and
# jax-tvm-ffi wheels for the machine's Python (cp312 by default), and run.sh, which installs
# the wheels and runs every CUDA test, compute-sanitizer memcheck and the benchmarks.
# Carry `target/gpu-bundle` and run `bash target/gpu-bundle/run.sh` from the repository root.
# Usage: bash scripts/gpu-bundle.sh [python version, e.g. 3.12]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${1:-3.12}"
bash scripts/setup.sh >/dev/null
out=target/gpu-bundle
rm -rf "$out" && mkdir -p "$out"/{wheels,lib,bin,release}
version=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('apache-tvm-ffi'))")
.venv/bin/python -m pip download -q --only-binary=:all: --no-deps --python-version "$py" \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d "$out/wheels" \
  "apache-tvm-ffi==$version" jax-tvm-ffi
cargo build -q -p tvm-ffi-example-cuda -p tvm-ffi-example-rmsnorm -p tvm-ffi-example-kernels
for l in cuda rmsnorm kernels; do
  strip --strip-debug -o "$out/lib/libtvm_ffi_example_$l.so" "target/debug/libtvm_ffi_example_$l.so"
done
# The test binaries with a driver: the toolkit's and the CUDA example's.
{
  cargo test -q --no-run -p tvm-ffi-kernels --message-format=json
  cargo test -q --no-run -p tvm-ffi-tests --test cuda_example --message-format=json
} | .venv/bin/python -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])' | while read -r exe; do
  strip --strip-debug -o "$out/bin/$(basename "$exe" | sed 's/-[0-9a-f]*$//')" "$exe"
done
cargo build -q --release -p tvm-ffi-example-rmsnorm
strip --strip-debug -o "$out/release/libtvm_ffi_example_rmsnorm.so" target/release/libtvm_ffi_example_rmsnorm.so
c++ -std=c++17 -O2 examples/rmsnorm/bench/cuda_launch.cc -o "$out/release/rmsnorm_cuda_launch" -ldl
config=.venv/bin/tvm-ffi-config
c++ -std=c++17 -O2 -shared -fPIC examples/rmsnorm/bench/cpp_rmsnorm.cc $("$config" --cxxflags) \
  -L"$("$config" --libdir)" -ltvm_ffi -ldl -o "$out/release/librmsnorm_cpp.so"
cat >"$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root: bash target/gpu-bundle/run.sh
set -u
C="$(cd "$(dirname "$0")" && pwd)"
python3 -m pip install -q --no-index --no-deps --force-reinstall "$C"/wheels/*.whl 2>&1 | tail -2
export LD_LIBRARY_PATH="$(python3 -c "import tvm_ffi, os; print(os.path.join(os.path.dirname(tvm_ffi.__file__), 'lib'))")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, jax, numpy, tvm_ffi; print('torch', torch.__version__, 'jax', jax.__version__, 'numpy', numpy.__version__, 'tvm_ffi', tvm_ffi.__version__)"
echo "==> Rust tests with a driver"
for b in "$C"/bin/*; do echo "-- $(basename "$b")"; timeout 60 "$b" -q 2>&1 | tail -2; done
echo "==> pytest (CUDA, PyTorch, JAX)"
TVM_FFI_TARGET_DIR="$C/lib" timeout 240 python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python/test_cuda_example.py tests/python/test_rmsnorm.py \
  tests/python/test_rmsnorm_torch.py tests/python/test_rmsnorm_jax.py 2>&1 | tail -6
echo "==> compute-sanitizer memcheck (CUDA correctness tests)"
TVM_FFI_TARGET_DIR="$C/lib" timeout 120 compute-sanitizer --tool memcheck --print-limit 5 \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_rmsnorm_torch.py \
  tests/python/test_cuda_example.py -k "cuda and not compile and not opcheck" 2>&1 \
  | grep -E "ERROR SUMMARY|passed|failed" | tail -3
echo "==> benchmarks"
timeout 90 python3 examples/rmsnorm/bench/bench.py gpu --target-dir "$C/release" \
  --cpp "$C/release/rmsnorm_cuda_launch" --cpp-lib "$C/release/librmsnorm_cpp.so" 2>&1 | tail -9
for d in cpu cuda; do
  timeout 45 python3 examples/rmsnorm/bench/bench.py op-overhead --device $d --target-dir "$C/release" 2>&1 | tail -5
done
RUN
du -sh "$out"
