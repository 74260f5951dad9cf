"""Every type of the wheel's C++ testing library (`libtvm_ffi_testing`, keys `testing.*`) has a
Rust twin written with this SDK (`tests/testing-twins`, keys `testing.rs.*`). Here the same
Python calls run on both, in one process, and must give the same results once the key prefix is
normalised: reflection tables (fields, flags, static type indices, defaults, metadata, methods,
type attributes), construction (positional, keyword, defaults, init flags, every error),
field reads and writes with values of every kind, repr, copy, deepcopy, pickle, JSON graphs,
`RecursiveEq`/`Lt`/`Hash` with and without hooks, enums, structural visits and `py_class`
subclasses.

The few deliberate differences are listed in `DEVIATIONS` (and in the twin crate's docs); each
is asserted, so a twin that drifts either way fails. One more is normalised away: Rust functions,
methods and constructors register their parameter names (metadata `arg_names`, asserted here),
which their error messages show where C++ numbers the parameters."""
from __future__ import annotations

import copy
import inspect
import json
import pickle
import re
from typing import Any, Callable, ClassVar

import pytest
import tvm_ffi
import tvm_ffi.testing as cxx
from tvm_ffi import core
from tvm_ffi.dataclasses import py_class

import testing_twins as rs
from reflection_tables import type_table

# Every type of libtvm_ffi_testing but `testing.TestFrozenCxx`, which C++ declares and never
# registers (no metadata, no fields: only a type index).
TYPE_NAMES = [
    "TestIntPair", "TestEnumVariant", "TestCxxIntEnum", "TestCxxStrEnum", "TestVisitRegions",
    "TestVisitHook", "TestObjectBase", "TestObjectDerived", "TestObjectPtrHolder",
    "TestCxxClassBase", "TestCxxClassDerived", "TestCxxClassDerivedDerived",
    "TestCxxClassHiddenField", "TestCxxClassPolymorphic", "TestCxxEnumHolder", "TestCxxInitSubset",
    "TestCxxKwOnly", "TestCxxAutoInit", "TestCxxAutoInitSimple", "TestCxxAutoInitAllInitOff",
    "TestCxxAutoInitKwOnlyDefaults", "TestCxxAutoInitParent", "TestCxxAutoInitChild",
    "TestCxxNoAutoInit", "TestDeepCopyEdges", "TestNonCopyable", "TestUnregisteredBaseObject",
    "TestUnregisteredObject", "TestCompare", "TestHash", "TestCustomHash", "TestCustomCompare",
    "TestEqWithoutHash", "SchemaAllTypes",
]
GLOBALS = ["TestIntPairSum", "make_unregistered_object", "enum_variant_get", "make_visit_region_graph"]

# A nullable C++ `ObjectRef` field reports the schema `ffi.Object`; its Rust twin is
# `Option<ObjectRef<Object>>`, whose schema says that it may be None.
OPTIONAL_OBJECT_SCHEMA = '{"type":"Optional","args":[{"type":"ffi.Object"}]}'
DEVIATIONS = {
    ("TestVisitHook", "child"): OPTIONAL_OBJECT_SCHEMA,
    ("TestDeepCopyEdges", "v_obj"): OPTIONAL_OBJECT_SCHEMA,
}
# C++ reports its pointer-sized `Optional<Array<T>>` as "any" (-1), which the runtime and
# Python subclasses take for a 16-byte `Any` (a subclass's shallow copy then reads past the
# field); the Rust twin, an 8-byte `Option<Array<T>>`, reports an object pointer (64).
INDEX_DEVIATIONS = {
    ("SchemaAllTypes", "v_opt_arr_variant"): (-1, 64),
}


def _numbered(signature: str) -> str:
    """`f(a: int, b: Map<str, int>) -> int` as C++ writes it: `f(0: int, 1: Map<str, int>) -> int`."""
    open_at = signature.find("(")
    close_at = signature.rfind(") -> ")
    if open_at < 0 or close_at < 0:
        return signature
    params, depth, start = [], 0, open_at + 1
    for at in range(open_at + 1, close_at + 1):
        c = signature[at]
        depth += c in "<[(" and 1 or c in ">])" and -1 or 0
        if (c == "," and depth == 0) or at == close_at:
            if signature[start:at].strip():
                params.append(signature[start:at].strip())
            start = at + 1
    params = [f"{i}: {p.split(': ', 1)[1]}" for i, p in enumerate(params)]
    return f"{signature[:open_at]}({', '.join(params)}{signature[close_at:]}"


