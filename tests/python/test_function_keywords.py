"""Keyword syntax on a shipped package's functions and methods (`my_ext.add(a=1, b=2)`,
`my_ext.Point.at(1, y=2)`, `p.moved(1, dy=2)`): `_ffi_api.py` (written by the build backend)
replaces each function and method that has named parameters with a `KeywordFunction` (or a
`KeywordMethod`, which binds the object it is read from), C-level subclasses of
`tvm_ffi.Function` made by the Rust library, second objects sharing the function's handle. Every
outcome, value or error text, must be what the runtime's function gives for the same keywords
in its `KWARGS` convention (which the Rust binder reads); positional calls are the runtime's."""
import json

import pytest

from conftest import run_in_fresh_python
from test_construction import REPLACE_KEYWORD_VALUES, package_env

# (function, args, kwargs): values, defaults, keywords in and out of order, after positional
# ones, unknown, doubled, missing, wrong types, a callback passed by keyword.
COMPARE = r"""
import json, sys
import tvm_ffi
from tvm_ffi import core
import my_ext

p = my_ext.Point(1, 2)
cases = [
    ("add", (1, 2), {}), ("add", (), {"a": 1, "b": 2}), ("add", (1,), {"b": 2}),
    ("add", (), {"b": 2, "a": 1}), ("add", (), {"b": 2}), ("add", (1,), {"a": 2}),
    ("add", (1, 2), {"c": 3}), ("add", (), {}), ("add", (1,), {"b": "x"}),
    ("add", (1, 2, 3), {}), ("shift", (3,), {}), ("shift", (), {"x": 3}),
    ("shift", (3,), {"by": 4}), ("shift", (), {"by": 4}), ("shift", (), {"by": 4, "x": 3}),
    ("checked_div", (), {"a": 7, "b": 0}), ("greet", (), {"name": "kw"}),
    ("apply_twice", (), {"f": lambda v: v * 3, "x": 2}), ("sum", (), {"values": [1, 2, 3]}),
    ("at", (4,), {}), ("at", (4,), {"y": 5}), ("at", (), {"y": 5, "x": 4}), ("at", (), {"z": 1}),
    # The runtime's own markers as keyword values: bound as values, none dropped.
    ("add", (1, 2), {"a": core.MISSING}), ("add", (), {"a": core.KWARGS, "b": 2}),
    # Member methods, called on the object (bound) and through the class.
    ("p.moved", (1,), {}), ("p.moved", (1,), {"dy": 3}), ("p.moved", (), {"dy": 3, "dx": 1}),
    ("p.moved", (), {"dy": 3}), ("p.moved", (1,), {"dx": 2}), ("p.moved", (), {"self": p, "dx": 1}),
    ("p.scale", (), {"k": 3}), ("p.norm2", (), {"k": 3}), ("Point.moved", (p,), {"dx": 5}),
    ("Point.moved", (), {"dx": 5}),
]

def outcome(call):
    try:
        value = call()
    except Exception as err:  # the comparison is the test: both calls must agree
        return [type(err).__name__, str(err)]
    return [type(value).__qualname__, repr(value)]

def target(name):
    if name.startswith("p."):
        return getattr(p, name[2:])
    if name.startswith("Point."):
        return getattr(my_ext.Point, name[6:])
    return getattr(my_ext.Point, name) if name == "at" else getattr(my_ext, name)

def runtime(name, flat):  # the runtime's own function object, given the `KWARGS` form
    short = name.split(".")[-1]
    if short == name and name != "at":
        return tvm_ffi.get_global_func("my_ext." + name)(*flat)
    method = [m.func for m in my_ext.Point.__tvm_ffi_type_info__.methods if m.name == short][0]
    assert type(method) is core.Function  # the type's method table keeps the runtime's object
    return method(p, *flat) if name.startswith("p.") else method(*flat)

out = {"types": {}, "differences": [], "compared": 0, "values": {}}
for name, args, kwargs in cases:
    f = target(name)
    kind = getattr(f, "__func__", f)  # a bound method's function
    out["types"][name] = f"{type(kind).__module__}.{type(kind).__name__}"
    flat = [*args, core.KWARGS, *[v for kv in kwargs.items() for v in kv]] if kwargs else args
    mine = outcome(lambda: f(*args, **kwargs))
    reference = outcome(lambda: runtime(name, flat))
    out["compared"] += 1
    if mine != reference:
        out["differences"].append([name, repr(args), repr(kwargs), mine, reference])
out["values"] = [my_ext.add(a=1, b=2), my_ext.add(1, b=2), my_ext.shift(3), my_ext.shift(x=3, by=4),
                 my_ext.Point.at(y=2, x=1).y, my_ext.apply_twice(my_ext.narrow, x=5),
                 p.moved(dy=3, dx=1).y, my_ext.Point.moved(p, 1).x]
out["instance"] = isinstance(my_ext.add, tvm_ffi.Function) and my_ext.add.__name__ == "add"
print(json.dumps(out))
"""


