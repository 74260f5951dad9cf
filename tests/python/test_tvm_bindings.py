"""Generated Rust declarations of a real C++ IR: Apache TVM's (`apache-tvm==0.27.0.post1`).

The generator (`python -m tvm_ffi_build.rust_mirror`) over TVM's `ir.`, `prim.`,
`tirx.` and `relax.` namespaces writes `tests/tvm-bindings/src/generated.rs` and its coverage
report `tests/tvm-bindings/coverage.md`, both checked in and compared here with a fresh run
(`TVM_BINDINGS_BLESS=1` rewrites them). Every type of those namespaces is declared, complete or
opaque, none refused; the crate compiles (it is a workspace member) and loads into a process
that imported `tvm` with no layout error, and its functions read real TVM nodes built in
Python: required fields as values, C++ `Optional` fields as `Option`, opaque types as typed
handles; nodes Rust allocates (`from_fields`) are read, compared, hashed, printed and
rewritten by TVM's C++ code as its own; and Rust's `structural::map`, `mutate` and `walk` rewrite
and read real TVM IR through TVM's C++ hooks, with the same results as the runtime's C++ map."""
import os
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import UNDER_ASAN, _lib_path, run_in_fresh_python

tvm = pytest.importorskip(
    "tvm", reason="Apache TVM is not installed (scripts/setup.sh installs apache-tvm from python-requirements.txt)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build tool's command (tvm-ffi-build/tvm_ffi_build/rust_mirror.py; scripts/setup.sh installs it).
GENERATOR = ["-m", "tvm_ffi_build.rust_mirror"]
CRATE = ROOT / "tests" / "tvm-bindings"
GENERATED = CRATE / "src" / "generated.rs"
COVERAGE = CRATE / "coverage.md"
PREFIXES = ("ir.", "prim.", "tirx.", "relax.")
# C++ enums named after the Python enums TVM defines for them.
ENUMS = {"tirx.For.kind": "tvm.tirx.ForKind",
         "relax.distributed.PlacementSpec.kind": "tvm.relax.distributed.type.PlacementSpecKind"}
ARGS = (["--import", "tvm"] + [arg for p in PREFIXES for arg in ("--prefix", p)]
        + [arg for f, cls in ENUMS.items() for arg in ("--enum", f"{f}={cls}")])
BLESS = os.environ.get("TVM_BINDINGS_BLESS") == "1"


def _outcomes(report: str) -> dict[str, tuple[str, str, str]]:
    """`{type key: (outcome, listed as, reason)}` of a coverage report."""
    rows = {}
    for line in report.splitlines():
        match = re.match(r"^\| `([^`]+)` \| (\w+) \| (.*?) \| (.*) \|$", line)
        if match:
            rows[match[1]] = (match[2], match[3], match[4])
    return rows


@pytest.mark.skipif(UNDER_ASAN, reason="runs rustfmt, which must not inherit the preloaded sanitizer")
def test_the_generated_bindings_and_report_are_current(tmp_path):
    out, report = tmp_path / "generated.rs", tmp_path / "coverage.md"
    subprocess.run([sys.executable, *GENERATOR, *ARGS, "--out", str(out), "--report", str(report)],
                   check=True)
    if BLESS:
        GENERATED.write_text(out.read_text())
        COVERAGE.write_text(report.read_text())
    command = ("python -m tvm_ffi_build.rust_mirror " + " ".join(ARGS)
               + " --out tests/tvm-bindings/src/generated.rs --report tests/tvm-bindings/coverage.md"
               " (or TVM_BINDINGS_BLESS=1 pytest tests/python/test_tvm_bindings.py)")
    assert report.read_text() == COVERAGE.read_text(), "tests/tvm-bindings/coverage.md is stale: run " + command
    assert out.read_text() == GENERATED.read_text(), "tests/tvm-bindings/src/generated.rs is stale: run " + command
    # Deterministic: a second run writes the same bytes.
    again = tmp_path / "again.md"
    subprocess.run([sys.executable, *GENERATOR, *ARGS, "--out", str(tmp_path / "again.rs"),
                    "--report", str(again)], check=True)
    assert again.read_text() == report.read_text()


def test_every_type_of_the_namespaces_is_declared():
    import tvm_ffi

    rows = _outcomes(COVERAGE.read_text())
    registered = {str(k) for k in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")()}
    under = {k for k in registered if k.startswith(PREFIXES)}
    # One line per type: every registered type of the namespaces, and the types they reach.
    assert under <= set(rows), sorted(under - set(rows))
    assert {k for k, (_, listed, _) in rows.items() if listed == "prefix"} == under
    refused = {k: why for k, (outcome, _, why) in rows.items() if outcome == "refused"}
    assert refused == {}
    counts = {o: sum(1 for v in rows.values() if v[0] == o) for o in ("complete", "opaque", "sdk")}
    assert counts["complete"] >= 240 and counts["opaque"] <= 30, counts
    # Every opaque type names its blocker; the types a TIR pass reads are complete.
    assert all(why for outcome, _, why in rows.values() if outcome == "opaque")
    for key in ["tirx.For", "tirx.IfThenElse", "tirx.PrimFunc", "ir.IRModule", "prim.Ramp",
                "relax.FuncType", "relax.expr.Function", "tirx.BufferStore", "ir.Var"]:
        assert rows[key][0] == "complete", (key, rows[key])
    assert rows["ir.Op"][0] == "opaque" and "unreflected bytes" in rows["ir.Op"][2]
    # Reached from the namespaces: declared too, with where they were reached from.
    assert rows["target.Target"][1].startswith("reached from ")
    # The report's table of counts agrees with its lines.
    text = COVERAGE.read_text()
    for outcome, n in counts.items():
        assert f"| {outcome} | {n} |" in text


def test_the_declarations_say_what_cpp_says():
    text = GENERATED.read_text()
    for line in [
        # A C++ `Optional` of an object (static type index -1): an `Option`, its accessor too.
        "    pub else_case: tvm_ffi::Rw<Option<tvm_ffi::ObjectRef<Stmt>>>,",
        "    pub fn step(&self) -> Option<tvm_ffi::ObjectRef<Expr>> {",
        # A required object field: stored nullable (C++ may hold null), read as a value.
        "    pub fn body(&self) -> tvm_ffi::ObjectRef<Stmt> {",
        # `prim.Ramp`'s C++ field `base` keeps its name; the generated parent field is `base_`.
        "    pub base_: Expr,",
        "    pub base: tvm_ffi::Rw<Option<tvm_ffi::ObjectRef<Expr>>>,",
        # An opaque type: a typed handle declaring only its parent, its fields read through
        # the getters C++ registered.
        '#[ffi_type(key = "ir.Op", external, opaque)]',
        "    pub fn name(this: &tvm_ffi::ObjectRef<Self>) -> tvm_ffi::Result<tvm_ffi::String> {",
        # Allocation by Rust: every field's value, the parents' first.
        "unsafe impl tvm_ffi::object::RustObject for For {}",
    ]:
        assert line in text, line


@pytest.mark.skipif(UNDER_ASAN, reason="scripts/asan.sh does not build the TVM fixture (a 270-type crate) "
                    "under AddressSanitizer")
def test_the_bindings_load_and_read_real_tvm_nodes():
    run_in_fresh_python(f"""
import tvm, tvm_ffi
from tvm import tirx
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_tvm_bindings.so")!r})
f = lambda name: tvm_ffi.get_global_func("tvm_bindings." + name)
assert list(f("load_errors")()) == []

i = tirx.Var("i", "int32")
body = tirx.Evaluate(tirx.const(0, "int32"))
loop = tirx.For(i, tirx.const(0, "int32"), tirx.const(16, "int32"), tirx.ForKind.SERIAL, body)
var, name, lo, extent, kind, kind_name, step, read_body = f("read_for")(loop)
assert var.same_as(i) and name == "i" and lo.value == 0 and extent.value == 16
assert kind == int(tirx.ForKind.SERIAL) and kind_name == "SERIAL"
assert step is None and read_body.same_as(body)
stepped = tirx.For(i, tirx.const(0, "int32"), tirx.const(16, "int32"), tirx.ForKind.UNROLLED, body,
                   step=tirx.const(2, "int32"))
_, _, _, _, kind, kind_name, step, _ = f("read_for")(stepped)
assert kind == int(tirx.ForKind.UNROLLED) and kind_name == "UNROLLED"
assert step.same_as(stepped.step) and step.value == 2
# The enum is open: a kind the bindings do not name (a newer TVM's) is kept, unnamed.
newer = f("make_for")(i, tirx.const(0, "int32"), tirx.const(16, "int32"), 9, body, None)
_, _, _, _, kind, kind_name, _, _ = f("read_for")(newer)
assert kind == 9 and kind_name is None

func = tvm.script.from_source('''
@T.prim_func
def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for x in range(8):
        for y in range(4):
            B[x, y] = A[x, y] + T.float32(1)
''')
assert isinstance(func, tirx.PrimFunc)

params, extents, body_key = f("read_prim_func")(func)
assert list(params) == ["A", "B"] and list(extents) == [8, 4] and body_key == "tirx.For"
assert list(f("read_ramp")(tirx.Ramp(tirx.const(3, "int32"), tirx.const(2, "int32"), 4))) == [3, 2, 4]
assert list(f("read_add")(tirx.Add(tirx.const(1, "int32"), tirx.const(2, "int32")))) == [1, 2]
key, span, name = f("op_handle")(tvm.ir.Op.get("tirx.exp"))
assert key == "ir.Op" and span is None and name == "tirx.exp"
try:
    f("read_for")(body)
except TypeError as err:
    assert "tirx.For" in str(err), err
else:
    raise AssertionError("a tirx.Evaluate passed as a tirx.For")
""")


@pytest.mark.skipif(UNDER_ASAN, reason="scripts/asan.sh does not build the TVM fixture (a 270-type crate) "
                    "under AddressSanitizer")
def test_rust_allocated_nodes_are_read_and_compared_by_cpp():
    run_in_fresh_python(f"""
import gc
import tvm, tvm_ffi
from tvm import tirx
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_tvm_bindings.so")!r})
f = lambda name: tvm_ffi.get_global_func("tvm_bindings." + name)
assert list(f("load_errors")()) == []

i = tirx.Var("i", "int32")
body = tirx.Evaluate(tirx.const(0, "int32"))
lo, hi, step = tirx.const(0, "int32"), tirx.const(16, "int32"), tirx.const(2, "int32")
rust = f("make_for")(i, lo, hi, int(tirx.ForKind.UNROLLED), body, step)
cxx = tirx.For(i, lo, hi, tirx.ForKind.UNROLLED, body, step=step)
# C++'s getters read the Rust-allocated node; C++ structural equality and hash accept it.
assert type(rust) is tirx.For and not rust.same_as(cxx)
assert rust.loop_var.same_as(i) and rust.min.same_as(lo) and rust.extent.value == 16
assert int(rust.kind) == int(tirx.ForKind.UNROLLED) and rust.step.same_as(step)
assert rust.body.same_as(body) and rust.thread_binding is None and len(rust.annotations) == 0
assert tvm_ffi.structural_equal(rust, cxx)
assert tvm_ffi.structural_hash(rust) == tvm_ffi.structural_hash(cxx)
unset = f("make_for")(i, lo, hi, int(tirx.ForKind.SERIAL), body, None)
assert unset.step is None and not tvm_ffi.structural_equal(unset, cxx)
assert tvm_ffi.structural_equal(unset, tirx.For(i, lo, hi, tirx.ForKind.SERIAL, body))

add = tirx.Add(tirx.Var("x", "int32"), tirx.const(1, "int32"))
copy = f("copy_add")(add)
assert not copy.same_as(add) and copy.a.same_as(add.a) and copy.b.same_as(add.b)
assert copy.ty.same_as(add.ty) and tvm_ffi.structural_equal(copy, add)

# A typed rebuild (`Clone` of the fields, one set): the others are the same objects.
wider, body_is_null = f("with_extent")(cxx, tirx.const(32, "int32"), False)
assert not wider.same_as(cxx) and wider.extent.value == 32 and not body_is_null
assert wider.loop_var.same_as(i) and wider.body.same_as(body) and wider.step.same_as(step)
assert int(wider.kind) == int(tirx.ForKind.UNROLLED)
tvm.ir.assert_structural_equal(wider, tirx.For(i, lo, tirx.const(32, "int32"), tirx.ForKind.UNROLLED, body,
                                               step=step))
# Lossless: a required field C++ left null stays null through the rebuild.
_, body_is_null = f("with_extent")(cxx, tirx.const(32, "int32"), True)
assert body_is_null

# Semantic constructors written in Rust on top of `from_fields`: derived types, defaults, checks.
x = tirx.Var("x", "int32")
one = f("int_imm")("int32", 1)
tvm.ir.assert_structural_equal(one, tirx.IntImm("int32", 1))
tvm.ir.assert_structural_equal(f("add")(x, one), tirx.Add(x, tirx.IntImm("int32", 1)))
tvm.ir.assert_structural_equal(f("serial_loop")(i, hi, body), tirx.For(i, lo, hi, tirx.ForKind.SERIAL, body))
for call, kind, message in [
    (lambda: f("int_imm")("int8", 300), ValueError, "tirx.IntImm: 300 is not a value of `int8`"),
    (lambda: f("add")(x, tirx.IntImm("int64", 1)), TypeError,
     "tirx.Add: operands of different types: `int32` and `int64`"),
]:
    try:
        call()
    except kind as err:
        assert str(err) == message, err
    else:
        raise AssertionError(message)

func = tvm.script.from_source('''
@T.prim_func
def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for x in range(8):
        for y in range(4):
            B[x, y] = A[x, y] + T.float32(1)
    for z in range(2):
        T.evaluate(0)
''')
rebuilt = f("rebuild_prim_func")(func)
assert not rebuilt.same_as(func) and not rebuilt.body.same_as(func.body)
tvm.ir.assert_structural_equal(rebuilt, func)
assert rebuilt.script() == func.script()
# A C++ pass rewrites the Rust-allocated function (copying and releasing its nodes).
remove = tvm.tirx.transform.RemoveNoOp()
after_rust = remove(tvm.IRModule({{"main": rebuilt}}))
after_cxx = remove(tvm.IRModule({{"main": func}}))
tvm.ir.assert_structural_equal(after_rust, after_cxx)
# The Rust deleter releases them.
del rust, unset, copy, rebuilt, after_rust, wider
gc.collect()
""")


@pytest.mark.skipif(UNDER_ASAN, reason="scripts/asan.sh does not build the TVM fixture (a 270-type crate) "
                    "under AddressSanitizer")
def test_rust_map_and_mutate_rewrite_real_ir_through_tvms_hooks():
    """`structural::map` / `mutate` / `walk` over a real `tirx.PrimFunc`, through TVM's C++
    `__s_mutate__`, `__s_maybe_inplace_mutate__` and `__s_visit__` hooks: the identity map returns
    the same object; a rewrite equals what the runtime's C++ `ffi.StructuralMap` gives with the
    same substitution; a renamed variable changes at its definition and every use together, and a
    variable whose type changes (the buffer `A`, whose shape holds the replaced constant) too,
    through the hooks' variable remapping; a copy only the map holds is updated in place."""
    run_in_fresh_python(f"""
import collections
import tvm, tvm_ffi
from tvm import tirx
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_tvm_bindings.so")!r})
f = lambda name: tvm_ffi.get_global_func("tvm_bindings." + name)
assert list(f("load_errors")()) == []

func = tvm.script.from_source('''
@T.prim_func
def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), n: T.int32):
    for x in range(8):
        for y in range(4):
            B[x, y] = A[x, y] + T.Cast("float32", n * 4 + x)
    for z in range(4):
        A[z, 0] = T.float32(0)
''')
script = func.script()

def vars_named(root, name):
    out = []
    tvm_ffi.structural_walk(root, lambda v: out.append(v) if isinstance(v, tirx.Var) and v.name == name else None)
    return out
# Identity: the same function back, nothing copied.
assert f("map_identity")(func).same_as(func)
assert func.script() == script

# A constant replaced: structurally equal to the runtime's C++ `ffi.StructuralMap`.
def cxx_replace(root, old, new):
    return tvm_ffi.structural_map(
        root, (tirx.IntImm, lambda imm: tirx.IntImm(imm.ty, new) if imm.value == old else imm))
rust = f("map_replace_int")(func, 4, 16)
cxx = cxx_replace(func, 4, 16)
assert not rust.same_as(func) and not cxx.same_as(func)
tvm.ir.assert_structural_equal(rust, cxx)
assert rust.script() == cxx.script() and rust.script() != script
assert "range(16)" in rust.script() and "n * 16" in rust.script()
assert func.script() == script  # copy-on-write: the source is untouched
# The buffer variable `A`, whose type holds the shape (8, 4), changes with it: its definition
# (a parameter) and its uses, to one new object (the hooks' variable remapping).
old_a = vars_named(func, "A")
new_a = vars_named(rust, "A")
assert len(new_a) == len(old_a) >= 3, (len(new_a), len(old_a))
assert all(v.same_as(new_a[0]) for v in new_a) and not new_a[0].same_as(old_a[0])
assert rust.params[0].same_as(new_a[0])
# The mutator form gives the same function.
mutated, replaced = f("mutate_replace_int")(func, 4, 16)
tvm.ir.assert_structural_equal(mutated, cxx)
assert replaced > 0
# Nothing to replace: the same function back.
assert f("map_replace_int")(func, 12345, 1).same_as(func)

# A variable renamed: its definition and every use change together, to one new object.
old_x = vars_named(func, "x")
assert len(old_x) >= 3 and all(v.same_as(old_x[0]) for v in old_x)
renamed = f("map_rename_var")(func, "x", "i")
new_i = vars_named(renamed, "i")
assert len(new_i) == len(old_x) and all(v.same_as(new_i[0]) for v in new_i)
assert not new_i[0].same_as(old_x[0]) and vars_named(renamed, "x") == []
loop = renamed.body.seq[0] if isinstance(renamed.body, tirx.SeqStmt) else renamed.body
assert loop.loop_var.same_as(new_i[0])
memo = {{}}
cxx_renamed = tvm_ffi.structural_map(
    func, (tirx.Var, lambda v: memo.setdefault(v, tirx.Var("i", v.ty)) if v.name == "x" else v),
    order="pre")
tvm.ir.assert_structural_equal(renamed, cxx_renamed)
assert renamed.script() == cxx_renamed.script()
# Untouched: the other loop is the source's own object.
src_z = func.body.seq[1]
assert renamed.body.seq[1].same_as(src_z)
# The C++ printer and a C++ pass accept the result.
after = tvm.tirx.transform.RemoveNoOp()(tvm.IRModule({{"main": renamed}}))
assert "for i, y in T.grid(8, 4):" in renamed.script() and "n * 4 + i" in renamed.script()

# Walk through the `__s_visit__` hooks: the same objects as C++'s walk.
expected = collections.Counter()
def count(v):
    if isinstance(v, tvm_ffi.Object):
        expected[type(v).__tvm_ffi_type_info__.type_key] += 1
tvm_ffi.structural_walk(func, count)
counts = dict(f("walk_counts")(func))
assert counts == dict(expected), (counts, expected)
# Moved in, held by the map alone: TVM's in-place hooks update the Rust-allocated copy itself.
inplace, same = f("map_replace_int_in_place")(func, 4, 16)
assert same is True
tvm.ir.assert_structural_equal(inplace, cxx)
assert inplace.script() == cxx.script()
""")


@pytest.mark.skipif(UNDER_ASAN, reason="scripts/asan.sh does not build the TVM fixture (a 270-type crate) "
                    "under AddressSanitizer")
def test_bindings_loaded_before_tvm_report_in_a_few_lines():
    """Loaded into a process that has not imported `tvm`, every declaration of the bindings is a
    load error (TVM registers the types): the first five are printed, one line counts the rest,
    and `load_errors` lists them all."""
    run = run_in_fresh_python(f"""
import tvm_ffi
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_tvm_bindings.so")!r})
errors = list(tvm_ffi.get_global_func("tvm_bindings.load_errors")())
print(len(errors))
""")
    count = int(run.stdout.strip())
    lines = run.stderr.splitlines()
    assert count > 200, run.stdout
    assert len(lines) == 6, run.stderr
    assert all(line.startswith("tvm-ffi: cannot register type `") for line in lines[:5]), run.stderr
    assert lines[5] == (f"tvm-ffi: ... and {count - 5} more load errors "
                        "(tvm_ffi::registry::load_errors() lists them all)")

