"""Construction from Python through a shipped package: `_ffi_api.py` (written by the build
backend) gives each class whose runtime `__init__` adds nothing to the call a metaclass that
hands `Type(...)` straight to the type's `__ffi_init__` (for a Rust constructor, a generated
Python function of its parameters, which Python binds). Every outcome must be what the
runtime's own `__init__` gives for the same arguments: the same value or error, except that a
generated function raises Python's own `TypeError` for an unknown, doubled or missing keyword
or a wrong number of arguments."""
import json
import os
import pathlib

from conftest import ROOT, example_lib_path, run_in_fresh_python

# Argument sets for every class: successes, missing, surplus, unknown and doubled keywords,
# wrong types, and a keyword given the runtime's MISSING (which its `__init__` drops).
COMPARE = r"""
import json
import tvm_ffi
from tvm_ffi import core
import my_ext

base = type(tvm_ffi.Object)
M = core.MISSING
cases = [
    ((1, 2), {}), ((1,), {}), ((1,), {"label": "q"}), ((), {"x": 3, "y": 4}), ((), {}),
    ((1, 2, 3), {}), ((1, 2, 3, 4), {}), ((1,), {"z": 3}), (("s",), {}), ((1,), {"x": 2}),
    ((1,), {"label": M}), ((1.5, 2.5), {}), ((), {"lo": 1.0, "hi": 2.0}), ((1, 2), {"y": 3}),
    ((None,), {}),
    # Keywords in a Rust constructor's parameter order or not, leaving a gap, or of a wrong
    # type.
    ((), {"hi": 2.0, "lo": 1.0}), ((), {"hi": 2.0}), ((), {"lo": "s", "hi": 2.0}),
    ((1.0,), {"hi": "s"}),
]

def outcome(call):
    try:
        value = call()
    except Exception as err:  # the comparison is the test: both paths must agree
        return [type(err).__name__, str(err)]
    return [type(value).__qualname__, repr(value)]

out = {"metaclasses": {}, "calls": {}, "differences": [], "compared": 0, "python_binding": 0}
for name in ["Point", "Point3", "Interval", "Options", "Version"]:
    cls = getattr(my_ext, name)
    out["metaclasses"][name] = type(cls).__name__
    out["calls"][name] = type(type(cls).__dict__["__call__"]).__name__
    for args, kwargs in cases:
        fast = outcome(lambda: cls(*args, **kwargs))
        runtime = outcome(lambda: base.__call__(cls, *args, **kwargs))  # the runtime's __init__
        out["compared"] += 1
        generated = out["calls"][name] == "staticmethod"
        if generated and fast[0] == runtime[0] == "TypeError" and fast[1].startswith(f"{name}()"):
            out["python_binding"] += 1  # Python's own binding error
        elif fast != runtime:
            out["differences"].append([name, repr(args), repr(kwargs), fast, runtime])
print(json.dumps(out))
"""


def package_env():
    # The package from the source tree; its library is found on the loader's path, as the
    # runtime's `load_lib_module` searches it.
    return {
        "PYTHONPATH": os.pathsep.join([str(ROOT / "examples/point/python"), os.environ.get("PYTHONPATH", "")]),
        "LD_LIBRARY_PATH": os.pathsep.join(
            [str(pathlib.Path(example_lib_path()).parent), os.environ.get("LD_LIBRARY_PATH", "")]
        ),
    }


def test_the_package_constructs_as_the_runtime_init_does():
    run = run_in_fresh_python(COMPARE, env=package_env())
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["metaclasses"] == {name: f"{name}Meta" for name in out["metaclasses"]}
    # The helper's `__call__`, which calls `__ffi_init__` directly: generated (a static
    # function) for the Rust constructor of `Interval`, general for the field-by-field inits.
    assert out["calls"] == {"Point": "function", "Point3": "function", "Interval": "staticmethod",
                            "Options": "function", "Version": "function"}, out["calls"]
    assert out["compared"] == 95
    assert out["differences"] == []
    assert out["python_binding"] == 13


