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
        "Mismatched type on argument #1 (`y`) when calling: "
        "`kernels.add_one(x: DLTensor*, y: DLTensor*) -> void`. Expected `DLTensor*` but got `int`"
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


def test_float16_and_bfloat16_through_the_half_crate(kernels_lib):
    x = np.array([[0.5, -2.0, 65504.0], [1e-3, 3.140625, 0.0]], dtype="float16")
    out = np.from_dlpack(f("kernels.to_float32")(x))
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, x.astype("float32"))
    # Rust rounds float32 to float16 exactly as NumPy does.
    values = np.array([0.1, 1.0 / 3.0, 70000.0, -1e-8, 2.5], dtype="float32")
    halves = f("kernels.from_float32")(values, "float16")
    assert halves.dtype == "float16"
    with np.errstate(over="ignore"):  # 70000 is past float16's range: inf, in both
        expected_halves = values.astype("float16")
    np.testing.assert_array_equal(np.from_dlpack(halves), expected_halves)
    # bfloat16 (NumPy has no such dtype): round trip through Rust, compared bit for bit with
    # round-to-nearest-even on the upper 16 bits of the float32.
    b = f("kernels.from_float32")(values, "bfloat16")
    assert b.dtype == "bfloat16" and b.shape == (5,)
    bits = np.frombuffer(f("kernels.raw_bytes")(b), dtype="<u2")
    u = values.view("<u4").astype("uint64")
    expected = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")
    np.testing.assert_array_equal(bits, expected)
    back = np.from_dlpack(f("kernels.to_float32")(b))
    np.testing.assert_array_equal(back.view("<u4"), expected.astype("<u4") << 16)


def test_half_dtype_errors(kernels_lib):
    with pytest.raises(TypeError) as err:
        f("kernels.to_float32")(np.zeros(3, dtype="float32"))
    assert str(err.value) == "`x` must have dtype float16 or bfloat16, got float32"
    with pytest.raises(TypeError) as err:
        f("kernels.from_float32")(np.zeros(3, dtype="float32"), "int8")
    assert str(err.value) == "`dtype` must be float16 or bfloat16, got int8"
    with pytest.raises(ValueError) as err:
        f("kernels.to_float32")(np.zeros(4, dtype="float16")[::2])
    assert str(err.value) == (
        "`x` must be a contiguous CPU tensor of dtype float16, "
        "got non-contiguous float16 on cpu:0 (shape [2], strides [2])"
    )


@pytest.mark.parametrize(
    "dtype, shape, nbytes",
    [
        ("float8_e4m3fn", (2, 3), 6),
        ("float8_e5m2", (4,), 4),
        ("float8_e8m0fnu", (1,), 1),
        ("float4_e2m1fn", (5,), 3),
        ("int4", (2, 3), 3),
        ("uint4", (3,), 2),
        ("float6_e2m3fn", (4,), 3),
        ("int1", (9,), 2),
    ],
)
def test_fp8_and_sub_byte_tensors_are_bytes_with_their_dtype(kernels_lib, dtype, shape, nbytes):
    data = bytes(range(0x31, 0x31 + nbytes))
    t = f("kernels.tensor_from_bytes")(data, list(shape), dtype)
    assert isinstance(t, tvm_ffi.Tensor)
    assert t.dtype == dtype and t.shape == shape
    assert f("kernels.raw_bytes")(t) == data
    # Typed access is refused: there is no Rust element type for these.
    with pytest.raises(TypeError) as err:
        f("kernels.to_float32")(t)
    assert str(err.value) == f"`x` must have dtype float16 or bfloat16, got {dtype}"
    with pytest.raises(TypeError) as err:
        f("kernels.sum")(t)
    assert str(err.value) == (
        f"`x` must be a contiguous CPU tensor of dtype float32, got {dtype} on cpu:0"
    )
    # The byte size is the packed size: one byte more or less is an error.
    with pytest.raises(ValueError) as err:
        f("kernels.tensor_from_bytes")(data + b"\0", list(shape), dtype)
    assert str(err.value) == (
        f"Tensor::from_bytes: shape {list(shape)} of {dtype} has {nbytes} bytes, "
        f"the data has {nbytes + 1}"
    )


