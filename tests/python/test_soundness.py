"""Soundness regressions over the fixture types of `tests/containers/src/soundness.rs`: each
scenario that used to crash runs in a child interpreter whose output is asserted."""
from conftest import _lib_path, run_python

PRELUDE = f"""
import copy, sys
import tvm_ffi
from tvm_ffi.dataclasses import py_class
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_containers.so")!r})
@tvm_ffi.register_object("rs_soundness.Base")
class Base(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("rs_soundness.Node")
class Node(Base):
    pass
@tvm_ffi.register_object("rs_soundness.WithSkip")
class WithSkip(Base):
    pass
@tvm_ffi.register_object("rs_soundness.WithOptional")
class WithOptional(tvm_ffi.Object):
    pass
use_count = tvm_ffi.get_global_func("testing.object_use_count")
def attempt(f):
    try:
        print("ok", f())
    except Exception as e:
        print(type(e).__name__, str(e).split(" (when calling")[0])
"""


def run(script):
    run = run_python(PRELUDE + script)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr)
    return run.stdout.splitlines()


def test_parent_method_on_an_unfinished_child_checks_the_child():
    # The creator's node has its required `child` unset; the parent's method must not seal it.
    out = run("""
new = tvm_ffi.core._lookup_type_attr(Node.__tvm_ffi_type_info__.type_index, "__ffi_new__")
bare = new()
attempt(bare.get_id)
attempt(bare.child_id)
Node.child.set(bare, Base(id=5))
attempt(bare.get_id)
attempt(bare.child_id)
""")
    unset = "RuntimeError the object of type `rs_soundness.Node` is not fully constructed: its required field `child` is not set"
    assert out == [unset, unset, "ok 0", "ok 5"], out


def test_parent_method_on_a_python_subclass_of_a_type_with_skip_fields_is_refused():
    out = run("""
@py_class("test_soundness.SubSkip")
class SubSkip(WithSkip):
    extra: int = 0
s = SubSkip(id=3, extra=1)
attempt(s.get_id)
attempt(s.cached)
""")
    refused = (
        "RuntimeError the object of type `test_soundness.SubSkip` was allocated outside Rust (for "
        "example, a Python subclass instance) and `rs_soundness.WithSkip` keeps Rust-only fields "
        "(`#[ffi(skip)]`) it never initialised, so Rust cannot use its payload"
    )
    assert out == [refused, refused], out


def test_optional_object_fields_report_an_object_index():
    from reflection_tables import type_table
    import tvm_ffi

    tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))
    fields = {f["name"]: f for f in type_table("rs_soundness.WithOptional")["fields"]}
    assert [(fields[n]["static_type_index"], fields[n]["size"]) for n in ("items", "shape")] == [
        (64, 8),
        (64, 8),
    ]


def test_shallow_copy_of_a_python_subclass_with_an_optional_array_field():
    # The runtime's shallow copy of a `@py_class` subclass copies each parent field by its
    # static type index: an 8-byte optional array reported as "any" was copied as a 16-byte Any.
    out = run("""
@py_class("test_soundness.SubOptional")
class SubOptional(WithOptional):
    extra: int = 0
items = tvm_ffi.Array([1, 2, 3])
shape = tvm_ffi.Shape((4, 5))
s = SubOptional(items=items, shape=shape, extra=7)
print(use_count(items), use_count(shape))
c = copy.copy(s)
print(list(c.items), tuple(c.shape), c.extra, use_count(items), use_count(shape))
del c
print(use_count(items), use_count(shape))
e = copy.copy(SubOptional(extra=1))
print(e.items, e.shape, e.extra)
""")
    assert out == ["2 2", "[1, 2, 3] (4, 5) 7 3 3", "2 2", "None None 1"], out


