"""Construction from Python through a shipped package: `_ffi_api.py` (written by the build
backend) gives each class whose runtime `__init__` adds nothing to the call a metaclass that
hands `Type(...)` straight to the type's `__ffi_init__`. Every outcome, value or error text,
must be what the runtime's own `__init__` gives for the same arguments."""
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
    # type (the builtin passes keywords that fill the leading parameters by position).
    ((), {"hi": 2.0, "lo": 1.0}), ((), {"hi": 2.0}), ((), {"lo": "s", "hi": 2.0}),
    ((1.0,), {"hi": "s"}),
]

def outcome(call):
    try:
        value = call()
    except Exception as err:  # the comparison is the test: both paths must agree
        return [type(err).__name__, str(err)]
    return [type(value).__qualname__, repr(value)]

out = {"metaclasses": {}, "calls": {}, "differences": [], "compared": 0}
for name in ["Point", "Point3", "Interval", "Options", "Version"]:
    cls = getattr(my_ext, name)
    out["metaclasses"][name] = type(cls).__name__
    out["calls"][name] = type(type(cls).__dict__["__call__"]).__name__
    for args, kwargs in cases:
        fast = outcome(lambda: cls(*args, **kwargs))
        runtime = outcome(lambda: base.__call__(cls, *args, **kwargs))  # the runtime's __init__
        out["compared"] += 1
        if fast != runtime:
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
    # The Rust library's C-level `__call__` (`TVMFFISdkPythonConstructor`), not the Python one.
    assert set(out["calls"].values()) == {"builtin_function_or_method"}, out["calls"]
    assert out["compared"] == 95
    assert out["differences"] == []


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


def test_the_c_level_call_holds_no_reference_it_does_not_own():
    # The builtin passes the argument tuple on, or builds `(*args, KWARGS, name, value, ...)`
    # for keywords: every reference it takes goes to a tuple that is released after the call.
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
            assert "nope" in str(err) or "`lo`" in str(err) or "'k0'" in str(err), err
after = [sys.getrefcount(v) for v in (x, y, label, lo, hi)]
assert before == after, (before, after)
print(Point(x, y=y, label=label))
"""
    run = run_in_fresh_python(script, env=package_env())
    assert run.stdout.strip().splitlines()[-1] == (
        'my_ext.Point(x=1000000000001, y=1000000000002, label="label")'
    )


# Allocating the repacked argument tuple may run a garbage collection (CPython < 3.12), whose
# callbacks run Python code: the two scripts below replace, or clear, the keyword dictionary
# of the call in flight from a `gc.callbacks` entry. The builtin takes its references before
# allocating, so the call sees the values it was given. (A review's reproductions: with
# borrowed references, the first crashed in `tupletraverse`, the second passed NULL items to
# `__ffi_init__`.) Development mode poisons freed memory, so that a use after free shows.
REPLACE_KEYWORD_VALUES = r"""
import gc
import my_ext

class V:
    pass

hit = []
def callback(phase, info):
    if phase != "start" or hit:
        return
    for r in gc.get_objects(0):
        if type(r) is dict and len(r) == 2 and type(r.get("lo")) is V:
            hit.append(1)
            r["lo"] = 1.0  # the V objects are left to the call's own references
            r["hi"] = 2.0

gc.callbacks.append(callback)
keep = []
gc.set_threshold(1)
for attempt in range(50):
    for i in range(5000):  # empty the free list of 2-tuples: `PyTuple_New(2)` collects
        keep.append(tuple([i, i]))
    try:
        my_ext.Interval(**{"lo": V(), "hi": V()})
    except TypeError as err:
        error = str(err)
    if hit:
        break
print(error)
"""

CLEAR_KEYWORDS = r"""
import gc
import my_ext

tag = []  # a tracked value makes the call's keyword dictionary findable
armed = [False]
def callback(phase, info):
    if phase != "start" or not armed[0]:
        return
    for r in gc.get_referrers(tag):
        if type(r) is dict and "k0" in r and r is not source:
            armed[0] = False
            r.clear()

source = {f"k{i}": i for i in range(12)}
source["k0"] = tag
gc.callbacks.append(callback)
gc.set_threshold(1)
armed[0] = True
try:
    my_ext.Point(1, 2, **source)
except TypeError as err:
    print(err)
"""


def test_python_code_run_by_a_collection_inside_the_call_cannot_free_what_it_passes():
    env = {**package_env(), "PYTHONDEVMODE": "1"}
    replaced = run_in_fresh_python(REPLACE_KEYWORD_VALUES, env=env).stdout.strip().splitlines()
    assert "Expected `float` but got `ffi.OpaquePyObject`" in replaced[-1], replaced
    cleared = run_in_fresh_python(CLEAR_KEYWORDS, env=env).stdout.strip().splitlines()
    assert "unexpected keyword argument 'k0'" in cleared[-1], cleared


def test_classes_whose_init_does_more_keep_the_runtime_init():
    # The helper, applied to Python-defined classes: one with `__post_init__` (the runtime's
    # `__init__` calls it after construction) stays as it is; a plain one is made direct.
    build = ROOT / "template" / "build_backend" / "tvm_ffi_build.py"
    script = f"BUILD = {str(build)!r}\n" + r"""
import importlib.util
import tvm_ffi
from tvm_ffi.dataclasses import py_class

spec = importlib.util.spec_from_file_location("tvm_ffi_build", BUILD)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
namespace = {}
exec(module.HELPERS, namespace)

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
namespace["_ffi_fast_constructors"]({"WithPostInit": WithPostInit, "Plain": Plain, "x": 1})
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