# Makes the package's library lack the keyword builder's export.
NO_EXPORT = r"""
import tvm_ffi.libinfo
real = tvm_ffi.libinfo.load_lib_module
class NoExport:
    def __init__(self, lib):
        self.lib = lib
    def get_function(self, name):
        if name.startswith("__sdk_python_keyword_function"):
            raise AttributeError(name)
        return self.lib.get_function(name)
tvm_ffi.libinfo.load_lib_module = lambda *a, **k: NoExport(real(*a, **k))
"""


def compare(script_prefix=""):
    run = run_in_fresh_python(script_prefix + COMPARE, env=package_env())
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_package_functions_take_keywords_as_the_runtime_binds_them():
    out = compare()
    # The Rust library's C-level types, not the Python fallback.
    assert set(out["types"].values()) == {"tvm_ffi_sdk.KeywordFunction", "tvm_ffi_sdk.KeywordMethod"}, out["types"]
    assert out["types"]["p.moved"] == "tvm_ffi_sdk.KeywordMethod"
    assert out["compared"] == 35
    assert out["differences"] == []
    assert out["values"] == [3, 3, 4, 7, 2, 5, 5, 2]
    assert out["instance"]


def test_without_the_library_export_a_python_subclass_takes_keywords_the_same_way():
    # `LIB.get_function` fails for the export: the helper falls back to its Python subclass.
    out = compare(NO_EXPORT)
    # Functions: a Python subclass of `tvm_ffi.Function`; methods: Python functions.
    assert set(out["types"].values()) == {"my_ext._ffi_api.KeywordFunction", "builtins.function"}, out["types"]
    assert out["compared"] == 35
    assert out["differences"] == []
    assert out["values"] == [3, 3, 4, 7, 2, 5, 5, 2]


def test_error_texts_name_the_function_and_the_keyword():
    script = r"""
import my_ext
for call in [lambda: my_ext.shift(1, step=2), lambda: my_ext.shift(1, x=2),
             lambda: my_ext.shift(by=2), lambda: my_ext.shift(1, by="two")]:
    try:
        call()
    except TypeError as err:
        print(err)
"""
    run = run_in_fresh_python(script, env=package_env())
    signature = "`my_ext.shift(x: int, by: int = 1) -> int`"
    assert run.stdout.strip().splitlines() == [
        f"Unexpected keyword argument `step` when calling: {signature}",
        f"Multiple values for argument `x` when calling: {signature}",
        f"Missing argument `x` when calling: {signature}",
        f"Mismatched type on argument #1 (`by`) when calling: {signature}. Expected `int` but got `ffi.SmallStr`",
    ]


