"""Parameter names, defaults and keyword arguments of Rust functions, methods and constructors
(`examples/point`): what the SDK registers in the metadata, how omitted arguments take their
defaults, how keywords bind (Python's `__init__` passes them in the runtime's KWARGS
convention; any caller can), the errors that name the argument, and the `inspect.signature`
that a shipped package's `_ffi_api.py` sets from the same metadata."""
import inspect

import pytest
import tvm_ffi
from tvm_ffi import core



@pytest.fixture(scope="module")
def classes(example_lib):
    from test_objects import Interval, Point

    return Interval, Point


def method_metadata(cls, name):
    (method,) = [m for m in cls.__tvm_ffi_type_info__.methods if m.name == name]
    return method.metadata


def test_names_and_defaults_are_in_the_metadata(classes):
    Interval, Point = classes
    meta = tvm_ffi.get_global_func_metadata("my_ext.shift")
    assert (meta["arg_names"], meta["arg_defaults"]) == (["x", "by"], {"by": 1})
    assert tvm_ffi.get_global_func_metadata("my_ext.add")["arg_names"] == ["a", "b"]
    assert "arg_defaults" not in tvm_ffi.get_global_func_metadata("my_ext.add")
    # A method names its receiver `self`; a constructor its parameters.
    assert method_metadata(Point, "moved")["arg_names"] == ["self", "dx", "dy"]
    assert method_metadata(Point, "moved")["arg_defaults"] == {"dy": 0}
    assert method_metadata(Point, "origin")["arg_names"] == []
    assert method_metadata(Interval, "__ffi_init__")["arg_names"] == ["lo", "hi"]
    # A packed function has no parameters to name.
    assert "arg_names" not in tvm_ffi.get_global_func_metadata("my_ext.count_args")


def test_omitted_arguments_take_their_defaults(classes):
    _, Point = classes
    shift = tvm_ffi.get_global_func("my_ext.shift")
    assert (shift(1), shift(1, 5)) == (2, 6)
    p = Point(1, 2)
    assert (p.moved(10).x, p.moved(10).y, p.moved(10, 5).y) == (11, 2, 7)
    with pytest.raises(TypeError) as err:
        shift()
    assert str(err.value) == (
        "Mismatched number of arguments when calling: `my_ext.shift(x: int, by: int = 1) -> int`. "
        "Expected 2 but got 0 arguments"
    )


def test_constructors_take_keywords(classes):
    Interval, _ = classes
    assert Interval(lo=1.0, hi=3.0).length() == 2.0
    assert Interval(1.0, hi=4.0).length() == 3.0
    assert Interval(hi=2.0, lo=0.5).length() == 1.5
    signature = "`my_ext.Interval.__ffi_init__(lo: float, hi: float) -> ffi.Object`"
    for kwargs, message in [
        ({"lo": 1.0}, f"Missing argument `hi` when calling: {signature}"),
        ({"lo": 1.0, "hi": 2.0, "width": 1.0}, f"Unexpected keyword argument `width` when calling: {signature}"),
        ({"lo": "a", "hi": 2.0}, f"Mismatched type on argument #0 (`lo`) when calling: {signature}. Expected `float` but got `ffi.SmallStr`"),
    ]:
        with pytest.raises(TypeError) as err:
            Interval(**kwargs)
        assert str(err.value) == message
    with pytest.raises(TypeError) as err:
        Interval(1.0, lo=2.0)
    assert str(err.value) == f"Multiple values for argument `lo` when calling: {signature}"


