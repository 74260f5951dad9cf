"""Property and stress tests of the example libraries, each in a child interpreter so that a
crash or a hang is a test failure, not the end of the run.

- Fuzz: random and hostile values (hypothesis, pinned in python-requirements.txt) into every
  global function, constructor, method and field setter of `examples/point` and
  `examples/kernels`, found through the runtime's reflection. Every call must return or raise
  one of the documented exception classes; the child prints its counts as JSON.
- Stress: threads making mixed calls on shared objects, create/drop churn, deep chains and
  panics, with reference counts and buffers checked at the end.
"""
import json

from conftest import example_lib_path, kernels_lib_path, run_python

PRELUDE = f"""
import json, resource, sys
import numpy as np
import tvm_ffi, tvm_ffi.testing
from tvm_ffi import core
tvm_ffi.load_module({example_lib_path()!r})
tvm_ffi.load_module({kernels_lib_path()!r})
PREFIXES = ("my_ext.", "kernels.")
TYPE_KEYS = sorted(
    (str(k) for k in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")() if str(k).startswith(PREFIXES)),
    key=lambda k: len(core._lookup_or_register_type_info_from_type_key(k).type_ancestors),
)
# Blocking by design (busy-waits until Ctrl-C or its timeout): tested in test_env.py.
BLOCKING = {{"kernels.spin"}}
FUNCTIONS = sorted(
    n for n in tvm_ffi.registry.list_global_func_names() if n.startswith(PREFIXES) and n not in BLOCKING
)

# Python classes for the types, parents first (a C++ parent's class comes from tvm_ffi.testing).
CLASSES = {{"testing.TestCxxClassBase": tvm_ffi.testing._TestCxxClassBase}}
for key in TYPE_KEYS:
    info = core._lookup_or_register_type_info_from_type_key(key)
    base = CLASSES.get(info.parent_type_info.type_key, tvm_ffi.Object)
    CLASSES[key] = tvm_ffi.register_object(key)(type(key.rsplit(".", 1)[1], (base,), {{}}))
"""

FUZZ = """
from hypothesis import HealthCheck, given, settings, strategies as st

# Allocations the allocator refuses must raise MemoryError, not abort: keep the address space
# a little above what the process uses, so hostile sizes fail fast.
used = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), resource.RLIM_INFINITY))

ALLOWED = (TypeError, ValueError, RuntimeError, AttributeError, KeyError, IndexError,
           MemoryError, OverflowError)
counts = {"calls": 0, "returned": 0, "raised": {}, "targets": 0}

def samples():
    # One instance of each type, made from its defaults or a small constructor call.
    out = []
    for key, cls in CLASSES.items():
        for args in ((), (1,), (1, 2), (1.0, 2.0), (np.ones(2, dtype="float32"),)):
            try:
                out.append(cls(*args))
                break
            except ALLOWED:
                pass
    return out

SAMPLES = samples()

def raising(*args):
    raise ValueError("raised by a Python callback")

scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 1, 2**31, 2**63 - 1, -(2**63), 2**64, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12), st.binary(max_size=12),
    st.sampled_from(SAMPLES),
    st.sampled_from([lambda *a: 1, lambda *a: "x", raising, len]),
    st.sampled_from([
        np.arange(6, dtype="float32"), np.arange(6, dtype="float32").reshape(2, 3),
        np.arange(6, dtype="float32")[::2], np.zeros(0, dtype="float32"),
        np.arange(4, dtype="float64"), np.arange(4, dtype="int64"), np.ones((2, 2, 2), "uint8"),
        np.float32(3.0).reshape(()),
    ]),
    st.sampled_from([tvm_ffi.Device("cpu", 0), tvm_ffi.dtype("float32")]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
argument_lists = st.lists(values, max_size=4)

def call(target, *args, **kwargs):
    counts["calls"] += 1
    try:
        target(*args, **kwargs)
        counts["returned"] += 1
    except ALLOWED as err:
        name = type(err).__name__
        counts["raised"][name] = counts["raised"].get(name, 0) + 1

FUZZ_SETTINGS = settings(
    max_examples=int(sys.argv[1]), deadline=None, database=None, derandomize=True,
    suppress_health_check=list(HealthCheck),
)

def fuzz(target):
    counts["targets"] += 1
    @FUZZ_SETTINGS
    @given(argument_lists)
    def run(args):
        call(target, *args)
    run()

def fuzz_field(instance, name):
    counts["targets"] += 1
    @FUZZ_SETTINGS
    @given(values)
    def run(value):
        call(setattr, instance, name, value)
        call(getattr, instance, name)
    run()

for name in FUNCTIONS:
    fuzz(tvm_ffi.get_global_func(name))
for key in TYPE_KEYS:
    cls = CLASSES[key]
    fuzz(cls)  # the constructor
    info = core._lookup_or_register_type_info_from_type_key(key)
    instance = next((s for s in SAMPLES if type(s) is cls), None)
    for method in info.methods:
        if method.name.startswith("__"):
            continue
        if method.is_static:
            fuzz(method.func)
        elif instance is not None:
            fuzz((lambda f: lambda *args: f(instance, *args))(method.func))
            fuzz(method.func)  # a hostile receiver too
    for field in info.fields:
        if instance is not None:
            fuzz_field(instance, field.name)

print(json.dumps(counts))
"""