def test_the_keyword_call_holds_no_reference_it_does_not_own():
    script = r"""
import sys
import my_ext

a, b, name = 10**12 + 1, 10**12 + 2, "".join(["k", "w"])
point = my_ext.Point(1, 2)
many = {f"k{i}": name for i in range(10)}
before = [sys.getrefcount(v) for v in (a, b, name)]
for _ in range(2000):
    my_ext.add(a, b)
    my_ext.add(a, b=b)
    my_ext.add(b=b, a=a)
    my_ext.greet(name=name)
    my_ext.Point.at(a, y=b)
    point.moved(a, dy=b)
    point.moved(dy=b, dx=a)
    for bad in [lambda: my_ext.add(a, c=b), lambda: my_ext.add(b=b), lambda: my_ext.add(a, **many)]:
        try:
            bad()
        except TypeError as err:
            assert "`c`" in str(err) or "`a`" in str(err) or "`k" in str(err), err
after = [sys.getrefcount(v) for v in (a, b, name)]
assert before == after, (before, after)
print(my_ext.add(a, b=b))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "2000000000003"


def test_the_keyword_state_is_out_of_python_reach():
    # The `(KWARGS, MISSING, names)` each instance keeps is written once by the Rust builder
    # and read by its C call: no attribute reaches it, an instance made from Python has none
    # (and calls as the runtime's `Function`), and the type cannot be subclassed.
    script = r"""
import gc
import my_ext

f = my_ext.add
kind = type(f)
assert not any("sdk" in name for name in dir(kind)), dir(kind)
assert not hasattr(f, "__sdk_keywords__")
bare = kind.__new__(kind)
try:
    bare(a=1, b=2)
except TypeError as err:
    print(err)
try:
    class Sub(kind):
        pass
except TypeError as err:
    print("no subclass")
del bare
gc.collect()
print(f(a=1, b=2))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines() == [
        "__call__() got an unexpected keyword argument 'a'",
        "no subclass",
        "3",
    ]


def test_release_gil_reads_and_writes_as_the_runtime_property_does():
    # The type defines its own `release_gil` (what the runtime's `__call__` reads per call),
    # taken from the function it replaces; writes and deletions go through the runtime's
    # property, so they accept and refuse what it does (a float is truncated, a string or
    # `None` refused, a deletion not implemented).
    script = r"""
import tvm_ffi
import my_ext

def outcomes(f):
    out = [f.release_gil]
    for value in [False, 0, 1, True, 2, "x", 1.5, None]:
        try:
            f.release_gil = value
            out.append(f.release_gil)
        except TypeError as err:
            out.append(type(err).__name__)
    out.append(f(1, b=2) if f is my_ext.add else f(1, 2))
    return out

runtime = tvm_ffi.get_global_func("my_ext.add")
print(outcomes(my_ext.add) == outcomes(runtime), outcomes(my_ext.add))
try:
    del my_ext.add.release_gil
except Exception as err:
    print(type(err).__name__)
try:
    del tvm_ffi.get_global_func("my_ext.add").release_gil
except Exception as err:
    print(type(err).__name__)
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines() == [
        "True [True, False, False, True, True, True, 'TypeError', True, 'TypeError', 3]",
        "NotImplementedError",
        "NotImplementedError",
    ]


def test_python_code_run_by_a_collection_inside_a_keyword_call_cannot_free_what_it_passes():
    # test_construction's reproduction (a `gc.callbacks` entry replaces the keyword values of
    # the call in flight), through a function: the repacking takes its references first.
    script = (REPLACE_KEYWORD_VALUES.replace('"lo"', '"a"').replace('"hi"', '"b"')
              .replace("my_ext.Interval(", "my_ext.add(")) + 'print("hit" if hit else "missed")\n'
    assert "my_ext.add(**" in script and 'r["a"] = 1.0' in script
    run = run_in_fresh_python(script, env={**package_env(), "PYTHONDEVMODE": "1"})
    *_, error, hit = run.stdout.strip().splitlines()
    assert hit == "hit"  # the callback did replace the values during a call
    assert "Expected `int` but got `ffi.OpaquePyObject`" in error, run.stdout


@pytest.mark.parametrize("prefix", ["", NO_EXPORT], ids=["native", "fallback"])
def test_a_second_run_of_the_helper_keeps_every_function_working(prefix):
    # Running the helper again over the package's namespace keeps the functions it made (a
    # second wrapper would take their handle from the first, which `my_ext` and bound
    # methods still hold); a `__new__` replaced on the type from Python does not reach the
    # builder, which makes its instances with the base's own `tp_new` (a reviewer's
    # reproduction: the builder wrote its slots into whatever `__new__` returned).
    script = prefix + r"""