def test_functions_and_methods_bind_keywords_passed_in_the_kwargs_convention(classes):
    _, Point = classes
    shift = tvm_ffi.get_global_func("my_ext.shift")
    K = core.KWARGS
    assert shift(1, K, "by", 5) == 6
    assert shift(K, "by", 5, "x", 1) == 6
    assert shift(K, "x", 1) == 2
    moved = tvm_ffi.get_global_func("ffi.GetKwargsObject")  # the same sentinel C++ and Rust use
    assert moved().same_as(K)
    method = [m for m in Point.__tvm_ffi_type_info__.methods if m.name == "moved"][0].func
    assert method(Point(1, 2), K, "dy", 3, "dx", 1).y == 5
    signature = "`my_ext.shift(x: int, by: int = 1) -> int`"
    for args, message in [
        ((1, K, "step", 2), f"Unexpected keyword argument `step` when calling: {signature}"),
        ((1, K, "x", 2), f"Multiple values for argument `x` when calling: {signature}"),
        ((K, "by", 2), f"Missing argument `x` when calling: {signature}"),
        ((1, K, "by"), f"Keyword arguments must come in key/value pairs after the KWARGS marker when calling: {signature}"),
        ((1, K, "by", "two"), f"Mismatched type on argument #1 (`by`) when calling: {signature}. Expected `int` but got `ffi.SmallStr`"),
    ]:
        with pytest.raises(TypeError) as err:
            shift(*args)
        assert str(err.value) == message


def test_keyword_syntax_on_a_function_object_is_refused_by_the_runtime():
    # `tvm_ffi.Function.__call__` (the runtime's Cython) takes positional arguments only: a
    # shipped package's `_ffi_api.py` replaces its functions and methods by keyword-taking
    # subclasses (test_function_keywords.py).
    shift = tvm_ffi.get_global_func("my_ext.shift")
    with pytest.raises(TypeError, match="unexpected keyword argument 'by'"):
        shift(1, by=2)


def load_signatures_helper():
    # The module the build places next to a package's `_ffi_api.py` (tvm-ffi-build/tvm_ffi_build/).
    from tvm_ffi_build import ffi_helpers

    return ffi_helpers.signatures


@pytest.mark.parametrize("with_library", [True, False])
def test_the_package_sets_inspect_signature_from_the_metadata(classes, example_lib, with_library):
    Interval, Point = classes
    shift = tvm_ffi.get_global_func("my_ext.shift")
    with pytest.raises(ValueError):
        inspect.signature(shift)  # the runtime's function objects have none of their own
    namespace = {"shift": shift, "add": tvm_ffi.get_global_func("my_ext.add"), "Point": Point, "Interval": Interval}
    load_signatures_helper()(namespace, "my_ext.", example_lib if with_library else None)
    # Functions and methods take keywords (Python functions around the runtime's, with or
    # without the library); a method's `self` is positional-only.
    shift = namespace["shift"]
    assert shift.__name__ == "shift" and shift(1, by=2) == 3
    assert str(inspect.signature(shift)) == "(x, by=1)"
    assert str(inspect.signature(namespace["add"])) == "(a, b)"
    assert str(inspect.signature(Point.moved)) == "(self, /, dx, dy=0)"
    assert str(inspect.signature(Point.origin)) == "()"
    assert str(inspect.signature(Point.at)) == "(x, y=0)"
    assert str(inspect.signature(Interval.__init__)) == "(self, /, lo, hi)"
    assert str(inspect.signature(Interval)) == "(lo, hi)"
    # The signatures describe the calls the runtime accepts.
    assert inspect.signature(Interval).bind(hi=2.0, lo=1.0)
    assert shift(*inspect.signature(shift).bind(1, by=2).args) == 3
    assert (shift(1, by=2), shift(by=2, x=1), Point.at(1, y=2).y) == (3, 3, 2)
    p = Point(1, 2)
    assert p.moved(*inspect.signature(Point.moved).bind(p, 1, dy=2).args[1:]).y == 4
    assert (p.moved(1, dy=2).y, p.moved(dy=2, dx=1).x, Point.moved(p, dx=1).x) == (4, 2, 2)
    with pytest.raises(TypeError):
        inspect.signature(Point.moved).bind(self=p, dx=1)
