#!/usr/bin/env bash
# The checks that need an NVIDIA GPU and PyTorch, which CI has neither of: run on a GPU machine
# (a driver installed; no CUDA toolkit needed). Installs PyTorch (a 3 GB CUDA build) into the
# project's .venv, then:
#   1. every CUDA test: tests/python/test_cuda_example.py, test_rmsnorm_torch.py (RMSNorm and
#      fused add + RMSNorm against a float32 reference on odd sizes, the caller's stream, CUDA
#      graphs, PDL / cluster / >48 KiB shared-memory launches, the debug stream check, the
#      torch.library op under opcheck and torch.compile(fullgraph=True) on CPU and CUDA), the
#      JAX test, and the toolkit's Rust tests (which launch for real when a driver exists);
#   2. the speed comparison against a C++ program launching the same PTX kernel, and against
#      the C++ TVM-FFI twin library (bench/cpp_rmsnorm.cc) called from Python (release build);
#   3. the per-call cost of the registered torch op against the direct call, on CPU and CUDA.
# Record the figures and the GPU in examples/rmsnorm/README.md's benchmark table.
# On a GPU machine without cargo or network (this project's lent device machines), build the
# same checks here with scripts/gpu-bundle.sh and run target/gpu-bundle/run.sh there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  echo "==> installing PyTorch into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q torch
fi
.venv/bin/python -c "import torch; assert torch.cuda.is_available(), 'PyTorch sees no CUDA device'"
echo "==> GPU: $(.venv/bin/python -c 'import torch; print(torch.cuda.get_device_name())')"
echo "==> cargo test (toolkit and CUDA example, with a driver)"
cargo test -q -p tvm-ffi-kernels -p tvm-ffi-tests --test cuda_example
echo "==> pytest (CUDA, PyTorch, JAX)"
.venv/bin/python -m pytest -q -rs tests/python/test_cuda_example.py tests/python/test_rmsnorm.py \
  tests/python/test_rmsnorm_torch.py tests/python/test_rmsnorm_jax.py
echo "==> benchmarks (release build)"
cargo build -q --release -p tvm-ffi-example-rmsnorm
c++ -std=c++17 -O2 examples/rmsnorm/bench/cuda_launch.cc -o target/release/rmsnorm_cuda_launch -ldl
config=.venv/bin/tvm-ffi-config
c++ -std=c++17 -O2 -shared -fPIC examples/rmsnorm/bench/cpp_rmsnorm.cc $("$config" --cxxflags) \
  -L"$("$config" --libdir)" -ltvm_ffi -ldl -o target/release/librmsnorm_cpp.so
.venv/bin/python examples/rmsnorm/bench/bench.py gpu --cpp target/release/rmsnorm_cuda_launch \
  --cpp-lib target/release/librmsnorm_cpp.so
.venv/bin/python examples/rmsnorm/bench/bench.py op-overhead --device cpu
.venv/bin/python examples/rmsnorm/bench/bench.py op-overhead --device cuda
