"""Module exports (`#[ffi_func(export = ...)]`) through `tvm_ffi.load_module`, and packed
(variadic) functions, against the real runtime.

The expected texts are what C++ `TVM_FFI_DLL_EXPORT_TYPED_FUNC` produces for the same
signature: errors name the export (not a global name), and the metadata has C++'s form.
"""
import pytest
import tvm_ffi

ADD_ONE_SCHEMA = (
    '{"type":"ffi.Function","named_args":{"return":[{"type":"int"}],"params":[{"type":"int"}]}}'
)


def test_export_is_callable_through_load_module(example_lib):
    assert example_lib.add_one(1) == 2
    assert example_lib.add_one(-(2**63) + 1) == -(2**63) + 2
    # A bool converts to int, as for C++ typed functions.
    assert example_lib.add_one(True) == 2


def test_export_only_is_not_a_global(example_lib):
    assert tvm_ffi.get_global_func("add_one", allow_missing=True) is None
    assert "my_ext.add_one" not in tvm_ffi.registry.list_global_func_names()


def test_export_metadata_and_doc(example_lib):
    assert example_lib.get_function_metadata("add_one") == {"type_schema": ADD_ONE_SCHEMA, "arg_names": ["x"]}
    assert example_lib.get_function_doc("add_one") == (
        "Adds one: a module export, `tvm_ffi.load_module(lib).add_one(1) == 2` (the symbol\n"
        "`__tvm_ffi_add_one`), not a global function."
    )
    # An undocumented export has no doc symbol, as in C++ (the doc export is opt-in there).
    assert example_lib.get_function_metadata("no_such_export") is None
    assert example_lib.get_function_doc("no_such_export") is None


def test_export_argument_errors_use_cpp_wording(example_lib):
    with pytest.raises(TypeError) as e:
        example_lib.add_one("x")
    assert str(e.value) == (
        "Mismatched type on argument #0 (`x`) when calling: `add_one(x: int) -> int`. "
        "Expected `int` but got `ffi.SmallStr`"
    )
    with pytest.raises(TypeError) as e:
        example_lib.add_one()
    assert str(e.value) == (
        "Mismatched number of arguments when calling: `add_one(x: int) -> int`. "
        "Expected 1 but got 0 arguments"
    )
    with pytest.raises(TypeError) as e:
        example_lib.add_one(1, 2)
    assert str(e.value).endswith("Expected 1 but got 2 arguments")
    assert example_lib.add_one(41) == 42


def test_function_both_global_and_exported(example_lib):
    div = tvm_ffi.get_global_func("my_ext.checked_div")
    assert div(7, 2) == 3
    assert example_lib.checked_div(7, 2) == 3
    # Same signature, same metadata; each entry point is named as it was reached.
    assert (
        example_lib.get_function_metadata("checked_div")
        == tvm_ffi.get_global_func_metadata("my_ext.checked_div")
    )
    assert example_lib.get_function_doc("checked_div").startswith("Divides; panics on zero")
    with pytest.raises(TypeError) as e:
        example_lib.checked_div(1)
    assert "`checked_div(a: int, b: int) -> int`" in str(e.value)
    with pytest.raises(TypeError) as e:
        div(1)
    assert "`my_ext.checked_div(a: int, b: int) -> int`" in str(e.value)


def test_panic_through_an_export_then_a_successful_call(example_lib):
    with pytest.raises(RuntimeError) as e:
        example_lib.checked_div(1, 0)
    msg = str(e.value)
    assert msg.startswith("Rust panic in `checked_div` at ")
    assert "examples/point/src/lib.rs" in msg
    assert msg.endswith("division by zero in checked_div")
    assert example_lib.checked_div(9, 3) == 3
    # The global entry point of the same function is unaffected.
    assert tvm_ffi.get_global_func("my_ext.checked_div")(8, 2) == 4


def test_packed_function_takes_any_arguments(example_lib):
    count = tvm_ffi.get_global_func("my_ext.count_args")
    assert count() == 0
    assert count(1, "a", None, 2.5, [1, 2], {"k": 1}, count) == 7
    # What C++ registers for GlobalDef().def_packed: no parameter list.
    assert tvm_ffi.get_global_func_metadata("my_ext.count_args") == {
        "type_schema": '{"type":"ffi.Function"}'
    }
    assert tvm_ffi.get_global_func("testing.apply")(count, 1, 2) == 2


def test_packed_function_converts_its_own_arguments(example_lib):
    join = tvm_ffi.get_global_func("my_ext.join")
    assert join("-", "a", "a string longer than seven bytes", "c") == (
        "a-a string longer than seven bytes-c"
    )
    assert join(", ") == ""
    with pytest.raises(TypeError) as e:
        join(",", "a", 1)
    assert str(e.value) == "Cannot convert from type `int` to `str`"
    with pytest.raises(TypeError, match="needs a separator"):
        join()
