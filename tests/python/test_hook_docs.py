"""The hooks of `docs/hooks.md`, called from Python. `tests/hook-docs` builds the page's examples,
verbatim, into a library (the same code runs as doctests of `tvm-ffi-tests`), so each Python
operation the page names is checked against the hook it documents: `repr()`, `==`/`hash()`,
`<`/`<=`/`>`, `structural_equal`/`structural_hash` and the mismatch path, JSON graphs and pickle,
the type converter of a typed `py_class` field, and `structural_walk` through `__s_visit__`."""
from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
import tvm_ffi
from tvm_ffi import Object
from tvm_ffi.dataclasses import c_class, py_class

from conftest import _lib_path

LIB = tvm_ffi.load_module(_lib_path("libtvm_ffi_test_hook_docs.so"))


@c_class("hook_docs.Interval")
class Interval(Object):
    lo: int
    hi: int
    unit: str


@c_class("hook_docs.Name", eq=True, unsafe_hash=True)
class Name(Object):
    text: str
    note: str


@c_class("hook_docs.Version", eq=True, order=True, unsafe_hash=True)
class Version(Object):
    major: int
    minor: int
    tag: str


@c_class("hook_docs.Var")
class Var(Object):
    name: str


@c_class("hook_docs.Lambda")
class Lambda(Object):
    param: Var
    body: Any
    comment: str


@c_class("hook_docs.Celsius")
class Celsius(Object):
    milli: int


@c_class("hook_docs.Meters")
class Meters(Object):
    value: float


@c_class("hook_docs.Pair")
class Pair(Object):
    first: Any
    second: Any
    cache: Any


@py_class("hook_docs.py.Route")
class Route(Object):
    length: Meters


def test_repr_hook_prints_the_object_and_nested_occurrences():
    i = Interval(1, 5, "s")
    assert repr(i) == '[1, 5) "s"'
    assert str(i) == '[1, 5) "s"'
    assert repr(tvm_ffi.convert([i, i])) == '([1, 5) "s", [1, 5) "s")'


def test_eq_and_hash_hooks_fold_case_and_ignore_the_note():
    a, b, c = Name("Alice", "x"), Name("ALICE", "y"), Name("Bob", "x")
    assert a == b and not (a != b)
    assert a != c
    assert hash(a) == hash(b)
    assert len({a, b, c}) == 2


def test_compare_hook_orders_by_major_then_minor_and_serves_eq():
    v1_2, v1_10, v1_2_rc = Version(1, 2, ""), Version(1, 10, ""), Version(1, 2, "rc")
    assert v1_2 < v1_10 and v1_10 > v1_2
    assert v1_2 <= v1_2_rc and v1_2 >= v1_2_rc
    assert not v1_2 < v1_2_rc
    assert v1_2 == v1_2_rc  # no `eq` hook: `compare` == 0
    assert hash(v1_2) == hash(v1_2_rc)
    assert sorted([v1_10, v1_2]) == [v1_2, v1_10]


def test_structural_hooks_bind_the_parameter():
    x, y, z = Var("x"), Var("y"), Var("z")
    id_x, id_y, const_z = Lambda(x, x, "identity"), Lambda(y, y, "other"), Lambda(y, z, "")
    assert tvm_ffi.structural_equal(id_x, id_y)
    assert tvm_ffi.structural_hash(id_x) == tvm_ffi.structural_hash(id_y)
    assert not tvm_ffi.structural_equal(id_x, const_z)
    lhs, rhs = tvm_ffi.get_first_structural_mismatch(id_x, const_z)
    assert str(lhs) == "<root>.body" and str(rhs) == "<root>.body"
    # The body alone is a use: free variables differ unless mapped.
    assert not tvm_ffi.structural_equal(x, y)
    assert tvm_ffi.structural_equal(x, y, map_free_vars=True)


def test_json_hooks_store_the_text_and_read_it_back():
    t = Celsius(21500)
    text = tvm_ffi.serialization.to_json_graph_str(t)
    nodes = json.loads(text)["nodes"]
    assert {"type": "hook_docs.Celsius", "data": "21.5C"} in nodes
    assert tvm_ffi.serialization.from_json_graph_str(text).milli == 21500
    assert pickle.loads(pickle.dumps(t)).milli == 21500
    with pytest.raises(ValueError, match="not a temperature"):
        tvm_ffi.serialization.from_json_graph_str(text.replace("21.5C", "warm"))


def test_convert_hook_serves_a_typed_py_class_field():
    route = Route(3)
    assert isinstance(route.length, Meters) and route.length.value == 3.0
    route.length = 2.5
    assert route.length.value == 2.5
    m = Meters(7.0)
    route.length = m  # an instance passes through, unconverted
    assert route.length.same_as(m)
    with pytest.raises(TypeError, match="cannot make meters from"):
        route.length = "3 m"


def test_visit_hook_steers_the_walk_and_passes_interrupts_up():
    inner = Pair(3, 4, 99)
    outer = Pair(inner, 5, 100)
    seen = []
    assert tvm_ffi.structural_walk(outer, (int, seen.append), order="pre") is None
    assert seen == [5, 4, 3]

    def stop_at_4(value):
        seen.append(value)
        return tvm_ffi.VisitInterrupt(value) if value == 4 else None

    seen.clear()
    interrupt = tvm_ffi.structural_walk(outer, (int, stop_at_4), order="pre")
    assert interrupt.value == 4 and seen == [5, 4]
