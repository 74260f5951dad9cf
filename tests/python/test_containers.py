"""Shape, List, Dict, Map and big integers between Python and Rust (`tests/containers`): each as
an argument, a result, a reflected field and a container element; List and Dict shared by
reference; Map and Dict lookups Rust makes in place agree with the runtime's on random tables."""
import json
import random

import pytest
import tvm_ffi

from conftest import _lib_path
from reflection_tables import type_table


@pytest.fixture(scope="module")
def lib():
    return tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))


@pytest.fixture(scope="module")
def Holder(lib):
    @tvm_ffi.register_object("rs_containers.Holder")
    class Holder(tvm_ffi.Object):
        pass

    return Holder


def f(name):
    return tvm_ffi.get_global_func(f"rs_containers.{name}")


def test_shape_as_argument_result_and_element(lib):
    shape = f("make_shape")(4)
    assert isinstance(shape, tvm_ffi.Shape)
    assert tuple(shape) == (0, 1, 2, 3)
    assert f("make_shape")(0) == ()
    assert f("shape_numel")(tvm_ffi.Shape((2, 3, 4))) == 24
    assert list(f("shape_dims")(tvm_ffi.Shape((5, 6)))) == [5, 6]
    # A list of ints converts to a Shape, as for a C++ `Shape` parameter.
    assert f("shape_numel")([2, 3]) == 6
    with pytest.raises(TypeError) as err:
        f("shape_numel")(["a"])
    assert str(err.value) == (
        "Mismatched type on argument #0 (`shape`) when calling: `rs_containers.shape_numel(shape: ffi.Shape) -> int`. "
        "Expected `ffi.Shape` but got `ffi.Array`"
    )
    numels = f("numels")({"a": tvm_ffi.Shape((2, 3)), "b": tvm_ffi.Shape(())})
    assert isinstance(numels, tvm_ffi.Dict)
    assert dict(numels) == {"a": 6, "b": 1}


def test_list_is_shared_with_the_caller(lib):
    items = tvm_ffi.List([1, 2])
    f("list_append")(items, 3)
    assert list(items) == [1, 2, 3]
    assert f("list_sum")(items) == 6
    made = f("make_list")(3)
    assert isinstance(made, tvm_ffi.List) and list(made) == [0, 1, 2]
    # A Python list arrives as an Array, which a List parameter copies (as C++ does).
    plain = [1, 2]
    f("list_append")(plain, 3)
    assert plain == [1, 2]
    items.append("x")
    with pytest.raises(TypeError) as err:
        f("list_sum")(items)
    assert str(err.value) == (
        "Mismatched type on argument #0 (`list`) when calling: `rs_containers.list_sum(list: List<int>) -> int`. "
        "Expected `List<int>` but got `List[index 3: ffi.SmallStr]`"
    )


def test_dict_is_shared_with_the_caller(lib):
    d = tvm_ffi.Dict({"a": 1})
    f("dict_set")(d, "b", 2)
    assert dict(d) == {"a": 1, "b": 2}
    assert f("dict_get")(d, "b") == 2
    assert f("dict_get")(d, "zz") is None
    assert f("dict_pop")(d, "a") == 1
    assert dict(d) == {"b": 2}
    made = f("make_dict")(3)
    assert isinstance(made, tvm_ffi.Dict) and dict(made) == {"k0": 0, "k1": 1, "k2": 2}
    # A Python dict arrives as a Map, which a Dict parameter copies.
    plain = tvm_ffi.Map({"a": 1})
    f("dict_set")(plain, "b", 2)
    assert dict(plain) == {"a": 1}
    d["c"] = "three"
    with pytest.raises(TypeError, match=r"Expected `Dict<str, int>` but got `Dict\[K, some value is ffi.SmallStr\]`"):
        f("dict_get")(d, "c")