def normalize(value):
    """The twin's results with its key prefix replaced by the C++ one, and its parameters
    numbered as C++ numbers them."""
    if isinstance(value, str):
        # `testing.rs.X` -> `testing.X`, and the module `testing.rs` of fallback classes.
        value = re.sub(r"\btesting\.rs\b", "testing", value)
        value = re.sub(r"(argument #\d+) \(`\w+`\)", r"\1", value)
        return re.sub(r"when calling: `([^`]*)`", lambda m: f"when calling: `{_numbered(m.group(1))}`", value)
    if isinstance(value, dict):
        if isinstance(value.get("type_schema"), str) and "named_args" in value["type_schema"]:
            # A function's metadata: Rust registers the parameters' names as well.
            params = json.loads(value["type_schema"])["named_args"].get("params", [])
            assert len(value.get("arg_names", [])) == len(params), value
            value = {k: v for k, v in value.items() if k not in ("arg_names", "arg_defaults")}
        return {normalize(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(normalize(v) for v in value)
    return value


class Side:
    """One implementation: C++ (`testing.`) or Rust (`testing.rs.`), with its Python classes."""

    def __init__(self, prefix: str, module) -> None:
        self.prefix = prefix
        self.module = module

    def key(self, name: str) -> str:
        return self.prefix + name

    def cls(self, name: str):
        return getattr(self.module, name, None) or getattr(self.module, "_" + name)

    def func(self, name: str):
        return tvm_ffi.get_global_func(self.prefix + name)

    def create(self, name: str, **kwargs):
        args: list[Any] = [self.key(name)]
        for k, v in kwargs.items():
            args += [k, v]
        return tvm_ffi.get_global_func("ffi.MakeObjectFromPackedArgs")(*args)

    def __repr__(self) -> str:
        return self.prefix


CXX = Side("testing.", cxx)
RS = Side("testing.rs.", rs)


def describe(value, depth: int = 0):
    """A comparable picture of a value returned to Python."""
    if isinstance(value, tvm_ffi.Object) and not isinstance(value, (tvm_ffi.Array, tvm_ffi.Map, tvm_ffi.Function)):
        return ("object", type(value).__tvm_ffi_type_info__.type_key, core.object_repr(value) if hasattr(core, "object_repr") else repr(value))
    if isinstance(value, (tvm_ffi.Array, list, tuple)):
        return [describe(v, depth + 1) for v in value]
    if isinstance(value, (tvm_ffi.Map, dict)):
        return sorted((repr(describe(k)), describe(v)) for k, v in value.items())
    if isinstance(value, tvm_ffi.Function):
        return "<function>"
    if isinstance(value, float) and value != value:
        return "nan"
    return value


def outcome(fn: Callable[[], Any]):
    """`fn()`'s result (described) or the exception it raised (kind and message)."""
    try:
        return ("ok", describe(fn()))
    except Exception as err:  # noqa: BLE001 - the comparison covers every kind
        return ("raise", type(err).__name__, str(err))


def same(probe: Callable[[Side], Any]):
    """Runs `probe` on both sides and asserts equal outcomes; returns the C++ one."""
    expected = outcome(lambda: probe(CXX))
    actual = normalize(outcome(lambda: probe(RS)))
    assert actual == expected
    return expected


# ---- reflection tables --------------------------------------------------------------------


@pytest.mark.parametrize("name", TYPE_NAMES)
def test_reflection_tables_are_the_cxx_ones(name):
    expected = type_table(CXX.key(name))
    actual = normalize(type_table(RS.key(name)))
    for (type_name, field_name), schema in DEVIATIONS.items():
        if type_name == name:
            field = next(f for f in actual["fields"] if f["name"] == field_name)
            assert field["metadata"]["type_schema"] == schema
            field["metadata"]["type_schema"] = next(
                f for f in expected["fields"] if f["name"] == field_name
            )["metadata"]["type_schema"]
    for (type_name, field_name), (cxx_index, rs_index) in INDEX_DEVIATIONS.items():
        if type_name == name:
            field = next(f for f in actual["fields"] if f["name"] == field_name)
            theirs = next(f for f in expected["fields"] if f["name"] == field_name)
            assert (theirs["static_type_index"], field["static_type_index"]) == (cxx_index, rs_index)
            assert field["size"] == 8
            field["static_type_index"] = cxx_index
    assert actual == expected


@pytest.mark.parametrize("name", GLOBALS)
def test_global_functions_have_the_cxx_metadata(name):
    assert normalize(tvm_ffi.get_global_func_metadata(RS.key(name))) == tvm_ffi.get_global_func_metadata(
        CXX.key(name)
    )


def test_python_classes_see_the_same_signatures_and_match_args():
    for name in TYPE_NAMES:
        cls = getattr(rs, name, None) or getattr(rs, "_" + name, None)
        if cls is None or not hasattr(cls, "__init__") or name.endswith("Enum"):
            continue
        same(lambda side: str(inspect.signature(side.cls(name).__init__)))
        same(lambda side: getattr(side.cls(name), "__match_args__", None))
        same(lambda side: [f.name for f in tvm_ffi.dataclasses.fields(side.cls(name))])


# ---- construction -------------------------------------------------------------------------

# Types constructed from Python with their own arguments (the rest have no constructor or
# need specific values, below).
CONSTRUCTIBLE = {
    "TestIntPair": ["a", "b"],
    "TestObjectBase": ["v_i64", "v_f64", "v_str"],
    "TestObjectDerived": ["v_map", "v_array", "v_i64", "v_f64", "v_str"],
    "TestCxxClassBase": ["v_i64", "v_i32"],
    "TestCxxClassDerived": ["v_i64", "v_i32", "v_f64", "v_f32"],
    "TestCxxClassDerivedDerived": ["v_i64", "v_i32", "v_f64", "v_bool", "v_f32", "v_str"],
    "TestCxxInitSubset": ["required_field", "optional_field", "note"],
    "TestCxxKwOnly": ["x", "y", "z", "w"],
    "TestCxxAutoInit": ["a", "b", "c", "d"],
    "TestCxxAutoInitSimple": ["x", "y"],
    "TestCxxAutoInitAllInitOff": ["x", "y", "z"],
    "TestCxxAutoInitKwOnlyDefaults": ["p_required", "p_default", "k_required", "k_default", "hidden"],
    "TestCxxAutoInitParent": ["parent_required", "parent_default"],
    "TestCxxAutoInitChild": ["parent_required", "child_required", "parent_default", "child_kw_only"],
    "TestCxxNoAutoInit": ["x", "y"],
    "TestNonCopyable": ["value"],
    "TestCompare": ["key", "name", "ignored_field"],
    "TestHash": ["key", "name", "hash_ignored"],
    "TestCustomHash": ["key", "label"],
    "TestCustomCompare": ["key", "label"],
    "TestEqWithoutHash": ["key", "label"],
}


def sample_argument(field: str):
    """A value that fits the field of that name (strings for names and labels, containers for
    the container fields, ints elsewhere)."""
    return {
        "v_map": {"k": 1},
        "v_array": [1, "two"],
        "v_str": "text",
        "note": "a note",
        "name": "nm",
        "label": "lbl",
        "v_f64": 2.5,
        "v_f32": 0.5,
        "v_bool": True,
    }.get(field, 7)


def construction_calls(fields):
    """Argument lists that cover every path of the constructors: too few, enough, too many
    positionals; all keywords; each one missing; an unknown one; a repeated one."""
    calls = []
    values = [sample_argument(f) for f in fields]
    for n in range(len(fields) + 2):
        calls.append((tuple(values[:n]) + (1,) * max(0, n - len(values)), {}))
    everything = dict(zip(fields, values))
    calls.append(((), everything))
    for f in fields:
        calls.append(((), {k: v for k, v in everything.items() if k != f}))
    calls.append(((), {**everything, "bogus": 1}))
    if fields:
        calls.append(((values[0],), {fields[0]: values[0]}))
        calls.append((tuple(values[1:]), {fields[0]: values[0]}))
        calls.append(((), {f: "wrong type" if isinstance(v, int) else 1.5 for f, v in everything.items()}))
        calls.append(((), {f: None for f in fields}))
    return calls


def fields_of(obj):
    info = type(obj).__tvm_ffi_type_info__
    names = []
    while info is not None:
        names = [f.name for f in info.fields] + names
        info = info.parent_type_info
    return {n: describe(getattr(obj, n)) for n in names}


def explicit_init_params(name):
    """The parameter names of the twin's `#[ffi(init)]` constructor, or None (an auto-init)."""
    for method in RS.cls(name).__tvm_ffi_type_info__.methods:
        if method.name == "__ffi_init__":
            return method.metadata["arg_names"]
    return None


KEYWORD_BINDING_ERRORS = (
    "Missing argument", "Unexpected keyword argument", "Multiple values for argument",
    "Mismatched number of arguments",
)


def same_construction(name, args, kwargs, probe, compare=None):
    """`same` (or `compare`) for `probe(side, args, kwargs)`, which constructs `name`, except for
    the deliberate difference: a C++ explicit constructor (`refl::init`) takes positional
    arguments only (a keyword call is its arity error), where its Rust twin also binds keywords
    by parameter name. For such a call the oracle is the C++ constructor called with the
    arguments as Python binds them by name; a call Python cannot bind is the twin's TypeError
    naming the argument."""
    compare = compare or same
    params = explicit_init_params(name) if kwargs else None
    if params is None:
        return compare(lambda side: probe(side, args, kwargs))
    signature = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
    )
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        actual = normalize(outcome(lambda: probe(RS, args, kwargs)))
        assert actual[:2] == ("raise", "TypeError") and actual[2].startswith(KEYWORD_BINDING_ERRORS), actual
        return None
    return compare(lambda side: probe(side, bound.args, {}) if side is CXX else probe(side, args, kwargs))


@pytest.mark.parametrize("name", sorted(CONSTRUCTIBLE))
def test_construction_behaves_as_cxx(name):
    for args, kwargs in construction_calls(CONSTRUCTIBLE[name]):
        same_construction(name, args, kwargs, lambda side, a, k: fields_of(side.cls(name)(*a, **k)))
        same_construction(name, args, kwargs, lambda side, a, k: repr(side.cls(name)(*a, **k)))


@pytest.mark.parametrize("name", sorted(set(TYPE_NAMES) - {"SchemaAllTypes"}))
def test_reflection_creation_behaves_as_cxx(name):
    """`create_object` (the runtime's creator plus setters) with no fields, and with each
    constructor's sample values."""
    same(lambda side: fields_of(side.create(name)))
    fields = CONSTRUCTIBLE.get(name, [])
    same(lambda side: fields_of(side.create(name, **{f: sample_argument(f) for f in fields})))
    same(lambda side: side.create(name, bogus=1))


def test_explicit_constructors_check_arguments_as_cxx():
    same(lambda side: side.cls("TestIntPair")(1, "x"))
    same(lambda side: side.cls("TestIntPair")(1))
    same_construction("TestIntPair", (), {"a": 1, "b": 2}, lambda side, a, k: side.cls("TestIntPair")(*a, **k))
    same(lambda side: side.cls("TestCompare")(1, 2, 3))
    same(lambda side: side.cls("TestNonCopyable")(2**70))

    def bare_then_init(side):
        obj = side.cls("TestIntPair").__new__(side.cls("TestIntPair"))
        before = obj.__chandle__()
        obj.__ffi_init__(10, 20)
        return before, obj.sum()

    same(bare_then_init)
    same(lambda side: side.cls("TestCxxNoAutoInit")())


# ---- fields -------------------------------------------------------------------------------


def sample_values(side: Side):
    """Values of every kind, as a setter may receive them."""
    base = side.cls("TestObjectBase")(v_i64=3)
    return [
        0, -5, True, False, 2**40, 2**63, -(2**63), 1.5, 0.1, 1e40, float("inf"), "x",
        "a string longer than the small-string buffer", "", None, b"raw", [1, 2], (), {"a": 1},
        {}, tvm_ffi.Device("cuda", 1), tvm_ffi.dtype("float16"), side.cls("TestIntPair")(1, 2), base,
        side.cls("TestObjectDerived")(v_map={}, v_array=[]), side.cls("_TestCxxIntEnum").high,
        side.cls("_TestCxxStrEnum").mul, 20, "*",
    ]


# A fresh object per type, made the way its tests make it.
def fresh(side: Side, name: str):
    makers = {
        "TestIntPair": lambda: side.cls(name)(1, 2),
        "TestObjectBase": lambda: side.cls(name)(),
        "TestObjectDerived": lambda: side.cls(name)(v_map={"a": 1}, v_array=[1]),
        "TestObjectPtrHolder": lambda: side.cls(name)(side.cls("TestObjectBase")()),
        "TestCxxClassBase": lambda: side.cls(name)(1, 2),
        "TestCxxClassDerived": lambda: side.cls(name)(1, 2, 3.0),
        "TestCxxClassDerivedDerived": lambda: side.cls(name)(1, 2, 3.0, True),
        "TestCxxClassHiddenField": lambda: side.create(name, v_i64=1, v_i32=2),
        "TestCxxClassPolymorphic": lambda: side.create(name, v_i64=1),
        "TestCxxEnumHolder": lambda: side.cls(name)(priority=10, opcode="+"),
        "TestCxxInitSubset": lambda: side.cls(name)(5),
        "TestCxxKwOnly": lambda: side.cls(name)(x=1, y=2, z=3),
        "TestCxxAutoInit": lambda: side.cls(name)(1, c=3),
        "TestCxxAutoInitSimple": lambda: side.cls(name)(1, 2),
        "TestCxxAutoInitAllInitOff": lambda: side.cls(name)(),
        "TestCxxAutoInitKwOnlyDefaults": lambda: side.cls(name)(1, k_required=3),
        "TestCxxAutoInitParent": lambda: side.cls(name)(1),
        "TestCxxAutoInitChild": lambda: side.cls(name)(1, 2, child_kw_only=4),
        "TestCxxNoAutoInit": lambda: side.create(name, x=1, y=2),
        "TestDeepCopyEdges": lambda: side.create(name, v_any=tvm_ffi.Array([1]), v_obj=side.cls("TestIntPair")(1, 2)),
        "TestNonCopyable": lambda: side.cls(name)(42),
        "TestUnregisteredObject": lambda: side.func("make_unregistered_object")(),
        "TestVisitRegions": lambda: side.func("make_visit_region_graph")(False),
        "TestVisitHook": lambda: side.func("make_visit_region_graph")(True),
        "TestCompare": lambda: side.cls(name)(1, "x", 100),
        "TestHash": lambda: side.cls(name)(1, "x", 100),
        "TestCustomHash": lambda: side.cls(name)(1, "x"),
        "TestCustomCompare": lambda: side.cls(name)(1, "x"),
        "TestEqWithoutHash": lambda: side.cls(name)(42, "alpha"),
    }
    return makers[name]()


OBJECT_TYPES = [
    "TestIntPair", "TestObjectBase", "TestObjectDerived", "TestObjectPtrHolder", "TestCxxClassBase",
    "TestCxxClassDerived", "TestCxxClassDerivedDerived", "TestCxxClassHiddenField",
    "TestCxxClassPolymorphic", "TestCxxEnumHolder", "TestCxxInitSubset", "TestCxxKwOnly",
    "TestCxxAutoInit", "TestCxxAutoInitSimple", "TestCxxAutoInitAllInitOff",
    "TestCxxAutoInitKwOnlyDefaults", "TestCxxAutoInitParent", "TestCxxAutoInitChild",
    "TestCxxNoAutoInit", "TestDeepCopyEdges", "TestNonCopyable", "TestUnregisteredObject",
    "TestVisitRegions", "TestVisitHook", "TestCompare", "TestHash", "TestCustomHash",
    "TestCustomCompare", "TestEqWithoutHash",
]

# `int32_t` fields: C++ truncates an out-of-range int (2**40 stores 0), Rust raises TypeError,
# as it does for arguments (the value would silently change).
INT32_FIELDS = {("TestCxxClassBase", "v_i32"), ("TestCxxClassDerived", "v_i32"),
                ("TestCxxClassDerivedDerived", "v_i32"), ("TestCxxClassHiddenField", "v_i32")}
# Likewise a finite `float` beyond `f32`'s range: C++ stores infinity, Rust raises TypeError.
FLOAT32_FIELDS = {("TestCxxClassDerived", "v_f32"), ("TestCxxClassDerivedDerived", "v_f32")}


def out_of_range(name, field, value) -> bool:
    if (name, field) in INT32_FIELDS:
        return type(value) is int and not -(2**31) <= value < 2**31 and -(2**63) <= value < 2**63
    if (name, field) in FLOAT32_FIELDS:
        return type(value) is float and abs(value) != float("inf") and abs(value) > 3.5e38
    return False


@pytest.mark.parametrize("name", OBJECT_TYPES)
def test_fields_read_and_write_as_cxx(name):
    def all_fields(side):
        return fields_of(fresh(side, name))

    same(all_fields)
    names = list(fields_of(fresh(CXX, name)))
    for index in range(len(sample_values(CXX))):
        for field in names:
            def assign(side):
                obj = fresh(side, name)
                value = sample_values(side)[index]
                try:
                    setattr(obj, field, value)
                    return "attribute", fields_of(obj)
                except AttributeError as err:
                    # Read-only from Python: a changed copy still takes the value (through the
                    # reflected setter, on the copy `__replace__` makes).
                    return f"AttributeError: {err}", fields_of(obj.__replace__(**{field: value}))

            value = sample_values(CXX)[index]
            if out_of_range(name, field, value):
                assert outcome(lambda: assign(CXX))[0] == "ok"
                assert normalize(outcome(lambda: assign(RS)))[:2] == ("raise", "TypeError")
                continue
            same(assign)


def test_read_only_fields_of_objects_rust_has_seen_stay_read_only():
    """The one deliberate difference in field writes. C++'s reflected setter writes a read-only
    (`def_ro`) field of any object at any time; a Rust twin's read-only field may be read by
    Rust as `&T`, so its setter writes only objects still under construction (made by the
    creator, a shallow copy, a Python subclass) and never one Rust has seen: there it raises."""
    for side in (CXX, RS):
        built = side.cls("TestIntPair")(1, 2)  # an explicit constructor: built by the code itself
        made = side.create("TestIntPair", a=1, b=2)  # the creator plus setters: still open
        type(made).a.set(made, 5)
        assert made.a == 5
        if side is CXX:
            type(built).a.set(built, 5)
            assert built.a == 5
        else:
            made.sum()  # Rust reads it: sealed from now on
            for obj in (built, made):
                with pytest.raises(AttributeError, match="it can only be written while the object is being constructed"):
                    type(obj).a.set(obj, 6)
            assert (built.a, made.a) == (1, 5)
        assert built.__replace__(a=10).a == 10


# ---- copy, pickle, JSON, repr ---------------------------------------------------------------


@pytest.mark.parametrize("name", OBJECT_TYPES)
def test_copy_pickle_json_and_repr_as_cxx(name):
    same(lambda side: repr(fresh(side, name)))
    same(lambda side: fields_of(copy.copy(fresh(side, name))))
    same(lambda side: fields_of(copy.deepcopy(fresh(side, name))))
    same(lambda side: fields_of(tvm_ffi.get_global_func("ffi.DeepCopy")(fresh(side, name))))
    same(lambda side: fields_of(pickle.loads(pickle.dumps(fresh(side, name)))))
    same(lambda side: json.loads(tvm_ffi.serialization.to_json_graph_str(fresh(side, name))))
    same(
        lambda side: fields_of(
            tvm_ffi.serialization.from_json_graph_str(tvm_ffi.serialization.to_json_graph_str(fresh(side, name)))
        )
    )

    def replaced(side):
        obj = fresh(side, name)
        first = next(iter(fields_of(obj)))
        return fields_of(obj.__replace__(**{first: getattr(obj, first)}))

    same(replaced)

    def shallow_shares(side):
        obj = fresh(side, name)
        dup = copy.copy(obj)
        return [
            getattr(obj, f).same_as(getattr(dup, f))
            for f in fields_of(obj)
            if isinstance(getattr(obj, f), tvm_ffi.Object)
        ], dup.same_as(obj), type(dup) is type(obj)

    same(shallow_shares)


def test_repr_with_addresses_and_in_containers_as_cxx(monkeypatch):
    same(lambda side: tvm_ffi.get_global_func("ffi.ReprPrint")(tvm_ffi.Map({"obj": side.cls("TestIntPair")(1, 2)})))
    pair = {s.prefix: s.cls("TestIntPair")(1, 2) for s in (CXX, RS)}
    same(lambda side: repr(tvm_ffi.Array([pair[side.prefix], pair[side.prefix]])))

    def cyclic(side):
        obj = side.cls("TestObjectDerived")(v_map={}, v_array=[], v_i64=1, v_f64=2.0, v_str="hi")
        obj.v_array = tvm_ffi.Array([obj])
        text = repr(obj)
        obj.v_array = tvm_ffi.Array([])
        return text

    same(cyclic)


# ---- comparison and hashing -----------------------------------------------------------------

COMPARED = {
    "TestIntPair": [(0, 0), (0, 1), (1, 0), (1, 1)],
    "TestCompare": [(1, "x", 100), (1, "x", 999), (1, "y", 100), (2, "a", 0)],
    "TestHash": [(1, "x", 100), (1, "x", 999), (1, "y", 100), (0, "x", 1)],
    "TestCustomHash": [(1, "x"), (1, "y"), (2, "x")],
    "TestCustomCompare": [(1, "zzz"), (2, "aaa"), (1, "aaa")],
    "TestEqWithoutHash": [(42, "alpha"), (42, "beta"), (1, "alpha")],
    "TestCxxClassDerived": [(1, 2, 3.0), (1, 2, 4.0), (0, 2, 3.0)],
}
RELATIONS = ["RecursiveEq", "RecursiveLt", "RecursiveLe", "RecursiveGt", "RecursiveGe"]


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_recursive_comparison_and_hash_as_cxx(name):
    args = COMPARED[name]
    for i, lhs in enumerate(args):
        for j, rhs in enumerate(args):
            for relation in RELATIONS:
                same(lambda side: tvm_ffi.get_global_func("ffi." + relation)(side.cls(name)(*lhs), side.cls(name)(*rhs)))
            # Hash values may mix in the type; what matters is which objects hash alike.
            same(
                lambda side: tvm_ffi.get_global_func("ffi.RecursiveHash")(side.cls(name)(*lhs))
                == tvm_ffi.get_global_func("ffi.RecursiveHash")(side.cls(name)(*rhs))
            )
        same(lambda side: tvm_ffi.get_global_func("ffi.RecursiveHash")(tvm_ffi.Array([side.cls(name)(*lhs)])) is not None)
    # A hook's hash is the object's hash.
    same(lambda side: tvm_ffi.get_global_func("ffi.RecursiveHash")(side.cls("TestCustomHash")(1, "x"))
         == tvm_ffi.get_global_func("ffi.RecursiveHash")(1))
    # Objects of different types.
    same(lambda side: tvm_ffi.get_global_func("ffi.RecursiveEq")(side.cls("TestIntPair")(1, 2), side.cls("TestCompare")(1, "x", 0)))
    same(lambda side: tvm_ffi.get_global_func("ffi.RecursiveLt")(side.cls("TestIntPair")(1, 2), side.cls("TestCompare")(1, "x", 0)))
    same(lambda side: tvm_ffi.structural_equal(side.cls("TestIntPair")(1, 2), side.cls("TestIntPair")(1, 2)))


def test_python_dataclass_dunders_use_the_hooks_as_for_cxx():
    """`eq=True, order=True, unsafe_hash=True` on `_TestCxxClassDerived` (inherited)."""
    def semantics(side):
        d = side.cls("TestCxxClassDerived")
        a, b, c = d(1, 2, 3.0), d(1, 2, 3.0), d(1, 2, 4.0)
        dd = side.cls("TestCxxClassDerivedDerived")(1, 2, 3.0, True)
        return a == b, a != c, a < c, c > a, hash(a) == hash(b), len({a, b, c}), dd == dd, a == 1

    same(semantics)

    def hook_columns(side):
        cls = side.cls("TestCustomCompare")
        return sorted(n for n in ("__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_repr__") if callable(cls.__dict__.get(n)))

    same(hook_columns)


# ---- constructors, methods and conversions --------------------------------------------------


def test_methods_and_functions_as_cxx():
    same(lambda side: side.cls("TestIntPair")(10, 20).sum())
    same(lambda side: side.func("TestIntPairSum")(side.cls("TestIntPair")(3, 4)))
    same(lambda side: side.func("TestIntPairSum")(side.cls("TestCompare")(3, "x", 4)))
    same(lambda side: side.create("TestObjectBase", v_i64=12).add_i64(1))
    same(lambda side: side.create("TestObjectBase").add_i64("x"))
    same(lambda side: type(side.create("TestObjectBase")).add_i64.__doc__)
    same(lambda side: side.cls("TestObjectBase").v_i64.__doc__)

    def unregistered(side):
        x = side.func("make_unregistered_object")()
        return (
            type(x).__tvm_ffi_type_info__.type_key, x.v1, x.v2, x.get_v1_plus_one(), x.get_v2_plus_two(),
            type(x).__name__, type(x).__module__, type(x).__qualname__,
            "Auto-generated fallback class" in type(x).__doc__,
            type(x).get_v1_plus_one.__doc__, type(x).get_v2_plus_two.__doc__, repr(x).count("v1="),
        )

    same(unregistered)


@pytest.mark.parametrize("value", [None, 1, "x", "TestCompare", "self"])
def test_convert_hook_as_cxx(value):
    def convert(side):
        ffi_convert = core._lookup_type_attr(core._object_type_key_to_index(side.key("TestIntPair")), "__ffi_convert__")
        arg = {"TestCompare": side.cls("TestCompare")(1, "x", 2), "self": side.cls("TestIntPair")(1, 2)}.get(value, value)
        return ffi_convert(arg)

    same(convert)


def test_type_schema_checks_as_cxx():
    from tvm_ffi.core import TypeSchema

    for value in (42, None, "hello"):
        same(lambda side: TypeSchema.from_json_str(json.dumps({"type": side.key("TestIntPair")})).check_value(value))


# ---- enums ----------------------------------------------------------------------------------


def test_enums_as_cxx():
    same(lambda side: [repr(e) for e in side.cls("_TestCxxIntEnum")])
    same(lambda side: (side.cls("_TestCxxIntEnum").high.value, side.cls("_TestCxxIntEnum").high.name))
    same(lambda side: side.cls("_TestCxxIntEnum")(20).same_as(side.cls("_TestCxxIntEnum").high))
    same(lambda side: side.cls("_TestCxxIntEnum")(99))
    same(lambda side: side.cls("_TestCxxStrEnum")("*").same_as(side.cls("_TestCxxStrEnum").mul))
    same(lambda side: (side.cls("_TestCxxStrEnum").mul.value, side.cls("_TestCxxStrEnum").mul.name))
    same(lambda side: side.cls("_TestCxxIntEnum").low == 10)
    same(lambda side: tvm_ffi.get_global_func("ffi.ReprPrint")(side.cls("_TestCxxStrEnum").add))
    same(lambda side: copy.deepcopy(side.cls("_TestCxxIntEnum").high).same_as(side.cls("_TestCxxIntEnum").high))
    same(lambda side: tvm_ffi.get_global_func("ffi.DeepCopy")(side.cls("_TestCxxStrEnum").mul).same_as(side.cls("_TestCxxStrEnum").mul))

    def holder_round_trip(side):
        holder = side.cls("TestCxxEnumHolder")(priority=20, opcode="*")
        text = tvm_ffi.serialization.to_json_graph_str(holder)
        back = tvm_ffi.serialization.from_json_graph_str(text)
        low = side.cls("TestCxxEnumHolder")(priority=side.cls("_TestCxxIntEnum").low, opcode="+")
        return (
            json.loads(text), back.priority.same_as(side.cls("_TestCxxIntEnum").high),
            back.opcode.same_as(side.cls("_TestCxxStrEnum").mul), tvm_ffi.serialization.to_json_graph_str(low),
        )

    same(holder_round_trip)

    def rejected(side):
        holder = side.cls("TestCxxEnumHolder")(priority=20, opcode="*")
        errors = []
        for field, value in (("priority", 99), ("opcode", "/"), ("priority", side.cls("_TestCxxStrEnum").add)):
            try:
                setattr(holder, field, value)
            except TypeError as err:
                errors.append(str(err))
        return errors, repr(holder)

    same(rejected)

    # The plain enum whose entries are defined with the type.
    class VariantCxx(tvm_ffi.dataclasses.Enum, type_key="testing.TestEnumVariant"):
        Alpha: ClassVar[Any]
        Beta: ClassVar[Any]

    class VariantRs(tvm_ffi.dataclasses.Enum, type_key="testing.rs.TestEnumVariant"):
        Alpha: ClassVar[Any]
        Beta: ClassVar[Any]

    variant = {CXX.prefix: VariantCxx, RS.prefix: VariantRs}
    same(lambda side: side.func("enum_variant_get")("Alpha").same_as(variant[side.prefix].Alpha))
    same(lambda side: side.func("enum_variant_get")("Beta").same_as(variant[side.prefix].get(1)))
    same(lambda side: side.func("enum_variant_get")("Gamma"))
    same(lambda side: (variant[side.prefix].attr_dict["code"][variant[side.prefix].Alpha], variant[side.prefix].attr_dict["code"][variant[side.prefix].Beta]))
    same(lambda side: repr(core._lookup_type_attr(core._object_type_key_to_index(side.key("TestEnumVariant")), "__ffi_enum__")))
    same(lambda side: tvm_ffi.serialization.to_json_graph_str(variant[side.prefix].Beta))
    same(lambda side: tvm_ffi.structural_equal(variant[side.prefix].Alpha, side.func("enum_variant_get")("Alpha")))

    def typo(side):
        class Typo(tvm_ffi.dataclasses.Enum, type_key=side.key("TestEnumVariant")):
            Missing: ClassVar[Any]

    same(typo)


# ---- structural visits ----------------------------------------------------------------------


@pytest.mark.parametrize("with_hook", [False, True])
@pytest.mark.parametrize("order", ["pre", "post"])
def test_structural_visit_regions_as_cxx(with_hook, order):
    def walk(side):
        seen = []
        graph = side.func("make_visit_region_graph")(with_hook)
        tvm_ffi.structural_walk(
            graph,
            with_def_region_kind=(object, lambda value, kind: seen.append((describe(value), int(kind)))),
            order=order,
        )
        return seen

    same(walk)


# ---- py_class subclasses --------------------------------------------------------------------


def make_py_subclasses(side: Side):
    suffix = "Rs" if side is RS else "Cxx"

    @py_class(f"twins.py.ChildOfObjectBase{suffix}")
    class ChildOfObjectBase(side.cls("TestObjectBase")):
        extra: int
        note: str = "n"

    @py_class(f"twins.py.ChildOfClassBase{suffix}")
    class ChildOfClassBase(side.cls("TestCxxClassBase")):
        flag: bool

    @py_class(f"twins.py.ChildOfPtrHolder{suffix}")
    class ChildOfPtrHolder(side.cls("TestObjectPtrHolder")):
        extra: int

    return ChildOfObjectBase, ChildOfClassBase, ChildOfPtrHolder


PY_CHILDREN = {side.prefix: make_py_subclasses(side) for side in (CXX, RS)}


def test_py_class_subclasses_as_cxx():
    def layout(side):
        return [
            [(f.name, f.offset, f.size) for f in child.__tvm_ffi_type_info__.fields]
            for child in PY_CHILDREN[side.prefix]
        ]

    same(layout)

    def make(side):
        of_base, of_class_base, of_holder = PY_CHILDREN[side.prefix]
        a = of_base(v_i64=1, v_f64=2.0, v_str="s", extra=3)
        b = of_class_base(v_i64=1, v_i32=2, flag=True)
        target = side.cls("TestObjectDerived")(v_map={"answer": 42}, v_array=[1, "two"], v_i64=7)
        c = of_holder(value=target, optional_value=None, extra=3)
        return a, b, c, target

    def use(side):
        a, b, c, target = make(side)
        return [
            fields_of(a), fields_of(copy.copy(a)), fields_of(copy.deepcopy(a)),
            fields_of(b), fields_of(c), c.value.same_as(target), copy.copy(c).value.same_as(target),
            repr(a).replace("Cxx", "").replace("Rs", ""),
        ]

    same(use)

    # Where Rust differs, on purpose (see docs/book/src/soundness.md): the runtime's copy of
    # a Python subclass instance takes its references without Rust's lock, so Rust uses no
    # such instance of a type with an `Rw` field holding a reference (`v_str`, `value`), and
    # never replaces a reference it holds (a deep copy replaces `value` in the copy).
    a, _, c, target = make(CXX)
    deep = copy.deepcopy(c)
    assert a.add_i64(5) == 6
    assert not deep.value.same_as(target) and deep.value.v_i64 == 7
    a, _, c, _ = make(RS)
    with pytest.raises(RuntimeError, match="its `Rw` field `v_str` holds a reference"):
        a.add_i64(5)
    with pytest.raises(AttributeError, match="Cannot replace the value of the field"):
        copy.deepcopy(c)


# ---- twins only: what C++ cannot show from Python --------------------------------------------


def test_schema_all_types_methods_work_from_python():
    """C++'s `testing.SchemaAllTypes` cannot reach Python (its class is not an `Object`
    subclass), so its twin's methods are checked directly against the C++ source's semantics."""
    info = core._lookup_or_register_type_info_from_type_key("testing.rs.SchemaAllTypes")
    methods = {m.name: m.func for m in info.methods}
    made = methods["make_with"](3, 1.5, "name")
    assert (made.v_bool, made.v_int, made.v_float, made.v_string) == (True, 3, 1.5, "name")
    assert str(made.v_device) == "cpu:0" and str(made.v_dtype) == "float32"
    assert made.v_variant == "v" and made.v_opt_int is None and made.v_opt_arr_variant is None
    assert methods["add_int"](made, 4) == 7
    assert list(methods["append_int"](made, [1, 2], 3)) == [1, 2, 3]
    assert methods["maybe_concat"](made, "a", "b") == "ab"
    assert methods["maybe_concat"](made, None, "b") == "b"
    assert methods["maybe_concat"](made, None, None) is None
    merged = methods["merge_map"](made, {"x": [1], "y": [2]}, {"y": [3], "z": [4]})
    assert {k: list(v) for k, v in merged.items()} == {"x": [1], "y": [2, 3], "z": [4]}
    made.v_opt_arr_variant = [1, "two"]
    assert list(made.v_opt_arr_variant) == [1, "two"]
    with pytest.raises(TypeError):
        made.v_opt_arr_variant = [1.5]
    made.v_variant = {"k": 1}
    assert dict(made.v_variant) == {"k": 1}
    with pytest.raises(TypeError):
        made.v_variant = 1.5


# ---- parity under fuzzing ---------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Objects are drawn by name and made on each side.
OBJECT_MARKERS = {
    "<pair>": lambda side: side.cls("TestIntPair")(1, 2),
    "<base>": lambda side: side.cls("TestObjectBase")(v_i64=3),
    "<derived>": lambda side: side.cls("TestObjectDerived")(v_map={}, v_array=[]),
    "<high>": lambda side: side.cls("_TestCxxIntEnum").high,
    "<mul>": lambda side: side.cls("_TestCxxStrEnum").mul,
}
VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.floats(width=64),
    st.text(max_size=24),
    st.none(),
    st.binary(max_size=8),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
    st.sampled_from(sorted(OBJECT_MARKERS)),
)
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def realize(side: Side, value):
    if isinstance(value, str) and value in OBJECT_MARKERS:
        return OBJECT_MARKERS[value](side)
    return value


