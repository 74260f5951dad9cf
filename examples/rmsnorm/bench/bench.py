"""RMSNorm benchmarks (PyTorch required; scripts/gpu-check.sh runs them on a GPU).

  python examples/rmsnorm/bench/bench.py op-overhead [--device cpu|cuda]
      Per-call cost of the custom op registered by tvm_ffi_kernels.torch.register against
      calling the Rust function directly, a hand-written direct registration
      (torch.library.Library define + impl, as vLLM and sglang write them) and a hand-written
      torch.library.custom_op wrapper, on 1 x 16 float32 tensors.
  python examples/rmsnorm/bench/bench.py gpu --cpp <cuda_launch executable> [--cpp-lib <lib>]
      The Rust library against a C++ program launching the same PTX kernel with no TVM-FFI in
      between: the kernel's time (4096 x 4096 bfloat16, back-to-back launches) and the launch
      overhead (1 x 128, synchronised per call), side by side, with their ratios. With
      --cpp-lib (librmsnorm_cpp.so built from cpp_rmsnorm.cc), also against the C++ TVM-FFI
      twin called from Python the same way: like for like, interleaved rounds.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import time

import torch
import tvm_ffi

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tvm-ffi-kernels" / "python"))
import tvm_ffi_kernels.torch as kernels_torch  # noqa: E402


def load(target_dir):
    tvm_ffi.load_module(str(pathlib.Path(target_dir) / "libtvm_ffi_example_rmsnorm.so"))


def per_call_us(fn, iterations, sync=lambda: None, rounds=5):
    """The best of `rounds` mean times per call (the least disturbed by other processes)."""
    for _ in range(max(10, iterations // 100)):
        fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(iterations // rounds):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / (iterations // rounds) * 1e6)
    return best


def op_overhead(device, iterations):
    direct = tvm_ffi.get_global_func("rmsnorm.rmsnorm")
    registered = kernels_torch.register("rmsnorm.rmsnorm", "rmsnorm_bench::rmsnorm")

    @torch.library.custom_op("rmsnorm_bench::by_hand", mutates_args=("out",))
    def by_hand(out: torch.Tensor, x: torch.Tensor, w: torch.Tensor, eps: float, pdl: bool) -> None:
        direct(out, x, w, eps, pdl)

    # What vLLM/sglang-style code writes by hand: a schema string and a Python impl.
    lib = torch.library.Library("rmsnorm_bench_direct", "FRAGMENT")
    lib.define("rmsnorm(Tensor(a!) out, Tensor x, Tensor w, float eps, bool pdl) -> ()")
    lib.impl("rmsnorm", lambda out, x, w, eps, pdl: direct(out, x, w, eps, pdl), "CPU")
    lib.impl("rmsnorm", lambda out, x, w, eps, pdl: direct(out, x, w, eps, pdl), "CUDA")
    by_hand_direct = torch.ops.rmsnorm_bench_direct.rmsnorm

    x = torch.randn(1, 16, device=device)
    w = torch.randn(16, device=device)
    out = torch.empty_like(x)
    rows = {
        "direct tvm_ffi call": per_call_us(lambda: direct(out, x, w, 1e-6, False), iterations),
        "tvm_ffi_kernels.torch.register op": per_call_us(
            lambda: registered(out, x, w, 1e-6, False), iterations
        ),
        "hand-written Library.define + impl": per_call_us(
            lambda: by_hand_direct(out, x, w, 1e-6, False), iterations
        ),
        "hand-written torch.library.custom_op": per_call_us(
            lambda: by_hand(out, x, w, 1e-6, False), iterations
        ),
    }
    print(f"per-call cost on {device}, 1 x 16 float32 ({iterations} calls):")
    for name, us in rows.items():
        print(f"  {name:40s} {us:8.2f} us")
    return rows


def gpu(cpp, iterations, cpp_lib=None):
    fn = tvm_ffi.get_global_func("rmsnorm.rmsnorm")
    x = torch.ones(4096, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    kernel_us = per_call_us(lambda: fn(out, x, w, 1e-6, False), iterations, torch.cuda.synchronize)
    xs, ws = x[:1, :128].contiguous(), w[:128].contiguous()
    outs = torch.empty_like(xs)

    def launch_and_sync():
        fn(outs, xs, ws, 1e-6, False)
        torch.cuda.synchronize()

    launch_us = per_call_us(launch_and_sync, iterations)
    ptx = ROOT / "examples" / "rmsnorm" / "kernels" / "rmsnorm.ptx"
    run = subprocess.run(
        [cpp, str(ptx), "4096", "4096", str(iterations)], capture_output=True, text=True, check=True
    )
    native = json.loads(run.stdout)
    print(f"RMSNorm bfloat16 on {torch.cuda.get_device_name()} ({iterations} launches):")
    print(f"  {'':34s} {'Rust via TVM-FFI':>18s} {'C++ driver API':>16s} {'ratio':>7s}")
    print(
        f"  {'kernel, 4096 x 4096 (us/call)':34s} {kernel_us:18.2f} {native['kernel_us']:16.2f} "
        f"{kernel_us / native['kernel_us']:7.3f}"
    )
    print(
        f"  {'launch + sync, 1 x 128 (us/call)':34s} {launch_us:18.2f} {native['launch_us']:16.2f} "
        f"{launch_us / native['launch_us']:7.3f}"
    )
    if cpp_lib:
        versus_cpp_library(fn, cpp_lib, ptx, iterations)


def versus_cpp_library(rust, cpp_lib, ptx, iterations):
    """Python -> Rust against Python -> the C++ TVM-FFI twin: the same kernel, the same
    caller; rounds alternate so that clock and cache drift hit both alike."""
    tvm_ffi.load_module(cpp_lib)
    tvm_ffi.get_global_func("rmsnorm_cpp.load_ptx")(str(ptx))
    cpp = tvm_ffi.get_global_func("rmsnorm_cpp.rmsnorm")
    rows = {}
    for label, shape, sync in [
        ("kernel, 4096 x 4096 (us/call)", (4096, 4096), False),
        ("launch + sync, 1 x 128 (us/call)", (1, 128), True),
        ("launch only, 1 x 128 (us/call)", (1, 128), False),
    ]:
        x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(shape[1], device="cuda", dtype=torch.bfloat16)
        out_rust, out_cpp = torch.empty_like(x), torch.empty_like(x)
        rust(out_rust, x, w, 1e-6, False)
        cpp(out_cpp, x, w, 1e-6, False)
        torch.cuda.synchronize()
        assert torch.equal(out_rust, out_cpp), "the Rust and C++ launches disagree"

        def call(f, out):
            if sync:
                return lambda: (f(out, x, w, 1e-6, False), torch.cuda.synchronize())
            return lambda: f(out, x, w, 1e-6, False)

        best = {"rust": float("inf"), "cpp": float("inf")}
        for _ in range(5):
            best["rust"] = min(best["rust"], per_call_us(call(rust, out_rust), iterations, torch.cuda.synchronize, 1))
            best["cpp"] = min(best["cpp"], per_call_us(call(cpp, out_cpp), iterations, torch.cuda.synchronize, 1))
        rows[label] = best
    print(f"RMSNorm bfloat16 from Python: Rust against the C++ TVM-FFI twin ({iterations} calls):")
    print(f"  {'':34s} {'Rust':>10s} {'C++':>10s} {'ratio':>7s}")
    for label, best in rows.items():
        print(f"  {label:34s} {best['rust']:10.2f} {best['cpp']:10.2f} {best['rust'] / best['cpp']:7.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["op-overhead", "gpu"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--cpp")
    parser.add_argument("--cpp-lib")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--target-dir", default=str(ROOT / "target" / "release"))
    args = parser.parse_args()
    load(args.target_dir)
    if args.what == "op-overhead":
        op_overhead(args.device, args.iterations)
    else:
        gpu(args.cpp, min(args.iterations, 2000), args.cpp_lib)


if __name__ == "__main__":
    main()
