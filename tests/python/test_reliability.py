"""Reliability: a Rust library never takes the host down where C++ raises or survives, and it
raises exactly what C++ raises. Each check that could crash runs in a child interpreter, so a
crash is a test failure, not the end of the test run."""
import pytest
import tvm_ffi
import tvm_ffi.testing
from tvm_ffi import core

from conftest import example_lib_path, kernels_lib_path, run_python

PRELUDE = f"""
import tvm_ffi, tvm_ffi.testing
tvm_ffi.load_module({example_lib_path()!r})
tvm_ffi.load_module({kernels_lib_path()!r})
"""


def run_ok(script, env=None):
    run = run_python(PRELUDE + script, env)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stderr}"
    return run


# ---- 1. allocation failure raises MemoryError -----------------------------------------------


def test_a_tensor_beyond_memory_raises_memory_error():
    run = run_ok(
        """
try:
    tvm_ffi.get_global_func("kernels.arange")(2**53)
except MemoryError as err:
    print("MemoryError:", err)
"""
    )
    assert "MemoryError: cannot allocate 36028797018963968 bytes" in run.stdout


def test_an_array_beyond_a_memory_limit_raises_memory_error():
    # Under an address-space limit just above what the process uses, a function returning a
    # list of 10**8 integers (1.6 GB of values) gets a MemoryError from `Array::new`.
    run = run_ok(
        """
import resource
used = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (used + (256 << 20), resource.RLIM_INFINITY))
make = tvm_ffi.get_global_func("my_ext.range")
try:
    make(10**8)
except MemoryError as err:
    print("MemoryError:", err)
assert list(make(4)) == [0, 1, 2, 3]
"""
    )
    assert "MemoryError: cannot allocate" in run.stdout


# ---- 2. releasing deep graphs ---------------------------------------------------------------


def test_releasing_a_deep_chain_of_rust_objects_keeps_the_host():
    # Each Options holds the next in an optional object field; releasing the head releases the
    # whole chain (a C++ type of the same shape is released fine at this depth too).
    run = run_ok(
        """
Options = tvm_ffi.register_object("my_ext.Options")(type("Options", (tvm_ffi.Object,), {}))
head = None
for i in range(200_000):
    head = Options(i, parent=head)
assert head.id == 199_999 and head.parent.id == 199_998
del head
print("released")
"""
    )
    assert run.stdout.strip() == "released"


# ---- 4. argument errors name the argument C++ names -----------------------------------------


def test_several_wrong_arguments_name_the_last_as_cpp_does(example_lib):
    add = tvm_ffi.get_global_func("my_ext.add")
    with pytest.raises(TypeError) as rust:
        add("a", "b")
    assert str(rust.value) == (
        "Mismatched type on argument #1 (`b`) when calling: `my_ext.add(a: int, b: int) -> int`. "
        "Expected `int` but got `ffi.SmallStr`"
    )
    # The C++ twin (a typed (int64, int64) constructor) names the same argument.
    with pytest.raises(TypeError) as cpp:
        tvm_ffi.testing.TestIntPair("a", "b")
    assert "Mismatched type on argument #1 when calling" in str(cpp.value)


def test_a_method_with_a_wrong_receiver_and_argument_names_the_argument(example_lib):
    from test_objects import Point

    with pytest.raises(TypeError) as err:
        Point.scale(1, "x")
    assert str(err.value) == (
        "Mismatched type on argument #1 (`k`) when calling: "
        "`my_ext.Point.scale(self: my_ext.Point, k: int) -> my_ext.Point`. "
        "Expected `int` but got `ffi.SmallStr`"
    )


# ---- 5. shallow copy as C++ registers it ----------------------------------------------------


def shallow_copy_of(key):
    return core._lookup_type_attr(core._object_type_key_to_index(key), "__ffi_shallow_copy__")


def test_shallow_copy_checks_arguments_as_cpp_does(example_lib):
    from test_objects import Point, Point3

    copy = shallow_copy_of("my_ext.Point")
    p = Point(1, 2)
    with pytest.raises(TypeError) as err:
        copy(p, 1)
    assert str(err.value) == (
        "Mismatched number of arguments when calling: "
        "`my_ext.Point.__ffi_shallow_copy__(0: my_ext.Point) -> ffi.Object`. "
        "Expected 1 but got 2 arguments"
    )
    with pytest.raises(TypeError) as err:
        copy(7)
    assert str(err.value) == (
        "Mismatched type on argument #0 when calling: "
        "`my_ext.Point.__ffi_shallow_copy__(0: my_ext.Point) -> ffi.Object`. "
        "Expected `my_ext.Point` but got `int`"
    )
    # The C++ original words it the same way.
    cpp_copy = shallow_copy_of("testing.TestIntPair")
    with pytest.raises(TypeError) as err:
        cpp_copy(tvm_ffi.testing.TestIntPair(1, 2), 1)
    assert str(err.value) == (
        "Mismatched number of arguments when calling: "
        "`testing.TestIntPair.__ffi_shallow_copy__(0: testing.TestIntPair) -> ffi.Object`. "
        "Expected 1 but got 2 arguments"
    )
    # A subtype copied through its parent's attribute is sliced to the parent, as in C++.
    child = Point3(1, 3, label="c")
    sliced = copy(child)
    assert type(sliced) is Point
    assert (sliced.x, sliced.y, sliced.label) == (1, 7, "c")
    assert not sliced.same_as(child)


# ---- 6. caught panics are quiet -------------------------------------------------------------


PANIC_SCRIPT = """
div = tvm_ffi.get_global_func("my_ext.checked_div")
for _ in range(200):
    try:
        div(1, 0)
    except RuntimeError as err:
        message = str(err)
print(message)
"""


def test_caught_panics_print_nothing_even_with_rust_backtrace():
    run = run_ok(PANIC_SCRIPT, env={"RUST_BACKTRACE": "1"})
    assert run.stderr == ""
    # The message and the panic site still reach the error.
    assert run.stdout.startswith("Rust panic in `my_ext.checked_div` at examples/point/src/")
    assert "division by zero in checked_div" in run.stdout


def test_caught_panics_are_reported_on_request():
    script = PANIC_SCRIPT.replace("for _ in range(200)", "for _ in range(3)")
    run = run_ok(script, env={"TVM_FFI_REPORT_PANICS": "1", "RUST_BACKTRACE": "0"})
    assert run.stderr.count("panicked at examples/point/src/") == 3
