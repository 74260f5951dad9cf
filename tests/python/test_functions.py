"""Rust functions registered at load time, called from Python through the real runtime."""
import gc

import pytest
import tvm_ffi


def f(name):
    return tvm_ffi.get_global_func(name)


def test_registered_at_load_with_typed_arguments(example_lib):
    assert f("my_ext.add")(40, 2) == 42
    assert f("my_ext.greet")("bob") == "hello, bob"
    long_name = "a name longer than eight bytes"
    assert f("my_ext.greet")(long_name) == "hello, " + long_name
    assert f("my_ext.sum")([1, 2, 3, 4]) == 10
    assert f("my_ext.sum")(tvm_ffi.convert([5, 6])) == 11
    assert f("my_ext.map_total")({"a": 1, "a key longer than 8": 2}) == 3


def test_objects_keep_their_identity(example_lib):
    arr = tvm_ffi.convert([1, 2, 3])
    back = f("my_ext.identity")(arr)
    assert back.same_as(arr)
    assert list(back) == [1, 2, 3]


def test_metadata_and_doc_are_registered(example_lib):
    meta = tvm_ffi.get_global_func_metadata("my_ext.add")
    assert meta["type_schema"] == (
        '{"type":"ffi.Function","named_args":{"return":[{"type":"int"}],'
        '"params":[{"type":"int"},{"type":"int"}]}}'
    )
    meta = tvm_ffi.get_global_func_metadata("my_ext.parse")
    assert '"params":[{"type":"ffi.String"}]' in meta["type_schema"]


def test_argument_errors_use_cpp_wording(example_lib):
    add = f("my_ext.add")
    with pytest.raises(TypeError) as e:
        add(1)
    assert str(e.value) == (
        "Mismatched number of arguments when calling: `my_ext.add(a: int, b: int) -> int`. "
        "Expected 2 but got 1 arguments"
    )
    with pytest.raises(TypeError) as e:
        add(1, "x")
    assert str(e.value) == (
        "Mismatched type on argument #1 (`b`) when calling: `my_ext.add(a: int, b: int) -> int`. "
        "Expected `int` but got `ffi.SmallStr`"
    )
    with pytest.raises(TypeError) as e:
        f("my_ext.narrow")(2**40)
    assert "Expected `int` but got `int` (value 1099511627776 is out of range for `i32`)" in str(e.value)
    assert f("my_ext.narrow")(-(2**31)) == -(2**31)


def test_rust_errors_become_python_exceptions(example_lib):
    with pytest.raises(ValueError, match="invalid digit"):
        f("my_ext.parse")("12x")
    assert f("my_ext.parse")(" 12 ") == 12


def test_panic_is_a_runtime_error_and_the_process_survives(example_lib):
    div = f("my_ext.checked_div")
    with pytest.raises(RuntimeError) as e:
        div(1, 0)
    msg = str(e.value)
    assert msg.startswith("Rust panic in `my_ext.checked_div` at ")
    assert "examples/point/src/lib.rs" in msg
    assert msg.endswith("division by zero in checked_div")
    assert div(7, 2) == 3


def test_python_callbacks_and_their_exceptions(example_lib):
    assert f("my_ext.apply_twice")(lambda x: x * 3, 2) == 18

    def raises_key_error(x):
        raise KeyError("missing")

    with pytest.raises(KeyError):
        f("my_ext.apply_twice")(raises_key_error, 1)

    def raises_value_error():
        raise ValueError("from python")

    assert f("my_ext.describe_error")(raises_value_error) == "ValueError: from python"
    assert f("my_ext.describe_error")(lambda: 1) == "ok"


def test_rust_closure_is_callable_through_cpp_apply(example_lib):
    apply = f("testing.apply")
    assert apply(f("my_ext.add"), 1, 2) == 3
    assert apply(f("my_ext.greet"), "c") == "hello, c"


def test_repeated_calls_do_not_leak_functions(example_lib):
    add = f("my_ext.add")
    gc.collect()
    for _ in range(1000):
        add(1, 2)
    assert tvm_ffi.get_global_func("testing.object_use_count")(add) >= 1