def same_or_documented(probe: Callable[[Side], Any]):
    """`same`, except for the documented narrowing difference: where C++ truncates an int to
    `int32_t` or a float to `float`, the twin raises TypeError naming the range."""
    expected = outcome(lambda: probe(CXX))
    actual = normalize(outcome(lambda: probe(RS)))
    if actual != expected and expected[0] == "ok" and actual[:2] == ("raise", "TypeError"):
        assert "is out of range for `i32`" in actual[2] or "is out of range for `f32`" in actual[2], actual
        return
    assert actual == expected


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(CONSTRUCTIBLE)))
def test_constructors_under_fuzzing_behave_as_cxx(data, name):
    args = data.draw(st.lists(VALUES, max_size=len(CONSTRUCTIBLE[name]) + 1))
    keys = st.sampled_from(CONSTRUCTIBLE[name] + ["bogus"])
    kwargs = data.draw(st.dictionaries(keys, VALUES, max_size=4))
    same_construction(
        name,
        args,
        kwargs,
        lambda side, a, k: fields_of(
            side.cls(name)(*[realize(side, v) for v in a], **{key: realize(side, v) for key, v in k.items()})
        ),
        same_or_documented,
    )


@FUZZ
@given(data=st.data(), name=st.sampled_from(OBJECT_TYPES), value=VALUES)
def test_field_writes_under_fuzzing_behave_as_cxx(data, name, value):
    field = data.draw(st.sampled_from(list(fields_of(fresh(CXX, name)))))

    def assign(side):
        obj = fresh(side, name)
        try:
            setattr(obj, field, realize(side, value))
            return "attribute", fields_of(obj)
        except AttributeError as err:
            return f"AttributeError: {err}", fields_of(obj.__replace__(**{field: realize(side, value)}))

    same_or_documented(assign)


@FUZZ
@given(name=st.sampled_from(sorted(COMPARED)), data=st.data())
def test_comparisons_under_fuzzing_behave_as_cxx(name, data):
    arity = len(COMPARED[name][0])
    small = st.one_of(st.integers(-3, 3), st.sampled_from(["", "a", "b", "zz"]), st.floats(-2, 2))
    lhs, rhs = (data.draw(st.tuples(*[small] * arity)) for _ in range(2))
    relation = data.draw(st.sampled_from(RELATIONS + ["hash"]))

    def compare(side):
        a, b = side.cls(name)(*lhs), side.cls(name)(*rhs)
        if relation == "hash":
            hash_of = tvm_ffi.get_global_func("ffi.RecursiveHash")
            return hash_of(a) == hash_of(b)
        return tvm_ffi.get_global_func("ffi." + relation)(a, b)

    same_or_documented(compare)
