"""Rust code using what other languages hand it (tests/peer): a module loaded by Python, and
objects of C++ and Python types read, written and called by name, never declared in Rust."""
import json

import pytest
import tvm_ffi
import tvm_ffi.testing
from tvm_ffi.dataclasses import py_class

from conftest import _lib_path, example_lib_path, run_python

PEER = tvm_ffi.load_module(_lib_path("libtvm_ffi_test_peer.so"))
get_field = tvm_ffi.get_global_func("test_peer.get_field")
get_int_field = tvm_ffi.get_global_func("test_peer.get_int_field")
set_field = tvm_ffi.get_global_func("test_peer.set_field")
call_method = tvm_ffi.get_global_func("test_peer.call_method")


def test_rust_calls_a_module_python_loaded():
    module = tvm_ffi.load_module(example_lib_path())
    assert tvm_ffi.get_global_func("test_peer.module_call")(module, "add_one", 41) == 42
    kind, implements, doc, metadata = tvm_ffi.get_global_func("test_peer.module_info")(module, "add_one")
    assert (kind, implements) == ("library", True)
    assert doc.startswith("Adds one: a module export")
    assert json.loads(json.loads(metadata)["type_schema"]) == {
        "type": "ffi.Function",
        "named_args": {"return": [{"type": "int"}], "params": [{"type": "int"}]},
    }
    assert tvm_ffi.get_global_func("test_peer.module_info")(module, "missing")[1:] == [False, None, None]
    with pytest.raises(AttributeError, match="Module has no function 'missing'"):
        tvm_ffi.get_global_func("test_peer.module_call")(module, "missing", 1)


def test_rust_loads_a_module_and_reports_a_missing_file():
    load_and_call = tvm_ffi.get_global_func("test_peer.load_and_call")
    assert load_and_call(example_lib_path(), "add_one", 1) == 2
    with pytest.raises(RuntimeError, match="/nonexistent/libnothing.so"):
        load_and_call("/nonexistent/libnothing.so", "add_one", 1)
    with pytest.raises(RuntimeError, match="Failed to get file format from /nonexistent/plain"):
        load_and_call("/nonexistent/plain", "add_one", 1)


def test_rust_reads_writes_and_calls_a_cxx_object_by_name():
    obj = tvm_ffi.testing.TestObjectDerived(v_map={"k": 1}, v_array=[1, 2], v_i64=7)
    # Inherited and own fields, typed or as they are.
    assert get_int_field(obj, "v_i64") == 7
    assert get_field(obj, "v_str") == "hello"
    assert dict(get_field(obj, "v_map")) == {"k": 1}
    set_field(obj, "v_i64", 35)
    set_field(obj, "v_str", "from rust")
    assert (obj.v_i64, obj.v_str) == (35, "from rust")
    # An inherited method, self first.
    assert call_method(obj, "add_i64", 7) == 42
    with pytest.raises(AttributeError) as err:
        get_field(obj, "missing")
    assert str(err.value) == "Cannot find field `missing` in testing.TestObjectDerived"
    with pytest.raises(AttributeError) as err:
        call_method(obj, "missing")
    assert str(err.value) == "Cannot find method `missing` in testing.TestObjectDerived"
    # The C++ setter checks the value.
    with pytest.raises(TypeError, match="Cannot convert from type `ffi.SmallStr` to `int`"):
        set_field(obj, "v_i64", "x")
    with pytest.raises(TypeError, match="Cannot convert from type `ffi.String` to `int`"):
        get_int_field(obj, "v_str")


@py_class("test_peer.PyPoint")
class PyPoint(tvm_ffi.Object):
    x: int
    label: str = "p"


def test_rust_reads_and_writes_a_python_object_by_name():
    p = PyPoint(x=3)
    assert get_int_field(p, "x") == 3
    assert get_field(p, "label") == "p"
    set_field(p, "x", 4)
    assert p.x == 4
    with pytest.raises(AttributeError, match="Cannot find field `y` in test_peer.PyPoint"):
        get_field(p, "y")


def test_rust_clone_of_an_error_python_rewrites_reads_its_own_backtrace():
    # Python rewrites a shared error's backtrace in place each time it re-raises it
    # (`update_backtrace`, no synchronisation); a Rust thread holding a clone reads the copy it
    # took when it received the error, never the storage being rewritten.
    err = tvm_ffi.core.Error("ValueError", "shared", "  File \"lib.rs\", line 1, in f\n")
    start = tvm_ffi.get_global_func("test_peer.error_reader_start")
    stop = tvm_ffi.get_global_func("test_peer.error_reader_stop")
    for _ in range(5):
        start(err)
        for i in range(2000):
            err.update_backtrace(f"  File \"re_raise.py\", line {i}, in g\n" * (1 + i % 64))
        reads, changed = stop()
        assert reads > 0
        assert changed == 0


def test_two_rust_libraries_share_one_lock_of_the_global_function_table():
    # The runtime's global function table is not synchronised: a registration that grows it
    # moves every entry into a new table and frees the old one, under any lookup running then.
    # Rust serialises its own accesses with a lock that every Rust library of the process
    # shares (it used to be one lock per library: a lookup in this library missed functions,
    # or read freed memory, while the containers library registered). A process of its own:
    # the registered names stay in its table.
    proc = run_python(f"""
import tvm_ffi
from conftest import _lib_path
tvm_ffi.load_module(_lib_path("libtvm_ffi_test_peer.so"))
tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))
names = ["ffi.Array", "ffi.Map", "test_peer.get_field", "rs_soundness.fail_equal"]
start = tvm_ffi.get_global_func("test_peer.lookup_start")
stop = tvm_ffi.get_global_func("test_peer.lookup_stop")
register = tvm_ffi.get_global_func("rs_soundness.register_globals")
for round in range(6):
    start(names)
    register(f"rs_soundness.many{{round}}", 20000)
    lookups, misses = stop()
    print(lookups > 0, misses)
print(tvm_ffi.get_global_func("rs_soundness.many5.19999")())
""")
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.splitlines() == ["True 0"] * 6 + ["19999"], proc.stdout
