"""`#[ffi_type(eq, hash, ord, str)]` and `frozen` from Python: `my_ext.Version` (examples/point)
compares, hashes, orders and prints through the hooks made from its Rust traits, as C++
(tests/cpp/dunders.cc) and Rust (tests/tests/dunders.rs) see it; no field can be assigned."""
import copy
import pathlib
import pickle

import pytest
import tvm_ffi
import tvm_ffi.testing
from tvm_ffi.dataclasses import c_class

from conftest import ROOT, example_lib_path

LIB = tvm_ffi.load_module(example_lib_path())


# What the generated stubs declare for a type with comparison hooks (checked below).
@c_class("my_ext.Version", eq=True, order=True, unsafe_hash=True)
class Version(tvm_ffi.Object):
    major: int
    minor: int
    patch: int


newest = tvm_ffi.get_global_func("my_ext.newest")


def test_the_stubs_register_the_type_with_its_operators():
    stubs = (ROOT / "examples/point/python/my_ext/_ffi_api.py").read_text()
    assert '@_ffi_c_class("my_ext.Version", eq=True, order=True, unsafe_hash=True)\n' in stubs
    # Types without hooks keep `register_object` (identity `==`, as for C++ types).
    assert '@_FFI_REG_OBJ("my_ext.Point")\n' in stubs


def test_operators_follow_the_rust_traits():
    a, b, c = Version(1, 2), Version(1, 2, 0), Version(1, 10)
    assert a is not b and not a.same_as(b)
    assert a == b and not (a != b) and a != c
    assert hash(a) == hash(b) and hash(a) != hash(c)
    assert len({a, b, c}) == 2 and {a: "x"}[b] == "x"
    assert a < c and a <= b and c > a and c >= a and not (a < b)
    assert sorted([c, Version(0, 9, 9), a]) == [Version(0, 9, 9), a, c]
    # Rust's `Ord` (my_ext.newest takes the max by it) agrees with Python's order.
    assert newest([a, c, b]) == max([a, c, b]) == c
    assert newest([]) is None
    # `repr()` and `str()` are the Rust `Display`, also inside containers.
    assert repr(a) == str(a) == "1.2.0"
    assert repr(tvm_ffi.convert([c, a])) == "(1.10.0, 1.2.0)"
    # Comparing with another type is not an error: Python falls back to identity.
    assert a != 1 and (a == "1.2.0") is False
    with pytest.raises(TypeError):
        _ = a < 1


def test_no_field_is_writable():
    v = Version(1, 2)
    with pytest.raises(AttributeError) as ours:
        v.major = 5
    # The error a read-only field of a C++ type raises.
    pair = tvm_ffi.testing.TestIntPair(1, 2)
    with pytest.raises(AttributeError) as cxx:
        pair.a = 5
    assert str(ours.value) == str(cxx.value).replace("TestIntPair", "Version")
    # The setter itself refuses once the object is in use (Rust compared it).
    assert v == Version(1, 2)
    with pytest.raises(AttributeError, match="Cannot set read-only field of `my_ext.Version`"):
        Version.major.set(v, 5)
    assert v.major == 1 and all(f.frozen for f in Version.__tvm_ffi_type_info__.fields)


def test_construction_copies_replace_pickle_and_json_work():
    v = Version(1, 2, patch=3)
    assert (v.major, v.minor, v.patch) == (1, 2, 3)
    for other in (copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v)),
                  tvm_ffi.serialization.from_json_graph_str(
                      tvm_ffi.serialization.to_json_graph_str(v))):
        assert other == v and not other.same_as(v) and repr(other) == "1.2.3"
    replaced = v.__replace__(patch=4)
    assert replaced == Version(1, 2, 4) and v.patch == 3
    with pytest.raises(TypeError, match="missing required argument: 'minor'"):
        Version(1)
