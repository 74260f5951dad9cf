"""Keyword syntax on a shipped package's functions and methods (`my_ext.add(a=1, b=2)`,
`my_ext.Point.at(1, y=2)`, `p.moved(1, dy=2)`): `_ffi_api.py` (written by the build backend)
replaces each function and method that has named parameters with a generated Python function of
those parameters and defaults, which calls the runtime's with every argument in position (a
method binds the object it is read from). Every outcome must be what the runtime's function
gives for the same keywords in its `KWARGS` convention (which the Rust binder reads): the same
value, or the same error, except that Python binds the keywords itself and raises its own
`TypeError` for an unknown, doubled or missing one."""
import json

from conftest import run_in_fresh_python
from test_construction import package_env

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

out = {"types": {}, "differences": [], "compared": 0, "python_binding": 0, "values": {}}
for name, args, kwargs in cases:
    f = target(name)
    kind = getattr(f, "__func__", f)  # a bound method's function
    out["types"][name] = f"{type(kind).__module__}.{type(kind).__name__}"
    flat = [*args, core.KWARGS, *[v for kv in kwargs.items() for v in kv]] if kwargs else args
    mine = outcome(lambda: f(*args, **kwargs))
    reference = outcome(lambda: runtime(name, flat))
    out["compared"] += 1
    binding = reference[0] == "TypeError" and reference[1].startswith(
        ("Missing argument", "Multiple values", "Unexpected keyword", "Mismatched number"))
    if binding and mine[0] == "TypeError" and "argument" in mine[1]:  # Python's own binding error
        out["python_binding"] += 1
    elif mine != reference:
        out["differences"].append([name, repr(args), repr(kwargs), mine, reference])
out["values"] = [my_ext.add(a=1, b=2), my_ext.add(1, b=2), my_ext.shift(3), my_ext.shift(x=3, by=4),
                 my_ext.Point.at(y=2, x=1).y, my_ext.apply_twice(my_ext.narrow, x=5),
                 p.moved(dy=3, dx=1).y, my_ext.Point.moved(p, 1).x]
out["instance"] = my_ext.add.__name__ == "add" and my_ext.add.__module__ == "my_ext._ffi_api"
print(json.dumps(out))
"""


def compare():
    run = run_in_fresh_python(COMPARE, env=package_env())
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_package_functions_take_keywords_as_the_runtime_binds_them():
    out = compare()
    # Functions and methods: Python functions around the runtime's.
    assert set(out["types"].values()) == {"builtins.function"}, out["types"]
    assert out["compared"] == 35
    assert out["differences"] == []
    assert out["python_binding"] == 13
    assert out["values"] == [3, 3, 4, 7, 2, 5, 5, 2]
    assert out["instance"]


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
    # Python binds the keywords (its messages); the Rust function converts the values (its).
    assert run.stdout.strip().splitlines() == [
        "shift() got an unexpected keyword argument 'step'",
        "shift() got multiple values for argument 'x'",
        "shift() missing 1 required positional argument: 'x'",
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
            assert "'c'" in str(err) or "'a'" in str(err) or "'k" in str(err), err
after = [sys.getrefcount(v) for v in (a, b, name)]
assert before == after, (before, after)
print(my_ext.add(a, b=b))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "2000000000003"


def test_a_second_run_of_the_helper_keeps_every_function_working():
    # Running the helper again over the package's namespace keeps the functions it made (the
    # same objects), which `my_ext` and bound methods hold.
    script = r"""
import tvm_ffi
import my_ext

api = my_ext._ffi_api
add, bound = my_ext.add, my_ext.Point(1, 2).moved
api._ffi_signatures(vars(api), "my_ext.", api.LIB)
assert api.add is add and my_ext.add is add and my_ext.Point(1, 2).moved.__func__ is bound.__func__
print(my_ext.add(1, b=2), bound(1, dy=2).y)
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "3 4"


def test_earlier_holders_of_a_function_keep_working():
    # The keyword function calls the runtime's object: whoever held it before (an alias taken
    # before the helper ran, the type's method table, another thread running the helper over the
    # same namespace) still holds a working one.
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
for name, function in originals.items():
    assert function.__chandle__(), name
print(shared["add"](1, b=2), originals["add"](1, 2), shared["shift"](x=1), shared["greet"](name="t"))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "3 3 2 hello, t"
