"""`examples/rmsnorm` from PyTorch: on the CPU, the custom op that
`tvm_ffi_kernels.torch.register` makes from the Rust signature passes `torch.library.opcheck`
and runs under `torch.compile(fullgraph=True)`; on a GPU, the CUDA kernels (embedded PTX
launched through tvm-ffi-kernels) match a float32 reference on odd sizes, run on the caller's
stream, with programmatic dependent launch, thread-block clusters and more than 48 KiB of
dynamic shared memory, and inside CUDA graphs. Skipped without PyTorch (CI does not install
it: scripts/gpu-check.sh does) or without a GPU."""
import pathlib
import sys

import pytest
import tvm_ffi
from conftest import _lib_path

torch = pytest.importorskip("torch", reason="PyTorch is not installed (scripts/gpu-check.sh installs it)")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tvm-ffi-kernels" / "python"))
import tvm_ffi_kernels.torch as kernels_torch  # noqa: E402

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
SIZES = [(1, 1), (3, 7), (2, 4097), (5, 128)]


@pytest.fixture(scope="module")
def ops():
    tvm_ffi.load_module(_lib_path("libtvm_ffi_example_rmsnorm.so"))
    return {
        name: kernels_torch.register(f"rmsnorm.{name}")
        for name in ("rmsnorm", "fused_add_rmsnorm", "rmsnorm_new")
    }


def reference(x, w, eps):
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def devices():
    yield "cpu"
    if torch.cuda.is_available():
        yield "cuda"


@pytest.mark.parametrize("device", list(devices()))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,hidden", SIZES)
def test_ops_match_the_reference(ops, device, dtype, rows, hidden):
    g = torch.Generator().manual_seed(rows * 7 + hidden)
    x = torch.randn(rows, hidden, generator=g).to(device, dtype)
    w = torch.randn(hidden, generator=g).to(device, dtype)
    r = torch.randn(rows, hidden, generator=g).to(device, dtype)
    out = torch.empty_like(x)
    ops["rmsnorm"](out, x, w, 1e-6, False)
    torch.testing.assert_close(out, reference(x, w, 1e-6), rtol=TOL[dtype], atol=TOL[dtype])
    torch.testing.assert_close(ops["rmsnorm_new"](x, w, 1e-6), out, rtol=0, atol=0)
    xf, rf = x.clone(), r.clone()
    ops["fused_add_rmsnorm"](xf, rf, w, 1e-6, False)
    summed = x + r
    torch.testing.assert_close(rf, summed, rtol=0, atol=0)
    torch.testing.assert_close(xf, reference(summed, w, 1e-6), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("device", list(devices()))
def test_opcheck_passes(ops, device):
    x = torch.randn(4, 33, device=device)
    w = torch.randn(33, device=device)
    torch.library.opcheck(ops["rmsnorm"], (torch.empty_like(x), x, w, 1e-6, False))
    torch.library.opcheck(ops["fused_add_rmsnorm"], (x.clone(), x.clone() + 1, w, 1e-6, False))
    torch.library.opcheck(ops["rmsnorm_new"], (x, w, 1e-6))


@pytest.mark.parametrize("device", list(devices()))
def test_ops_run_under_torch_compile_fullgraph(ops, device):
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def block(x, residual, w):
        ops["fused_add_rmsnorm"](x, residual, w, 1e-6, False)
        out = torch.empty_like(x)
        ops["rmsnorm"](out, x * 2, w, 1e-6, False)
        return out + ops["rmsnorm_new"](residual, w, 1e-6)

    x = torch.randn(3, 64, device=device)
    r = torch.randn(3, 64, device=device)
    w = torch.randn(64, device=device)
    got = block(x.clone(), r.clone(), w)
    summed = x + r
    x2 = reference(summed, w, 1e-6)
    expected = reference(x2 * 2, w, 1e-6) + reference(summed, w, 1e-6)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


@pytest.fixture
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")


def test_cuda_kernels_run_on_the_callers_stream_and_in_graphs(ops, cuda):
    x = torch.randn(64, 4097, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(4097, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        ops["rmsnorm"](out, x, w, 1e-6, False)
    s.synchronize()
    torch.testing.assert_close(out, reference(x, w, 1e-6), rtol=1.6e-2, atol=1.6e-2)
    graph = torch.cuda.CUDAGraph()
    out.zero_()
    with torch.cuda.graph(graph):
        ops["rmsnorm"](out, x, w, 1e-6, False)
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, reference(x, w, 1e-6), rtol=1.6e-2, atol=1.6e-2)


def test_cuda_launch_attributes(cuda):
    """Programmatic dependent launch, clusters (sm_90+) and > 48 KiB of dynamic shared memory
    through `rmsnorm.rmsnorm_launch_options`."""
    tvm_ffi.load_module(_lib_path("libtvm_ffi_example_rmsnorm.so"))
    launch = tvm_ffi.get_global_func("rmsnorm.rmsnorm_launch_options")
    x = torch.randn(8, 1000, device="cuda")
    w = torch.randn(1000, device="cuda")
    expected = reference(x, w, 1e-6)
    major, _ = torch.cuda.get_device_capability()
    configs = [(1, False, 0), (1, False, 100 * 1024)]
    if major >= 9:
        configs += [(1, True, 0), (2, False, 0), (8, True, 64 * 1024)]
    for cluster, pdl, shared in configs:
        out = torch.zeros_like(x)
        launch(out, x, w, 1e-6, cluster, pdl, shared)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError) as err:
        launch(torch.zeros_like(x), x, w, 1e-6, 3, False, 0)
    assert "each grid extent must be a multiple of the cluster's" in str(err.value)


def test_cuda_launch_on_the_default_stream_is_caught(cuda):
    """The debug check: the launch's stream must be the framework's current stream."""
    tvm_ffi.load_module(_lib_path("libtvm_ffi_example_rmsnorm.so"))
    launch = tvm_ffi.get_global_func("rmsnorm.rmsnorm_on_default_stream")
    x = torch.randn(2, 32, device="cuda")
    w = torch.randn(32, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        with pytest.raises(ValueError) as err:
            launch(torch.empty_like(x), x, w, 1e-6)
    assert "not the launch's stream 0x0" in str(err.value)
