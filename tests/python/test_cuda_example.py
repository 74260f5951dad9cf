"""`examples/cuda`: a Rust library that launches a PTX kernel through the CUDA driver API on the
caller's stream. Without a GPU: its argument errors and the error without a driver; with
PyTorch and a GPU: results, the stream it runs on, CUDA-graph capture."""
import ctypes

import numpy as np
import pytest
import tvm_ffi
from conftest import _lib_path


@pytest.fixture(scope="module")
def cuda_lib():
    return tvm_ffi.load_module(_lib_path("libtvm_ffi_example_cuda.so"))


def f(name):
    return tvm_ffi.get_global_func(name)


def driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def test_cpu_arrays_are_refused_with_the_argument_named(cuda_lib):
    x = np.zeros(4, dtype="float32")
    with pytest.raises(ValueError) as err:
        f("cuda_example.add")(x, x, np.zeros(4, dtype="float32"))
    assert str(err.value) == "`x` must be a cuda tensor, got a tensor on cpu:0"
    with pytest.raises(ValueError) as err:
        cuda_lib.scale(x, 2.0)
    assert str(err.value) == "`x` must be a cuda tensor, got a tensor on cpu:0"


@pytest.mark.skipif(driver_present(), reason="a CUDA driver is installed")
def test_without_a_driver_the_error_says_so(cuda_lib):
    with pytest.raises(RuntimeError) as err:
        f("cuda_example.driver_version")()
    assert str(err.value).startswith(
        "cannot load the CUDA driver libcuda.so.1 (is an NVIDIA GPU driver installed?): "
    )


@pytest.fixture
def torch_cuda():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    return torch


def test_kernels_run_on_the_callers_stream(cuda_lib, torch_cuda):
    torch = torch_cuda
    assert f("cuda_example.driver_version")() > 0
    n = 1 << 20
    x = torch.arange(n, device="cuda", dtype=torch.float32)
    y = torch.full((n,), 0.5, device="cuda")
    out = torch.empty_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        f("cuda_example.add")(x, y, out)
        scaled = torch.from_dlpack(f("cuda_example.scale")(x, 3.0))
    s.synchronize()
    torch.testing.assert_close(out, x + 0.5)
    torch.testing.assert_close(scaled, x * 3.0)
    # Empty tensors launch nothing.
    e = torch.empty(0, device="cuda")
    f("cuda_example.add")(e, e.clone(), torch.empty(0, device="cuda"))
    with pytest.raises(TypeError) as err:
        f("cuda_example.add")(x.double(), y, out)
    assert str(err.value) == "`x` must have dtype float32, got float64"


def test_kernels_are_captured_by_cuda_graphs(cuda_lib, torch_cuda):
    # A launch on any stream but the capturing one would make the capture fail.
    torch = torch_cuda
    x = torch.zeros(4096, device="cuda")
    y = torch.zeros(4096, device="cuda")
    out = torch.zeros(4096, device="cuda")
    f("cuda_example.add")(x, y, out)  # loads the module outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        f("cuda_example.add")(x, y, out)
    x.fill_(1.0)
    y.fill_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert bool((out == 3.0).all())