def test_fp8_bytes_of_a_numpy_array_relabelled_by_dlpack(kernels_lib):
    # NumPy has no fp8 dtype: the same bytes as uint8 read back unchanged through `as_bytes`.
    raw = np.array([0x38, 0x40, 0xB8, 0x7E], dtype="uint8")
    assert f("kernels.raw_bytes")(raw) == raw.tobytes()
    # e4m3fn: 1.0, 2.0, -1.0, 448.0 (the largest finite value) as Rust made them.
    t = f("kernels.tensor_from_bytes")(raw.tobytes(), [4], "float8_e4m3fn")
    assert str(t.dtype) == "float8_e4m3fn"
    assert f("kernels.raw_bytes")(t) == bytes([0x38, 0x40, 0xB8, 0x7E])


def test_views_share_memory_without_copies(kernels_lib):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    t = f("kernels.transpose")(x)
    assert t.shape == (4, 3)
    tt = np.from_dlpack(t)
    np.testing.assert_array_equal(tt, x.T)
    assert tt.ctypes.data == x.ctypes.data and tt.strides == (4, 16)
    x[0, 1] = 100.0  # the view sees the caller's memory
    assert tt[1, 0] == 100.0
    rows = np.from_dlpack(f("kernels.rows")(x, 1, 2))
    np.testing.assert_array_equal(rows, x[1:3])
    assert rows.ctypes.data == x[1:].ctypes.data
    column = np.from_dlpack(f("kernels.as_strided")(x, [3], [4], 2))
    np.testing.assert_array_equal(column, x[:, 2])
    # Reversed with a negative stride.
    rev = np.from_dlpack(f("kernels.as_strided")(x, [4], [-1], 3))
    np.testing.assert_array_equal(rev, x[0, ::-1])
    # A view of a view: offsets count from the view's first element, bounds are the view's.
    right = f("kernels.as_strided")(x, [3, 2], [4, 1], 2)  # x[:, 2:]
    np.testing.assert_array_equal(np.from_dlpack(f("kernels.transpose")(right)), x[:, 2:].T)
    np.testing.assert_array_equal(np.from_dlpack(f("kernels.as_strided")(right, [3], [4], 1)), x[:, 3])
    with pytest.raises(ValueError) as err:
        f("kernels.as_strided")(right, [3], [4], 2)
    assert str(err.value) == (
        "Tensor::as_strided: the view (shape [3], strides [4], element offset 2) "
        "reaches elements 2..=10 of a tensor whose elements are 0..=9"
    )
    # A view keeps its source alive.
    view = f("kernels.transpose")(np.ones((2, 2), dtype="float32") * 7)
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(view), np.full((2, 2), 7, dtype="float32"))


def test_view_errors(kernels_lib):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    as_strided = f("kernels.as_strided")
    with pytest.raises(ValueError) as err:
        as_strided(x, [3, 4], [4, 1], 1)
    assert str(err.value) == (
        "Tensor::as_strided: the view (shape [3, 4], strides [4, 1], element offset 1) "
        "reaches elements 1..=12 of a tensor whose elements are 0..=11"
    )
    with pytest.raises(ValueError) as err:
        as_strided(x, [2], [1], -1)
    assert str(err.value) == (
        "Tensor::as_strided: the view (shape [2], strides [1], element offset -1) "
        "reaches elements -1..=0 of a tensor whose elements are 0..=11"
    )
    with pytest.raises(ValueError) as err:
        as_strided(x, [2, 2], [1], 0)
    assert str(err.value) == (
        "Tensor::as_strided: shape [2, 2] has 2 dimensions but strides [1] has 1"
    )
    with pytest.raises(ValueError) as err:
        as_strided(x, [-1], [1], 0)
    assert str(err.value) == (
        "Tensor::as_strided: the view (shape [-1], strides [1], element offset 0) has an "
        "invalid shape or overflows"
    )
    with pytest.raises(ValueError) as err:
        as_strided(x, [2, 2], [2**62, 2**62], 0)
    assert "reaches elements 0..=" in str(err.value)
    with pytest.raises(IndexError) as err:
        f("kernels.rows")(x, 2, 2)
    assert str(err.value) == (
        "Tensor::narrow: elements 2..4 of dimension 0 are out of range for extent 3"
    )
    with pytest.raises(ValueError) as err:
        f("kernels.transpose")(np.zeros(3, dtype="float32"))
    assert str(err.value) == "`x` must have 2 dimensions, got 1 (shape [3])"
    packed = f("kernels.tensor_from_bytes")(b"\x12\x34", [4], "int4")
    with pytest.raises(ValueError) as err:
        as_strided(packed, [2], [1], 1)
    assert str(err.value) == (
        "Tensor::as_strided: views of int4 are not supported: its elements do not start at "
        "byte boundaries"
    )