def random_key(rng: random.Random):
    kind = rng.randrange(9)
    if kind == 0:
        return rng.randrange(-(2**63), 2**63)
    if kind == 1:
        return rng.randrange(100)
    if kind == 2:
        return "".join(rng.choice("abcxyz") for _ in range(rng.randrange(8)))
    if kind == 3:
        return "key-" + "".join(rng.choice("abcxyz") for _ in range(rng.randrange(4, 30)))
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(20)))
    if kind == 5:
        return rng.uniform(-1e6, 1e6)
    if kind == 6:
        return rng.choice([True, False, None])
    if kind == 7:
        return rng.randrange(2**64, 2**130) * rng.choice([1, -1])
    return rng.randrange(2**63, 2**64)


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 17, 200, 2000])
def test_lookups_in_place_agree_with_the_runtime(lib, size):
    rng = random.Random(size)
    keys = [random_key(rng) for _ in range(size)]
    table = {k: i for i, k in enumerate(keys)}
    probes = keys + [random_key(rng) for _ in range(50)]
    m = tvm_ffi.Map(table)
    d = tvm_ffi.Dict(table)
    assert list(f("sizes")(m, d)) == [len(m), len(d)]
    # Iteration order: Rust's in-place walk is the runtime's.
    assert list(f("map_keys")(m)) == list(m.keys())
    for key in probes:
        expected = m[key] if key in m else None
        assert f("map_lookup")(m, key) == expected, key
        assert f("dict_lookup")(d, key) == expected, key
    # Mutations from Python (growth, in-place layout switches, erasure) are seen by Rust.
    for i, key in enumerate(probes):
        if i % 3 == 0:
            d[key] = -i
        elif i % 3 == 1 and key in d:
            del d[key]
    for key in probes:
        expected = d[key] if key in d else None
        assert f("dict_lookup")(d, key) == expected, key


def test_big_integers(lib):
    for value in [0, -1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64 - 1, 2**64, 2**127, -(2**200) + 12345, 10**60]:
        assert f("bigint_str")(value) == str(value)
        assert f("bigint_parse")(str(value)) == value
        assert f("bigint_neg")(value) == -value
    assert f("bigint_str")(True) == "1"  # bool converts, as for C++ `BigInt`
    with pytest.raises(ValueError, match="invalid literal for BigInt"):
        f("bigint_parse")("12x")
    # A u64 takes 2**63 .. 2**64-1 (which Python sends as an ffi.BigInt) and returns it.
    assert f("u64_echo")(2**64 - 1) == 2**64 - 1
    assert f("u64_echo")(2**63) == 2**63
    with pytest.raises(TypeError) as err:
        f("u64_echo")(2**64)
    assert str(err.value) == (
        "Mismatched type on argument #0 (`x`) when calling: `rs_containers.u64_echo(x: int) -> int`. "
        "Expected `int` but got `ffi.BigInt`"
    )
    with pytest.raises(TypeError, match=r"got `int` \(value -1 is out of range for `u64`\)"):
        f("u64_echo")(-1)
    assert f("i128_echo")(-(2**127)) == -(2**127)
    assert list(f("bigint_double_all")([1, 2**70, -(2**100)])) == [2, 2**71, -(2**101)]


def test_container_fields_report_what_cpp_reports(Holder):
    fields = {field["name"]: field for field in type_table("rs_containers.Holder")["fields"]}
    expected = {
        "shape": (69, {"type": "ffi.Shape"}),
        "items": (75, {"type": "ffi.List", "args": [{"type": "int"}]}),
        "table": (64, {"type": "ffi.Dict", "args": [{"type": "ffi.String"}, {"type": "int"}]}),
        "big": (-1, {"type": "ffi.BigInt"}),
        "anys": (75, {"type": "ffi.List", "args": [{"type": "Any"}]}),
        "shapes": (64, {"type": "ffi.Map", "args": [{"type": "ffi.String"}, {"type": "ffi.Shape"}]}),
        "rw_shape": (69, {"type": "ffi.Shape"}),
        # An 8-byte nullable pointer: an object index (never "any", which means a 16-byte Any).
        "maybe_shape": (64, {"type": "Optional", "args": [{"type": "ffi.Shape"}]}),
    }
    for name, (index, schema) in expected.items():
        assert fields[name]["static_type_index"] == index, name
        assert json.loads(fields[name]["metadata"]["type_schema"]) == schema, name
        # A BigInt is a 16-byte Any (as C++ `BigInt`), the others an object pointer.
        assert fields[name]["size"] == (16 if name == "big" else 8), name


