"""Tensors between NumPy and the Rust kernel library `examples/kernels`: no copies in either
direction, the documented errors, and memory released when the last holder lets go."""
import gc
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import tvm_ffi
from conftest import kernels_lib_path


def f(name):
    return tvm_ffi.get_global_func(name)


def live_buffers():
    """Rust-allocated tensor buffers of the kernels library still alive (in any language)."""
    gc.collect()
    return f("kernels.live_buffers")()


def test_add_one_writes_into_the_callers_array(kernels_lib):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    y = np.zeros_like(x)
    y_address = y.ctypes.data
    assert f("kernels.add_one")(x, y) is None
    np.testing.assert_array_equal(y, x + 1)
    # The kernel saw the caller's memory: no copy on the way in.
    assert y.ctypes.data == y_address
    assert f("kernels.data_address")(x) == x.ctypes.data
    assert f("kernels.data_address")(y) == y_address
    # An offset view is passed as is, too.
    tail = x[1:]
    assert f("kernels.data_address")(tail) == tail.ctypes.data


def test_tvm_ffi_tensors_are_accepted_as_views(kernels_lib):
    x = np.ones(5, dtype="float32")
    y = np.zeros(5, dtype="float32")
    f("kernels.add_one")(tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y))
    np.testing.assert_array_equal(y, np.full(5, 2, dtype="float32"))


def test_reduction_returns_a_scalar(kernels_lib):
    x = np.arange(1, 101, dtype="float32")
    assert f("kernels.sum")(x) == 5050.0
    assert f("kernels.sum")(np.zeros((0, 3), dtype="float32")) == 0.0
    assert f("kernels.sum_all")([x, np.ones((2, 2), dtype="float32")]) == 5054.0


def test_results_come_back_through_from_dlpack(kernels_lib):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    t = f("kernels.scale")(x, 2.5)
    assert isinstance(t, tvm_ffi.Tensor)
    assert t.shape == (2, 3)
    assert t.dtype == "float32"
    out = np.from_dlpack(t)
    assert out.shape == (2, 3) and out.dtype == np.float32
    np.testing.assert_array_equal(out, x * 2.5)
    # numpy reads the tensor's memory (no copy on the way out either).
    assert out.ctypes.data == t.data_ptr()
    r = np.from_dlpack(f("kernels.arange")(5))
    np.testing.assert_array_equal(r, np.arange(5, dtype="float32"))


def test_documented_errors(kernels_lib):
    x = np.arange(6, dtype="float32")
    y = np.zeros(6, dtype="float32")
    add_one = f("kernels.add_one")
    with pytest.raises(TypeError) as err:
        add_one(x.astype("float64"), y)
    assert str(err.value) == (
        "`x` must be a contiguous CPU tensor of dtype float32, got float64 on cpu:0"
    )
    with pytest.raises(ValueError) as err:
        add_one(x[::2], y[:3])
    assert str(err.value) == (
        "`x` must be a contiguous CPU tensor of dtype float32, "
        "got non-contiguous float32 on cpu:0 (shape [3], strides [2])"
    )
    with pytest.raises(ValueError) as err:
        add_one(x[:3], y[::2])
    assert str(err.value) == (
        "`y` must be a contiguous CPU tensor of dtype float32, "
        "got non-contiguous float32 on cpu:0 (shape [3], strides [2])"
    )
    with pytest.raises(ValueError) as err:
        add_one(x, y[:4])
    assert str(err.value) == "`y` must have shape [6], got [4]"
    with pytest.raises(ValueError) as err:
        add_one(x, x)
    assert str(err.value) == "`y` must not overlap `x` in memory"
    with pytest.raises(TypeError) as err:
        add_one(x, 1)
    assert str(err.value) == (
        "Mismatched type on argument #1 when calling: "
        "`kernels.add_one(0: DLTensor*, 1: DLTensor*) -> void`. Expected `DLTensor*` but got `int`"
    )
    with pytest.raises(TypeError) as err:
        f("kernels.sum_all")([x, np.ones(2)])
    assert str(err.value) == (
        "`xs[1]` must be a contiguous CPU tensor of dtype float32, got float64 on cpu:0"
    )
    # Nothing was written by the failed calls.
    np.testing.assert_array_equal(y, np.zeros(6, dtype="float32"))