def test_types_with_rust_only_fields_are_not_shared_across_builds(tmp_path):
    # tests/layout-variants defines `rs_soundness.Cached` exactly as tests/containers does:
    # the layouts' descriptions match, but skip fields are described by type name and size
    # only, so another build is refused. Another copy of the same build shares the type.
    import shutil

    copy_path = tmp_path / "libcopy.so"
    shutil.copy(_lib_path("libtvm_ffi_test_containers.so"), copy_path)
    out = run(f"""
tvm_ffi.load_module({str(copy_path)!r})
tvm_ffi.load_module({_lib_path("libtvm_ffi_layout_variants.so")!r})
for error in tvm_ffi.get_global_func("layout_variants.load_errors")():
    print(error)
""")
    assert len(out) == 1, out
    assert out[0].startswith(
        "cannot register type `rs_soundness.Cached`: type `rs_soundness.Cached` is already "
        "registered with a different layout (another Rust library defines it with the layout "
    ), out
    assert "skip scratch@8:24:alloc::vec::Vec<u8>;" in out[0]


def test_python_subclass_fields_in_the_tail_padding_of_a_rust_type_are_refused():
    # Python places a subclass's first field at the end of the parent's last field: a `bool`
    # lands in the tail padding of `{ x: i64, flag: bool }`, which a Rust `&Padded` covers.
    out = run("""
@tvm_ffi.register_object("rs_soundness.Padded")
class Padded(tvm_ffi.Object):
    pass
@py_class("test_soundness.SubPaddedBool")
class SubPaddedBool(Padded):
    extra: bool = False
@py_class("test_soundness.SubPaddedInt")
class SubPaddedInt(Padded):
    extra: int = 0
b = SubPaddedBool(x=1, flag=True, extra=True)
attempt(b.describe)
print(b.x, b.flag, b.extra)
i = SubPaddedInt(x=2, flag=True, extra=5)
attempt(i.describe)
""")
    assert out == [
        "RuntimeError the object of type `test_soundness.SubPaddedBool` has the field `extra` at "
        "offset 33, inside the 40 bytes of its Rust-defined parent `rs_soundness.Padded` (in its "
        "tail padding), so Rust cannot use its payload; give the subclass's first field an "
        "8-byte type, or pad the Rust type",
        "1 True True",
        "ok 2 true",
    ], out


def test_python_subclass_of_a_final_rust_type_behaves_as_for_a_final_cxx_type():
    # C++ registers a final type with no child slots but overflow allowed (and
    # `__ffi_type_final__`), so the runtime gives a Python subclass an index; a Rust final type
    # registered without overflow made the runtime end the interpreter (exit 255).
    from conftest import example_lib_path

    script = f"""
import tvm_ffi, tvm_ffi.testing
from tvm_ffi import core
from tvm_ffi.dataclasses import py_class
tvm_ffi.load_module({example_lib_path()!r})
@tvm_ffi.register_object("testing.TestIntPair")
class Pair(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("my_ext.Point3")
class Point3(Point):
    pass
@py_class("test_soundness.SubPair")
class SubPair(Pair):
    extra: int = 0
@py_class("test_soundness.SubPoint3")
class SubPoint3(Point3):
    extra: int = 0
print(SubPair(1, 2, extra=3))
p = SubPoint3(x=1, y=2, z=3, extra=4)
print(p.x, p.z, p.extra, p.norm2_3d())
print(core._lookup_type_attr(Point3.__tvm_ffi_type_info__.type_index, "__ffi_type_final__"))
"""
    proc = run_python(script)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.splitlines()[1:] == ["1 3 4 14", "True"], proc.stdout


def test_writing_an_rw_field_of_an_open_object_drops_the_old_value_after_the_lock():
    # Built from Python, the holder stays open until Rust dereferences it; the setter of its
    # `Rw` field dropped the old value inside the construction lock, and the old value's
    # `__del__`, reading the holder, waited for that lock forever (with the GIL held).
    script = PRELUDE + """
@tvm_ffi.register_object("rs_soundness.Slot")
class Slot(tvm_ffi.Object):
    pass
class Noisy:
    def __del__(self):
        print("del reads", holder.value)
holder = Slot(value=Noisy())
holder.value = 1
print("after", holder.value)
"""
    proc = run_python(script, timeout=60)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.splitlines() == ["del reads 1", "after 1"], proc.stdout


