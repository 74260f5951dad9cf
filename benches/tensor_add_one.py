"""Tensor benchmark: `add_one` on 1,000,000 float32 from Python, Rust kernel against C++ kernel.

Usage (from anywhere, after `bash scripts/setup.sh`):

    .venv/bin/python benches/tensor_add_one.py [--size N] [--calls C] [--rounds R]

Builds the Rust kernel library `examples/kernels` in release (`cargo build --release -p
tvm-ffi-example-kernels`) and `benches/cpp/tensor_add_one.cc` (g++ -O3, against the wheel's
headers), loads both into this Python process, checks that they compute the same thing, then
times `add_one(x, y)` on NumPy arrays: rounds alternate between the two kernels (and which one
goes first), each round times C calls after a warm-up. Prints the best and the median time per
call and the ratio Rust/C++ (goal: at most 1.05). See benches/README.md.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOAL = 1.05


def run(cmd):
    print("==", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def config(flag):
    """A path from the wheel's tvm-ffi-config (next to this Python)."""
    exe = pathlib.Path(sys.executable).parent / "tvm-ffi-config"
    return subprocess.run([str(exe), flag], check=True, capture_output=True, text=True).stdout.strip()


def build(target_dir):
    run(["cargo", "build", "--release", "-p", "tvm-ffi-example-kernels"])
    rust_lib = target_dir / "release" / "libtvm_ffi_example_kernels.so"
    cpp_lib = target_dir / "bench-cpp" / "libtensor_add_one_cpp.so"
    cpp_lib.parent.mkdir(parents=True, exist_ok=True)
    libdir = config("--libdir")
    run([
        "g++", "-O3", "-std=c++17", "-shared", "-fPIC", "-Wall", "-Wextra",
        f"-I{config('--includedir')}", f"-I{config('--dlpack-includedir')}",
        ROOT / "benches" / "cpp" / "tensor_add_one.cc", "-o", cpp_lib,
        f"-L{libdir}", "-ltvm_ffi", f"-Wl,-rpath,{libdir}",
    ])
    return rust_lib, cpp_lib


def per_call_ns(fn, x, y, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn(x, y)
    return (time.perf_counter_ns() - start) / calls


def measure(kernels, size, calls, rounds):
    """Best and median ns per call of each kernel on `size` float32, rounds interleaved."""
    import numpy as np

    x = np.random.default_rng(0).random(size, dtype=np.float32)
    results = {name: [] for name in kernels}
    for name, fn in kernels.items():
        y = np.zeros_like(x)
        fn(x, y)
        np.testing.assert_array_equal(y, x + np.float32(1), err_msg=name)
        per_call_ns(fn, x, y, max(1, calls // 10))  # warm-up
    y = np.zeros_like(x)
    order = list(kernels)
    for r in range(rounds):
        for name in order if r % 2 == 0 else reversed(order):
            results[name].append(per_call_ns(kernels[name], x, y, calls))
    return {name: (min(ts), statistics.median(ts)) for name, ts in results.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="float32 elements (1000000)")
    parser.add_argument("--calls", type=int, default=200, help="calls per timed round (200)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds per kernel (10)")
    args = parser.parse_args()
    try:
        import numpy  # noqa: F401
        import tvm_ffi
    except ImportError as err:
        sys.exit(f"error: {err}. Run `bash scripts/setup.sh` and use .venv/bin/python.")

    target_dir = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    rust_lib, cpp_lib = build(target_dir)
    tvm_ffi.load_module(str(rust_lib))
    tvm_ffi.load_module(str(cpp_lib))
    kernels = {
        "C++": tvm_ffi.get_global_func("kernels_cpp.add_one"),
        "Rust": tvm_ffi.get_global_func("kernels.add_one"),
    }
    rows = [
        (f"add_one {args.size} float32", measure(kernels, args.size, args.calls, args.rounds)),
        # The fixed cost of a call from Python (argument conversion through DLPack included).
        ("add_one 1 float32 (call cost)", measure(kernels, 1, args.calls * 50, args.rounds)),
    ]
    load = " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])
    print()
    print(f"{args.rounds} interleaved rounds x {args.calls} calls ({os.cpu_count()} CPUs, "
          f"load average {load}); microseconds per call")
    print(f"{'operation':<32} {'C++ best':>9} {'Rust best':>9} {'ratio':>6}   "
          f"{'C++ med':>9} {'Rust med':>9} {'ratio':>6}   goal")
    for label, m in rows:
        (cb, cm), (rb, rm) = m["C++"], m["Rust"]
        goal = ""
        if label.startswith(f"add_one {args.size} "):
            goal = f"<= {GOAL} ({'met' if rb / cb <= GOAL else 'NOT met'})"
        print(f"{label:<32} {cb / 1e3:9.2f} {rb / 1e3:9.2f} {rb / cb:6.3f}   "
              f"{cm / 1e3:9.2f} {rm / 1e3:9.2f} {rm / cm:6.3f}   {goal}")


if __name__ == "__main__":
    main()
