"""`examples/rmsnorm`: FlashInfer's RMSNorm and fused add + RMSNorm ported to Rust, on the CPU
from NumPy (float32, float16, and bfloat16 made from bytes), against a NumPy reference computed
in float32; the arguments it refuses; the stateful runner with its caller-provided workspace;
the signature metadata the torch registration reads. The CUDA path is tested with PyTorch on a
GPU (test_rmsnorm_torch.py, scripts/gpu-check.sh)."""
import numpy as np
import pytest
import tvm_ffi
from conftest import _lib_path

SIZES = [(1, 1), (3, 7), (2, 4097), (5, 128)]
TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.fixture(scope="module")
def lib():
    return tvm_ffi.load_module(_lib_path("libtvm_ffi_example_rmsnorm.so"))


@pytest.fixture(scope="module")
def kernels():
    return tvm_ffi.load_module(_lib_path("libtvm_ffi_example_kernels.so"))


def f(name):
    return tvm_ffi.get_global_func(name)


def bf16_bits(x):
    """float32 -> bfloat16 bit patterns, rounded to nearest even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class Typed:
    """Makes tensors of one dtype from float32 arrays and reads them back as float32."""

    def __init__(self, dtype, kernels):
        self.dtype, self.kernels = dtype, kernels

    def round(self, x):
        if self.dtype == "bfloat16":
            return bf16_to_f32(bf16_bits(x))
        return np.asarray(x, dtype=np.float32).astype(self.dtype).astype(np.float32)

    def make(self, x):
        if self.dtype == "bfloat16":
            return f("kernels.tensor_from_bytes")(bf16_bits(x).tobytes(), list(x.shape), "bfloat16")
        return np.array(x, dtype=self.dtype, copy=True)  # never the caller's array itself

    def read(self, t):
        if self.dtype == "bfloat16":
            raw = np.frombuffer(f("kernels.raw_bytes")(t), dtype=np.uint16)
            return bf16_to_f32(raw).reshape(tuple(t.shape))
        if isinstance(t, tvm_ffi.Tensor):
            t = np.from_dlpack(t)
        return np.asarray(t, dtype=np.float32)


def reference(x, w, eps):
    x = x.astype(np.float32)
    inv = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32) + eps)
    return x * inv * w.astype(np.float32), inv[:, 0]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows,hidden", SIZES)
def test_rmsnorm_matches_the_reference(lib, kernels, dtype, rows, hidden):
    rng = np.random.default_rng(rows * 10007 + hidden)
    t = Typed(dtype, kernels)
    x = t.round(rng.standard_normal((rows, hidden)).astype(np.float32) * 3)
    w = t.round(rng.standard_normal(hidden).astype(np.float32))
    out = t.make(np.zeros((rows, hidden), np.float32))
    lib.rmsnorm(out, t.make(x), t.make(w), 1e-6, False)
    expected, _ = reference(x, w, 1e-6)
    np.testing.assert_allclose(t.read(out), t.round(expected), rtol=TOL[dtype], atol=TOL[dtype])
    # The allocating form gives the same values.
    fresh = f("rmsnorm.rmsnorm_new")(t.make(x), t.make(w), 1e-6)
    np.testing.assert_array_equal(t.read(fresh), t.read(out))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows,hidden", SIZES)
def test_fused_add_rmsnorm_updates_both_in_place(lib, kernels, dtype, rows, hidden):
    rng = np.random.default_rng(rows * 31 + hidden)
    t = Typed(dtype, kernels)
    x = t.round(rng.standard_normal((rows, hidden)).astype(np.float32))
    r = t.round(rng.standard_normal((rows, hidden)).astype(np.float32))
    w = t.round(rng.standard_normal(hidden).astype(np.float32))
    xt, rt = t.make(x), t.make(r)
    lib.fused_add_rmsnorm(xt, rt, t.make(w), 1e-5, False)
    summed = t.round(x + r)  # the residual is stored in the dtype before normalising
    expected, _ = reference(summed, w, 1e-5)
    np.testing.assert_array_equal(t.read(rt), summed)
    np.testing.assert_allclose(t.read(xt), t.round(expected), rtol=TOL[dtype], atol=TOL[dtype])


def test_row_strided_inputs_are_handled(lib):
    rng = np.random.default_rng(0)
    big = rng.standard_normal((4, 16)).astype(np.float32)
    x = big[:, :7]  # rows 16 elements apart, each contiguous
    w = rng.standard_normal(7).astype(np.float32)
    out_big = np.zeros((4, 10), np.float32)
    out = out_big[:, 2:9]
    lib.rmsnorm(out, x, w, 1e-6, False)
    np.testing.assert_allclose(out, reference(x, w, 1e-6)[0], rtol=1e-5)
    assert not out_big[:, :2].any() and not out_big[:, 9:].any()  # nothing written outside


def test_unsupported_arguments_are_refused_naming_the_argument(lib):
    x = np.ones((2, 4), np.float32)
    w = np.ones(4, np.float32)
    out = np.zeros((2, 4), np.float32)
    cases = [
        ((out, x.T.copy().T, w), ValueError, "`x` must have contiguous rows (stride 1 along the last axis), got strides [1, 2] for shape [2, 4]"),
        ((out, x.astype(np.float64), w), TypeError, "`out` must have dtype float64, got float32"),
        ((out.astype(np.float64), x.astype(np.float64), w.astype(np.float64)), TypeError, "`x` must have dtype float32, float16 or bfloat16, got float64"),
        ((out, x, np.ones(5, np.float32)), ValueError, "`weight` must have size 4 in dimension 0, got 5 (shape [5])"),
        ((out, x, w.astype(np.float16)), TypeError, "`weight` must have dtype float32, got float16"),
        ((out, np.ones(4, np.float32), w), ValueError, "`x` must have 2 dimensions, got 1 (shape [4])"),
        ((np.zeros((3, 4), np.float32), x, w), ValueError, "`out` must have shape [2, 4], got [3, 4]"),
        ((x, x, w), ValueError, "`out` must not overlap `x` in memory"),
        ((np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (2, 4), (0, 4)), x, w), ValueError, "`out` must have a row stride of at least 4 (rows it writes must not overlap), got strides [0, 1] for shape [2, 4]"),
    ]
    for args, kind, message in cases:
        with pytest.raises(kind) as err:
            lib.rmsnorm(*args, 1e-6, False)
        assert str(err.value) == message
    with pytest.raises(ValueError) as err:
        lib.rmsnorm(out, x, w, -1.0, False)
    assert str(err.value) == "`eps` must be finite and non-negative, got -1"
    with pytest.raises(ValueError) as err:
        lib.fused_add_rmsnorm(x, x, w, 1e-6, False)
    assert str(err.value) == "`residual` must not overlap `x` in memory"


def test_empty_inputs_do_nothing(lib):
    out = np.zeros((0, 8), np.float32)
    lib.rmsnorm(out, np.zeros((0, 8), np.float32), np.ones(8, np.float32), 1e-6, False)
    rows_of_nothing = np.zeros((3, 0), np.float32)
    lib.rmsnorm(rows_of_nothing, np.zeros((3, 0), np.float32), np.ones(0, np.float32), 1e-6, False)
    lib.fused_add_rmsnorm(np.zeros((3, 0), np.float32), np.zeros((3, 0), np.float32),
                          np.ones(0, np.float32), 1e-6, False)
    # NumPy 2.3+ exports an empty array with zero strides (found on the GPU machine's NumPy);
    # an empty operand addresses nothing, so its strides are not checked.
    zero_strided = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (0, 8), (0, 0))
    lib.rmsnorm(np.zeros((0, 8), np.float32), zero_strided, np.ones(8, np.float32), 1e-6, False)


@pytest.fixture(scope="module")
def Runner(lib):
    @tvm_ffi.register_object("rmsnorm.Runner")
    class Runner(tvm_ffi.Object):
        """The Rust runner: constructor, fields and methods come from its reflection."""

    return Runner


def test_runner_owns_a_caller_sized_workspace(Runner):
    rng = np.random.default_rng(3)
    w = rng.standard_normal(33).astype(np.float32)
    x = rng.standard_normal((5, 33)).astype(np.float32)
    runner = Runner(w, 1e-6)
    out = np.zeros_like(x)
    with pytest.raises(RuntimeError) as err:
        runner.run(out, x)
    assert "no workspace; call configure_workspace" in str(err.value)
    size = runner.get_workspace_size(5)
    assert size == 20
    runner.configure_workspace(np.zeros(size - 1, np.uint8))
    with pytest.raises(ValueError) as err:
        runner.run(out, x)
    assert str(err.value) == "Runner.run: the workspace has 19 bytes, 5 rows need 20"
    with pytest.raises(TypeError):
        runner.configure_workspace(np.zeros(size, np.float32))
    buffer = np.zeros(size, np.uint8)
    runner.configure_workspace(buffer)
    assert runner.workspace_size() == 20
    runner.run(out, x)
    expected, inv = reference(x, w, 1e-6)
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    np.testing.assert_allclose(np.from_dlpack(runner.inv_rms(5)), inv, rtol=1e-5)
    # The workspace is the caller's buffer: the runner wrote into it.
    np.testing.assert_allclose(buffer.view(np.float32), inv, rtol=1e-5)
    assert runner.eps == 1e-6


def test_signature_metadata_describes_the_torch_schema(lib):
    import sys
    import pathlib

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tvm-ffi-kernels" / "python"))
    from tvm_ffi_kernels import signature

    sig = signature.read("rmsnorm.rmsnorm")
    assert sig.torch_schema("rmsnorm") == (
        "rmsnorm(Tensor(a!) out, Tensor x, Tensor weight, float eps, bool enable_pdl) -> ()"
    )
    fused = signature.read("rmsnorm.fused_add_rmsnorm")
    assert fused.torch_schema("fused_add_rmsnorm") == (
        "fused_add_rmsnorm(Tensor(a!) x, Tensor(b!) residual, Tensor weight, float eps, "
        "bool enable_pdl) -> ()"
    )
    new = signature.read("rmsnorm.rmsnorm_new")
    assert new.torch_schema("rmsnorm_new") == "rmsnorm_new(Tensor x, Tensor weight, float eps) -> Tensor"
    assert new.returns_like == "x"
