"""`examples/rmsnorm` from JAX through jax-tvm-ffi: the Rust function registered as an XLA FFI
target runs under `jax.jit` on float32, float16 and bfloat16 arrays of odd sizes and matches a
float32 reference, on the CPU (in CI) and, where JAX sees a CUDA device, on the GPU (the same
registration with platform="gpu": the CUDA kernels launched on XLA's stream; run by
scripts/gpu-check.sh)."""
import numpy as np
import pytest
import tvm_ffi
from conftest import _lib_path

jax = pytest.importorskip("jax", reason="JAX is not installed")
jax_tvm_ffi = pytest.importorskip("jax_tvm_ffi", reason="jax-tvm-ffi is not installed")
jnp = jax.numpy

TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def gpu_devices():
    try:
        return jax.devices("gpu")
    except RuntimeError:  # no GPU backend
        return []


# "gpu" only where JAX has a CUDA device: CI's JAX is CPU-only.
PLATFORMS = ["cpu"] + (["gpu"] if gpu_devices() else [])


@pytest.fixture(scope="module")
def registered():
    tvm_ffi.load_module(_lib_path("libtvm_ffi_example_rmsnorm.so"))
    # rmsnorm(out, x, weight, eps, enable_pdl): XLA allocates `out` (the result), passed first.
    for platform in PLATFORMS:
        jax_tvm_ffi.register_ffi_target(
            "rmsnorm.rmsnorm",
            tvm_ffi.get_global_func("rmsnorm.rmsnorm"),
            arg_spec=["rets", "args", "attrs.eps", "attrs.enable_pdl"],
            platform=platform,
        )


@pytest.fixture(params=PLATFORMS)
def rmsnorm(registered, request):
    """The op, with arrays placed on the platform's first device."""
    device = jax.devices(request.param)[0]

    def call(x, weight, eps):
        return jax.ffi.ffi_call("rmsnorm.rmsnorm", jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, weight, eps=np.float32(eps), enable_pdl=False
        )

    with jax.default_device(device):
        yield call


def reference(x, w, eps):
    x32 = x.astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + eps)
    return (x32 * inv * w.astype(jnp.float32)).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows,hidden", [(1, 1), (3, 7), (2, 4097)])
def test_rmsnorm_runs_under_jit(rmsnorm, dtype, rows, hidden):
    key = jax.random.PRNGKey(rows + hidden)
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (rows, hidden), jnp.float32).astype(dtype)
    w = jax.random.normal(kw, (hidden,), jnp.float32).astype(dtype)
    jitted = jax.jit(lambda x, w: rmsnorm(x, w, 1e-6) * 2)
    got = np.asarray(jitted(x, w).astype(jnp.float32))
    expected = np.asarray((reference(x, w, 1e-6) * 2).astype(jnp.float32))
    np.testing.assert_allclose(got, expected, rtol=TOL[dtype], atol=TOL[dtype] * 2)


def test_errors_surface_as_python_exceptions(rmsnorm):
    x = jnp.ones((2, 4), jnp.float32)
    with pytest.raises(Exception) as err:
        jax.block_until_ready(rmsnorm(x, jnp.ones(5, jnp.float32), 1e-6))
    assert "`weight` must have size 4 in dimension 0, got 5 (shape [5])" in str(err.value)