def test_signature_subclasses_and_copies_are_unchanged():
    script = r"""
import copy, inspect, pickle
import tvm_ffi
from tvm_ffi.dataclasses import py_class
import my_ext

Point = my_ext.Point
assert str(inspect.signature(Point)) == str(inspect.signature(Point.__init__)).replace("self, ", "", 1)
p = Point(1, 2, label="a")
assert type(p) is Point and (p.x, p.y, p.label) == (1, 2, "a")
assert Point(x=5).y == 7  # the Rust default

# A Python subclass gets the plain metaclass back and constructs through its own __init__.
@py_class("test_construction.SubPoint")
class SubPoint(Point):
    z: int = 5

assert type(SubPoint) is type(tvm_ffi.Object)
s = SubPoint(1, 2)
assert type(s) is SubPoint and (s.x, s.y, s.z) == (1, 2, 5)
assert SubPoint(1, z=9).z == 9

# Copies and pickles make objects without calling the class.
assert copy.copy(p).label == "a" and copy.deepcopy(p).x == 1
q = pickle.loads(pickle.dumps(p))
assert type(q) is Point and (q.x, q.y, q.label) == (1, 2, "a")
print("ok")
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == "ok"


def test_the_constructor_holds_no_reference_it_does_not_own():
    # The helper's `__call__` passes the arguments on, or `(*args, KWARGS, name, value, ...)`
    # for keywords: every reference taken for the call is released after it.
    script = r"""
import sys
import my_ext

Point = my_ext.Point
x, y, label = 10**12 + 1, 10**12 + 2, "".join(["la", "bel"])
lo, hi = float(x), float(y)
many = {f"k{i}": label for i in range(10)}  # a KWARGS repacking of 23 references
before = [sys.getrefcount(v) for v in (x, y, label, lo, hi)]
for _ in range(2000):
    Point(x, y)
    Point(x, y=y, label=label)
    Point(x=x, y=y)
    my_ext.Interval(lo, hi=hi)  # passed by position
    my_ext.Interval(hi=hi, lo=lo)
    for bad in [lambda: Point(x, y, nope=label), lambda: my_ext.Interval(hi=hi),
                lambda: Point(x, y, **many)]:
        try:
            bad()
        except TypeError as err:
            assert "nope" in str(err) or "'lo'" in str(err) or "'k0'" in str(err), err
after = [sys.getrefcount(v) for v in (x, y, label, lo, hi)]
assert before == after, (before, after)
print(Point(x, y=y, label=label))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == (
        'my_ext.Point(x=1000000000001, y=1000000000002, label="label")'
    )


def test_classes_whose_init_does_more_keep_the_runtime_init():
    # The helper, applied to Python-defined classes: one with `__post_init__` (the runtime's
    # `__init__` calls it after construction) stays as it is; a plain one is made direct.
    script = r"""
import tvm_ffi
from tvm_ffi.dataclasses import py_class
from tvm_ffi_build import ffi_helpers

calls = []

@py_class("test_construction.WithPostInit")
class WithPostInit(tvm_ffi.Object):
    a: int

    def __post_init__(self):
        calls.append(self.a)

@py_class("test_construction.Plain")
class Plain(tvm_ffi.Object):
    a: int
    b: int = 2

base = type(tvm_ffi.Object)
ffi_helpers.fast_constructors({"WithPostInit": WithPostInit, "Plain": Plain, "x": 1})
assert type(WithPostInit) is base
WithPostInit(4)
assert calls == [4]
assert type(Plain) is not base
p = Plain(1)
assert type(p) is Plain and (p.a, p.b) == (1, 2)
assert Plain(b=3, a=0).b == 3
print("ok")
"""
    run = run_in_fresh_python(script)
    assert run.stdout.strip().splitlines()[-1] == "ok"