def test_fuzz_every_function_constructor_method_and_setter():
    run = run_python(PRELUDE + FUZZ.replace("int(sys.argv[1])", "300"), timeout=600)
    assert run.returncode == 0, f"the fuzzed process died (exit {run.returncode}):\n{run.stderr[-4000:]}"
    counts = json.loads(run.stdout.strip().splitlines()[-1])
    # Every target was reached, most calls were rejected with a proper error, some succeeded.
    assert counts["targets"] >= 60, counts
    assert counts["calls"] >= 60 * 100, counts
    assert counts["returned"] > 0 and counts["raised"].get("TypeError", 0) > 0, counts
    print("fuzz:", counts)


STRESS = """
import gc, threading
Point, Options = CLASSES["my_ext.Point"], CLASSES["my_ext.Options"]
shared = Point(0, 0)
div = tvm_ffi.get_global_func("my_ext.checked_div")
add = tvm_ffi.get_global_func("my_ext.add")
scale = tvm_ffi.get_global_func("kernels.scale")
live = tvm_ffi.get_global_func("kernels.live_buffers")
errors = []
THREADS, ROUNDS = 8, int(sys.argv[1])

def worker(seed):
    try:
        x = np.arange(16, dtype="float32")
        for i in range(ROUNDS):
            shared.x = seed * 1_000_000 + i            # racing writers on one Rw field
            assert shared.x // 1_000_000 in range(THREADS)
            p = Point(i, seed, label="a longer label than seven bytes")
            assert p.norm2() == i * i + seed * seed
            assert add(i, seed) == i + seed
            try:
                div(i, 0)
            except RuntimeError as err:
                assert "division by zero" in str(err)
            if i % 16 == 0:
                assert np.from_dlpack(scale(x, 2.0))[3] == 6.0
            if i % 64 == 0:
                head = None
                for depth in range(500):
                    head = Options(depth, parent=head)
                del head
    except BaseException as err:  # reported by the main thread
        errors.append(repr(err))

baseline = live()
threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
for _ in range(100_000):                                  # churn
    Point(1, 2)
head = None
for depth in range(100_000):                              # one deep chain
    head = Options(depth, parent=head)
del head
gc.collect()
assert live() == baseline, (live(), baseline)
assert shared.x // 1_000_000 in range(THREADS)
print(json.dumps({"threads": THREADS, "calls_per_thread": ROUNDS * 4, "churn": 100_000, "chain": 100_000}))
"""


def test_stress_threads_churn_chains_and_panics():
    run = run_python(PRELUDE + STRESS.replace("int(sys.argv[1])", "2000"), timeout=300)
    assert run.returncode == 0, f"the stressed process died (exit {run.returncode}):\n{run.stderr[-4000:]}"
    assert run.stderr == "", run.stderr
    print("stress:", run.stdout.strip())