def test_a_library_finding_the_lock_table_key_taken_fails_closed():
    # Plain Python can register the lock table's type key before any Rust library loads. A
    # library then has no table shared with the others: it registers nothing and says why,
    # instead of running its containers with a private table.
    script = """
import tvm_ffi
from tvm_ffi.dataclasses import py_class
from conftest import _lib_path
@py_class("tvm_ffi_rs.StripedLocks.v4")
class Squat(tvm_ffi.Object):
    a: int
tvm_ffi.load_module(_lib_path("libtvm_ffi_test_containers.so"))
print(tvm_ffi.get_global_func("rs_containers.list_sum", allow_missing=True))
"""
    proc = run_python(script, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout.splitlines() == ["None"], proc.stdout + proc.stderr
    assert (
        "nothing registered: no lock table shared with this process's other Rust libraries (the "
        "type key `tvm_ffi_rs.StripedLocks.v4` is taken by another definition)" in proc.stderr
    ), proc.stderr


def test_rw_reference_fields_of_a_python_subclass_are_never_replaced_under_a_copy():
    # The runtime's shallow copy of a `@py_class` instance (`copy.copy`) copies every field,
    # the Rust parent's `Rw` fields included, by taking a reference without Rust's lock. A Rust
    # thread (or a Python setter) replacing such a field meanwhile freed the value being
    # copied (heap corruption). Such an instance is not used from Rust, and its reference
    # fields are set once, at construction; copying it keeps working.
    script = PRELUDE + """
import time
@tvm_ffi.register_object("rs_soundness.RwText")
class RwText(tvm_ffi.Object):
    pass
@py_class("rs_soundness_py.RwTextSub")
class RwTextSub(RwText):
    z: int
o = RwTextSub(s="init", a="init", z=1)
c = copy.copy(o)
print(c.s, c.a, c.z)
rewrite = tvm_ffi.get_global_func("rs_soundness.rewrite_in_background")
attempt(lambda: rewrite(o, 1000))
end = time.time() + 1.2
n = 0
while time.time() < end:
    c = copy.copy(o)
    assert isinstance(c.s, str) and (c.s == "init" or set(c.s) == {"y"}), c.s
    n += 1
tvm_ffi.get_global_func("rs_soundness.join_rewriters")()
def assign():
    o.s = "again"
attempt(assign)
print(o.s, n > 0)
plain = RwText(s="init", a=1)
rewrite(plain, 50)
tvm_ffi.get_global_func("rs_soundness.join_rewriters")()
plain.s = "set from Python"
print(plain.s)
"""
    proc = run_python(script, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    out = proc.stdout.splitlines()
    assert out[0] == "init init 1", out
    assert out[1].startswith(
        "RuntimeError the object of type `rs_soundness_py.RwTextSub` was allocated outside Rust "
        "(a Python subclass instance), and its `Rw` field `s` holds a reference"
    ), out
    assert out[2].startswith(
        "AttributeError Cannot replace the value of the field of `rs_soundness.RwText` at "
        "offset 24 in a Python subclass instance"
    ), out
    assert out[3:] == ["init True", "set from Python"], out


def test_two_threads_setting_an_unset_reference_of_a_python_subclass_instance_write_it_once():
    # A reference field of a `@py_class` instance is written only while still unset (the
    # runtime's `copy.copy` takes it without Rust's lock). Both setters saw it unset before
    # either took the construction lock, so the second write replaced, and released, the
    # first value (what a concurrent copy may have been taking): the check is now made under
    # the lock. Rust threads, which hold no GIL, through the setter's own synchronisation.
    out = run("""
@tvm_ffi.register_object("rs_soundness.Label")
class Label(tvm_ffi.Object):
    pass
@py_class("rs_soundness_py.LabelSub")
class LabelSub(Label):
    z: int
new = tvm_ffi.core._lookup_type_attr(LabelSub.__tvm_ffi_type_info__.type_index, "__ffi_new__")
print(new().text)
print(tvm_ffi.get_global_func("rs_soundness.set_twice_at_once")(new, 100000))
""")
    assert out == ["None", "0"], out


def test_a_failing_key_equality_is_an_error_of_a_rust_write_and_dropped_in_a_python_one():
    # The runtime cannot take an error from `__any_equal__` (it may be rebuilding its table):
    # the hook answers "unequal" there. A write made by Rust raises the failure; one made by
    # Python itself (the runtime's `ffi.DictSetItem`, no Rust code after it) cannot, and is
    # done with the keys taken as unequal (docs/book/src/soundness.md, *Key hooks*).
    out = run("""
@tvm_ffi.register_object("rs_soundness.FailEqKey")
class FailEqKey(tvm_ffi.Object):
    pass
fail_equal = tvm_ffi.get_global_func("rs_soundness.fail_equal")
dict_set = tvm_ffi.get_global_func("rs_soundness.dict_set")
first = FailEqKey(v=1)
d = tvm_ffi.Dict({first: "first"})
fail_equal(True)
attempt(lambda: dict_set(d, FailEqKey(v=1), "by rust"))
print(len(d))
attempt(lambda: d.__setitem__(FailEqKey(v=1), "by python"))
print(len(d))
fail_equal(False)
print(sorted(str(v) for v in d.values()))
print(use_count(first))
""")
    # Rust's own lookup before its write runs the hook (nothing changed); Python's write
    # added the key beside its equal.
    assert out == [
        "ValueError FailEqKey cannot compare 1 with 1",
        "1",
        "ok None",
        "2",
        "['by python', 'first']",
        "2",
    ], out


ACCESSORS = """
@tvm_ffi.register_object("rs_soundness.Small")
class Small(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("rs_soundness.Big")
class Big(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("rs_soundness.Frozen")
class Frozen(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("rs_soundness.Thawed")
class Thawed(tvm_ffi.Object):
    pass
small = Small(1)
frozen = Frozen("a name long enough to live on the heap")
"""


def test_field_accessors_applied_to_an_object_of_another_type_raise_type_error():
    # Python's field descriptors hand the accessor "object address + offset" for any object:
    # each accessor checks the object's type before it touches the field.
    out = run(ACCESSORS + """
attempt(lambda: Big.tags.fget(small))
attempt(lambda: Big.parent.fset(small, small))
attempt(lambda: Big.parent.fget(small))
attempt(lambda: Thawed.name.fset(frozen, "replaced"))
attempt(lambda: Thawed.name.fget(frozen))
print(frozen.name, small.x)
big = Big(1, 2, [3], small)
print(Big.tags.fget(big)[0], Big.parent.fget(big).x)
Big.parent.fset(big, None)
print(big.parent)
""")
    assert out == [
        "TypeError Cannot read the field of `rs_soundness.Big` at offset 40 on an object of type "
        "`rs_soundness.Small`",
        "TypeError Cannot set the field of `rs_soundness.Big` at offset 48 on an object of type "
        "`rs_soundness.Small`",
        "TypeError Cannot read the field of `rs_soundness.Big` at offset 48 on an object of type "
        "`rs_soundness.Small`",
        "TypeError Cannot set the field of `rs_soundness.Thawed` at offset 24 on an object of type "
        "`rs_soundness.Frozen`",
        "TypeError Cannot read the field of `rs_soundness.Thawed` at offset 24 on an object of type "
        "`rs_soundness.Frozen`",
        "a name long enough to live on the heap 1",
        "3 1",
        "None",
    ]


def test_a_drop_panicking_with_a_payload_whose_drop_panics_does_not_end_the_process():
    out = run("""
@tvm_ffi.register_object("rs_soundness.PanicsTwiceOnDrop")
class PanicsTwiceOnDrop(tvm_ffi.Object):
    pass
for _ in range(3):
    o = PanicsTwiceOnDrop(1)
    del o
print("alive")
""")
    assert out == ["alive"]


def test_reflection_on_an_unregistered_type_index_is_an_error():
    # The runtime's own lookup ends the process on an index it never registered.
    out = run("""
attempt(lambda: tvm_ffi.get_global_func("rs_soundness.field_getter_of_index")(1 << 20))
""")
    assert out == ["TypeError type index 1048576 is no registered object type"]