def test_container_fields_from_python(Holder):
    items = tvm_ffi.List([1, 2])
    table = tvm_ffi.Dict({"a": 1})
    h = Holder(tvm_ffi.Shape((2, 3)), items, table, 2**80)
    assert tuple(h.shape) == (2, 3)
    assert h.numel() == 6
    assert h.items.same_as(items) and h.table.same_as(table)
    h.push(3)
    assert list(items) == [1, 2, 3]
    assert h.total() == 6
    items.append(4)
    assert h.total() == 10
    assert h.big == 2**80
    assert len(h.anys) == 0 and len(h.shapes) == 0 and h.maybe_shape is None
    h.rw_shape = [4, 5]  # an Array of ints converts
    assert tuple(h.rw_shape) == (4, 5)
    with pytest.raises(TypeError):
        h.rw_shape = ["x"]
    with pytest.raises(AttributeError):
        h.shape = (1,)
    small = Holder([7], [1], {"k": 2}, -5)
    assert tuple(small.shape) == (7,) and small.big == -5
    assert isinstance(small.items, tvm_ffi.List) and isinstance(small.table, tvm_ffi.Dict)
    assert small.numel() == 7


def test_global_functions_under_the_old_lock_table_names_are_ignored():
    # Earlier versions fetched their lock tables through these global functions and used the
    # pointer they return as a table of atomics; any Python code can register them first.
    script = """
import ctypes
import tvm_ffi
for name in ["tvm_ffi_rs.container_lock_table.v1", "tvm_ffi_rs.rw_lock_table.v1"]:
    tvm_ffi.register_global_func(name, lambda: ctypes.c_void_p(16))
from conftest import _lib_path
tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))
f = lambda name: tvm_ffi.get_global_func("rs_containers." + name)
lst = f("make_list")(3)
f("list_append")(lst, 5)
print(f("list_sum")(lst), f("list_len")(lst))
"""
    from conftest import run_python

    run = run_python(script, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "8 4\n", run.stdout + run.stderr
    assert run.stderr == ""


def test_python_destructors_run_by_rust_writes_take_other_locks_without_deadlock():
    # Two Rust threads replace the elements of two lists; each element is a Python object whose
    # `__del__` reads the other list through Rust. Run while the writer held its list's lock,
    # each destructor waited for the other list's lock (ABBA).
    script = """
import time
import tvm_ffi
from conftest import _lib_path
tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))
f = lambda name: tvm_ffi.get_global_func("rs_containers." + name)

class Touch:
    def __init__(self, other):
        self.other = other
    def __del__(self):
        f("list_len")(self.other)

a, b = tvm_ffi.List([None]), tvm_ffi.List([None])
f("replace_in_background")(a, lambda: Touch(b), 3000)
f("replace_in_background")(b, lambda: Touch(a), 3000)
deadline = time.time() + 60
while f("background_done")() < 2 and time.time() < deadline:
    time.sleep(0.01)
print("done" if f("background_done")() == 2 else "deadlock")
"""
    from conftest import run_python

    run = run_python(script, timeout=120)
    assert run.stdout == "done\n", run.stdout + run.stderr


def test_a_moved_array_is_the_rust_callee_s_only_reference(lib):
    count = f("moved_array_count")
    lent = tvm_ffi.Array([1, 2])
    assert count(lent) == 2
    assert list(lent) == [1, 2]
    moved = tvm_ffi.Array([3, 4])
    assert count(moved._move()) == 1
    with pytest.raises(TypeError) as err:
        count(tvm_ffi.Array(["a"])._move())
    assert str(err.value) == (
        "Mismatched type on argument #0 (`array`) when calling: "
        "`rs_containers.moved_array_count(array: Array<int>) -> int`. "
        "Expected `Array<int>` but got `RValueRef<Array[index 0: ffi.SmallStr]>`"
    )