def test_type_schema_names_tensors_as_cpp_does(kernels_lib):
    meta = tvm_ffi.get_global_func_metadata("kernels.add_one")
    assert meta["type_schema"] == (
        '{"type":"ffi.Function","named_args":{"return":[{"type":"None"}],'
        '"params":[{"type":"DLTensor*"},{"type":"DLTensor*"}]}}'
    )
    # The same schema as a C++ `void f(TensorView)`.
    cpp = tvm_ffi.get_global_func_metadata("testing.schema_tensor_view_input")
    assert '"params":[{"type":"DLTensor*"}]' in cpp["type_schema"]
    meta = tvm_ffi.get_global_func_metadata("kernels.scale")
    assert '"return":[{"type":"ffi.Tensor"}]' in meta["type_schema"]


def test_arguments_hold_no_reference_after_the_call(kernels_lib):
    x = np.ones(8, dtype="float32")
    y = np.zeros(8, dtype="float32")
    before = (sys.getrefcount(x), sys.getrefcount(y))
    for _ in range(100):
        f("kernels.add_one")(x, y)
        f("kernels.sum")(x)
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(y)) == before


def test_rust_buffers_are_freed_by_the_last_holder(kernels_lib):
    x = np.arange(4, dtype="float32")
    base = live_buffers()
    t = f("kernels.scale")(x, 3.0)
    assert live_buffers() == base + 1
    assert f("testing.object_use_count")(t) == 1
    out = np.from_dlpack(t)
    del t
    # numpy's array keeps the Rust buffer alive through DLPack.
    assert live_buffers() == base + 1
    np.testing.assert_array_equal(out, x * 3)
    del out
    assert live_buffers() == base
    for _ in range(50):
        np.from_dlpack(f("kernels.arange")(16)).sum()
    assert live_buffers() == base


def test_tensor_fields_share_the_callers_array(kernels_lib):
    @tvm_ffi.register_object("kernels.Bias")
    class Bias(tvm_ffi.Object):
        pass

    values = np.array([1.0, 2.0, 3.0], dtype="float32")
    before = sys.getrefcount(values)
    bias = Bias(values)
    # The object keeps the array alive through the tensor it stores.
    assert sys.getrefcount(values) == before + 1
    assert np.from_dlpack(bias.values).ctypes.data == values.ctypes.data
    out = np.zeros(3, dtype="float32")
    bias.apply(np.ones(3, dtype="float32"), out)
    np.testing.assert_array_equal(out, [2.0, 3.0, 4.0])
    values[0] = 10.0  # the object sees the caller's memory
    bias.apply(np.ones(3, dtype="float32"), out)
    assert out[0] == 11.0
    with pytest.raises(ValueError) as err:
        bias.apply(np.ones(3, dtype="float32"), values)
    assert str(err.value) == "`y` must not overlap `values` in memory"
    with pytest.raises(ValueError) as err:
        Bias(np.ones((2, 2), dtype="float32"))
    assert str(err.value) == "`values` must have 1 dimension, got 2 (shape [2, 2])"
    del bias
    gc.collect()
    assert sys.getrefcount(values) == before


def test_stubgen_types_tensor_parameters_and_fields(tmp_path: pathlib.Path):
    stubgen = pathlib.Path(sys.executable).with_name("tvm-ffi-stubgen")
    subprocess.run(
        [str(stubgen), "--dlls", kernels_lib_path(), "--init-pypkg", "kernels",
         "--init-lib", "tvm_ffi_example_kernels", "--init-prefix", "kernels.", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    api = (tmp_path / "kernels" / "_ffi_api.py").read_text()
    for line in [
        "def add_one(_0: Tensor, _1: Tensor, /) -> None: ...",
        "def scale(_0: Tensor, _1: float, /) -> Tensor: ...",
        "def sum_all(_0: Sequence[Tensor], /) -> float: ...",
        "values: Tensor",
    ]:
        assert line in api, line


def test_kernels_as_module_exports(kernels_lib):
    # The kernel-library pattern: the same functions through `load_module(...).<export>`.
    x = np.arange(6, dtype="float32")
    y = np.zeros_like(x)
    kernels_lib.add_one(x, y)
    np.testing.assert_array_equal(y, x + 1)
    assert kernels_lib.sum(x) == 15.0
    scaled = np.from_dlpack(kernels_lib.scale(x, 3.0))
    np.testing.assert_array_equal(scaled, x * 3)
    with pytest.raises(TypeError) as info:
        kernels_lib.add_one(x.astype("float64"), y)
    assert "`x`" in str(info.value) and "float32" in str(info.value)