import tvm_ffi
import my_ext

api = my_ext._ffi_api
bound = my_ext.Point(1, 2).moved
api._ffi_signatures(vars(api), "my_ext.", api.LIB)
assert my_ext.add.__chandle__() != 0 and api.add is my_ext.add
kind = type(my_ext.add)
victim = bytes(bytearray(b"A" * 64))
kind.__new__ = staticmethod(lambda cls, *args, **kwargs: victim)
fresh = {"add": tvm_ffi.get_global_func("my_ext.add")}
api._ffi_signatures(fresh, "my_ext.", api.LIB)
assert type(fresh["add"]).__name__ == "KeywordFunction" and victim == b"A" * 64, (fresh, victim)
print(my_ext.add(1, b=2), bound(1, dy=2).y, fresh["add"](a=1, b=2))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "3 4 3"


def test_earlier_holders_of_a_function_keep_working():
    # The keyword function shares the handle (a reference of its own): whoever held the
    # runtime's object before (an alias taken before the helper ran, the type's method table,
    # another thread running the helper over the same namespace) still holds a working one.
    # (A reviewer's reproductions: when the handle was moved, each of these called an empty
    # function and crashed.)
    script = r"""
import threading
import tvm_ffi
import my_ext

api = my_ext._ffi_api
alias = tvm_ffi.get_global_func("my_ext.add")
namespace = {"add": alias, "plus": alias, "shift": tvm_ffi.get_global_func("my_ext.shift")}
api._ffi_signatures(namespace, "my_ext.", api.LIB)  # `plus` is no registered name: left alone
assert alias(1, 2) == 3 and namespace["plus"] is alias and namespace["add"](a=1, b=2) == 3
for method in my_ext.Point.__tvm_ffi_type_info__.methods:
    assert type(method.func) is tvm_ffi.core.Function and method.func.__chandle__(), method.name

shared = {name: tvm_ffi.get_global_func("my_ext." + name) for name in ["add", "shift", "greet", "sum"]}
originals = dict(shared)
threads = [threading.Thread(target=api._ffi_signatures, args=(shared, "my_ext.", api.LIB))
           for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
for name, function in [*shared.items(), *originals.items()]:
    assert function.__chandle__(), name
print(shared["add"](1, b=2), originals["add"](1, 2), shared["shift"](x=1), shared["greet"](name="t"))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "3 3 2 hello, t"


def test_the_builder_refuses_what_it_cannot_use_with_a_python_error():
    # Called through ctypes with objects it cannot use, the builder raises a `TypeError` (a
    # null result without a Python error would end the process in ctypes).
    script = r"""
import tvm_ffi
from tvm_ffi import core
import my_ext

api = my_ext._ffi_api
native = api._ffi_native_builder(api.LIB, "__sdk_python_keyword_function_v2", 7)
identity = api.LIB.get_function("__sdk_python_identity_v1")
f = tvm_ffi.get_global_func("my_ext.add")
empty = core.Function.__new__(core.Function)
for args in [(core.Function, 5, identity), (core.Function, f, 5), (core.Function, empty, identity),
             (object, f, identity)]:
    try:
        native(*args, core.KWARGS, object(), ("a", "b"), False)
        print("accepted")
    except TypeError as err:
        print("TypeError", err)
made = native(core.Function, f, identity, core.KWARGS, object(), ("a", "b"), False)
print(made(a=1, b=2), f(1, 2))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines() == [
        "TypeError expected two tvm_ffi.Function objects",
        "TypeError expected two tvm_ffi.Function objects",
        "TypeError the function holds no handle",
        "TypeError no keyword function type can be made over this base",
        "3 3",
    ]
