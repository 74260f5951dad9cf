"""The environment from Rust (`tvm_ffi::env`): per-device current streams set and read across
Python and Rust, and Ctrl-C interrupting a Rust loop that calls `check_signals`."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
import tvm_ffi


def f(name):
    return tvm_ffi.get_global_func(name)


CUDA0 = tvm_ffi.device("cuda:0")
CUDA1 = tvm_ffi.device("cuda:1")


def test_a_stream_set_in_python_is_seen_by_rust(kernels_lib):
    current = f("kernels.current_stream")
    assert current(CUDA0) == 0
    with tvm_ffi.use_raw_stream(CUDA0, 0x1234):
        assert current(CUDA0) == 0x1234
        # Per device: another id or another device type keeps its own stream.
        assert current(CUDA1) == 0
        assert current(tvm_ffi.device("rocm:0")) == 0
        with tvm_ffi.use_raw_stream(CUDA1, 0x5678):
            assert (current(CUDA0), current(CUDA1)) == (0x1234, 0x5678)
        assert current(CUDA1) == 0
        # Per thread: another thread sees the default stream.
        seen = []
        thread = threading.Thread(target=lambda: seen.append(current(CUDA0)))
        thread.start()
        thread.join()
        assert seen == [0]
    assert current(CUDA0) == 0


def test_a_stream_set_in_rust_is_seen_by_python_and_restored(kernels_lib):
    with_stream = f("kernels.with_stream")
    seen = with_stream(CUDA0, 0xABC0, lambda: (tvm_ffi.get_raw_stream(CUDA0), tvm_ffi.get_raw_stream(CUDA1)))
    assert tuple(seen) == (0xABC0, 0)
    assert tvm_ffi.get_raw_stream(CUDA0) == 0
    # Nested inside a Python scope: Rust restores the Python scope's stream, not the default.
    with tvm_ffi.use_raw_stream(CUDA0, 0x1000):
        inner = with_stream(CUDA0, 0x2000, lambda: f("kernels.current_stream")(CUDA0))
        assert inner == 0x2000
        assert tvm_ffi.get_raw_stream(CUDA0) == 0x1000
    # Restored when the callback raises, too.
    def boom():
        raise ValueError("from the callback")

    with pytest.raises(ValueError, match="from the callback"):
        with_stream(CUDA0, 0x3000, boom)
    assert tvm_ffi.get_raw_stream(CUDA0) == 0


def test_a_cpu_tensor_call_sets_no_stream(kernels_lib):
    import numpy as np

    with tvm_ffi.use_raw_stream(CUDA0, 0x1234):
        # tvm_ffi sets a stream per call only for GPU tensors; a CPU tensor's device has none.
        assert f("kernels.tensor_stream")(np.zeros(2, dtype="float32")) == 0


def test_ctrl_c_interrupts_a_rust_loop_with_keyboard_interrupt():
    # A child interpreter runs the loop; this process sends it SIGINT until it exits, so that
    # the test does not depend on when the loop begins (a loaded machine may take seconds).
    # The child's handler raises KeyboardInterrupt once, as the default one would, and ignores
    # the signals that follow (and those handled before the loop began).
    script = textwrap.dedent(
        """
        import os, signal, sys, tvm_ffi
        from conftest import kernels_lib_path
        tvm_ffi.load_module(kernels_lib_path())
        spin = tvm_ffi.get_global_func("kernels.spin")
        fired = []
        def started():
            print("started", flush=True)
        def once(signum, frame):
            # Raised once, and only in the Rust loop's signal check (whose Python frame is this
            # module's): a signal handled while `started` still runs is one of the next ones.
            if not fired and frame.f_code is not started.__code__:
                fired.append(signum)
                raise KeyboardInterrupt
        signal.signal(signal.SIGINT, once)
        try:
            n = spin(started, 60.0)
            print("finished", n, flush=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
        # Without the shutdown, which restores the default handler for the signals still coming.
        os._exit(0)
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), env.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout.readline() == "started\n"
        deadline = time.monotonic() + 120
        while child.poll() is None and time.monotonic() < deadline:
            child.send_signal(signal.SIGINT)
            time.sleep(0.1)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (out, child.returncode) == ("KeyboardInterrupt\n", 0), err


def test_check_signals_without_a_signal_lets_the_loop_finish(kernels_lib):
    calls = []
    n = f("kernels.spin")(lambda: calls.append(1), 0.05)
    assert calls == [1]
    assert n > 0
    with pytest.raises(ValueError) as err:
        f("kernels.spin")(lambda: None, float("nan"))
    assert str(err.value) == "`seconds` must be between 0 and 60, got NaN"


def test_torch_cuda_stream_is_the_stream_rust_sees(kernels_lib):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = torch.zeros(4, device="cuda:0")
    s = torch.cuda.Stream(device="cuda:0")
    with torch.cuda.stream(s):
        assert f("kernels.tensor_stream")(x) == s.cuda_stream
    assert f("kernels.tensor_stream")(x) == torch.cuda.current_stream(0).cuda_stream
