"""Rust-defined object types (`examples/point`) used from Python exactly like C++ ones."""
import copy
import gc
import json
import pathlib
import re
import pickle
import subprocess
import sys

import pytest
import tvm_ffi
import tvm_ffi.testing

from conftest import example_lib_path, run_in_fresh_python, skip_under_asan

# Classes are registered at module level (pickle finds them by qualified name), after the
# library is loaded: Python snapshots a type's reflection when it registers the class.
LIB = tvm_ffi.load_module(example_lib_path())


@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass


@tvm_ffi.register_object("my_ext.Point3")
class Point3(Point):
    pass


@tvm_ffi.register_object("my_ext.Interval")
class Interval(tvm_ffi.Object):
    pass


@tvm_ffi.register_object("my_ext.CxxChild")
class CxxChild(tvm_ffi.testing._TestCxxClassBase):
    pass


@tvm_ffi.register_object("my_ext.Options")
class Options(tvm_ffi.Object):
    pass


def fields(obj):
    return (obj.x, obj.y, obj.label)


# ---- construction ------------------------------------------------------------------------


def test_positional_keyword_and_defaults():
    assert fields(Point(1, 2)) == (1, 2, "pt")
    assert fields(Point(1)) == (1, 7, "pt")
    assert fields(Point(x=4, y=5, label="named")) == (4, 5, "named")
    assert fields(Point(3, label="a much longer label")) == (3, 7, "a much longer label")


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((), {}, "my_ext.Point.__ffi_init__() missing required argument: 'x'"),
        (
            (1, 2, 3),
            {},
            "my_ext.Point.__ffi_init__() takes at most 2 positional argument(s), but 3 were given",
        ),
        ((1,), {"z": 2}, "my_ext.Point.__ffi_init__() got an unexpected keyword argument 'z'"),
        (
            ("one",),
            {},
            "my_ext.Point.__ffi_init__() field 'x':\n  Cannot convert from type `ffi.SmallStr` to `int`",
        ),
    ],
)
def test_constructor_errors_match_cpp(args, kwargs, message):
    with pytest.raises(TypeError) as info:
        Point(*args, **kwargs)
    assert str(info.value) == message


def test_cpp_auto_init_type_gives_the_same_messages():
    # The same mistakes against a C++ type with reflection auto-init, for comparison.
    cxx = tvm_ffi.testing._TestCxxAutoInitSimple
    with pytest.raises(TypeError) as info:
        cxx(1, 2, 3, 4, 5, 6)
    assert "__ffi_init__() takes at most" in str(info.value)
    with pytest.raises(TypeError) as info:
        Point(1, 2, 3)
    assert "__ffi_init__() takes at most" in str(info.value)


def test_kw_only_field_is_not_positional():
    with pytest.raises(TypeError, match="takes at most 2 positional"):
        Point(1, 2, "label")


def test_explicit_constructor():
    interval = Interval(1.0, 2.5)
    assert (interval.lo, interval.hi) == (1.0, 2.5)
    assert interval.length() == 1.5
    with pytest.raises(ValueError, match=r"empty interval: lo=3 > hi=1"):
        Interval(3.0, 1.0)
    with pytest.raises(TypeError) as info:
        Interval(3.0)
    assert str(info.value) == (
        "Mismatched number of arguments when calling: "
        "`my_ext.Interval.__ffi_init__(lo: float, hi: float) -> ffi.Object`. Expected 2 but got 1 arguments"
    )
    with pytest.raises(TypeError) as info:
        Interval("a", 1.0)
    assert str(info.value) == (
        "Mismatched type on argument #0 (`lo`) when calling: "
        "`my_ext.Interval.__ffi_init__(lo: float, hi: float) -> ffi.Object`. Expected `float` but got `ffi.SmallStr`"
    )


# ---- fields ----------------------------------------------------------------------------------


def test_rw_field_write():
    p = Point(1, 2)
    p.x = 10
    assert p.x == 10
    assert p.norm2() == 104  # Rust sees the write


def test_read_only_field_write_raises_attribute_error():
    p = Point(1, 2)
    with pytest.raises(AttributeError):
        p.y = 5
    assert p.y == 2


def test_wrong_typed_write_raises_type_error_and_keeps_value():
    p = Point(1, 2)
    with pytest.raises(TypeError) as info:
        p.x = "text"
    assert str(info.value) == "Cannot convert from type `ffi.SmallStr` to `int`"
    assert p.x == 1
    with pytest.raises(TypeError):
        p.x = 2**70
    assert p.x == 1


def test_field_docs_and_schema_are_registered():
    info = Point.__tvm_ffi_type_info__
    by_name = {f.name: f for f in info.fields}
    assert list(by_name) == ["x", "y", "label"]
    assert by_name["x"].doc == "The x coordinate (writable from Python and C++)."
    # Exactly the form C++ writes: the schema is a JSON string inside the metadata.
    assert by_name["x"].metadata["type_schema"] == '{"type":"int"}'
    assert by_name["label"].metadata["type_schema"] == '{"type":"ffi.String"}'
    assert by_name["x"].field_static_type_index == 1
    assert by_name["label"].field_static_type_index == -1
    assert (by_name["x"].offset, by_name["y"].offset, by_name["label"].offset) == (24, 32, 40)
    assert by_name["x"].frozen is False
    assert by_name["y"].frozen is True
    assert by_name["y"].c_has_default and by_name["label"].c_kw_only
    methods = {m.name: m for m in info.methods}
    assert methods["norm2"].doc == "Squared distance from the origin."
    assert json.loads(methods["scale"].metadata["type_schema"]) == {
        "type": "ffi.Function",
        "named_args": {"return": [{"type": "my_ext.Point"}], "params": [{"type": "my_ext.Point"}, {"type": "int"}]},
    }
    assert methods["origin"].is_static


# ---- methods -------------------------------------------------------------------------------


def test_instance_static_and_this_methods():
    p = Point(3, 4)
    assert p.norm2() == 25
    scaled = p.scale(2)
    assert isinstance(scaled, Point) and fields(scaled) == (6, 8, "pt")
    origin = Point.origin()
    assert fields(origin) == (0, 0, "origin")
    assert p.is_same(p) is True
    assert p.is_same(Point(3, 4)) is False


def test_methods_from_another_module_and_child_type():
    p = Point(1, 2)
    q = p.lift(3)  # defined in `space.rs`, returns the child type defined there
    assert isinstance(q, Point3) and isinstance(q, Point)
    assert (q.x, q.y, q.z) == (1, 2, 3)
    assert q.norm2_3d() == 14  # Point3's own method
    assert q.norm2() == 5  # inherited from Point
    assert fields(q.project()) == (1, 2, "pt")


def test_method_argument_errors_name_the_method():
    with pytest.raises(TypeError) as info:
        Point(1).scale("x")
    assert str(info.value) == (
        "Mismatched type on argument #1 (`k`) when calling: "
        "`my_ext.Point.scale(self: my_ext.Point, k: int) -> my_ext.Point`. Expected `int` but got `ffi.SmallStr`"
    )


def test_child_constructor_puts_required_fields_first():
    # As for C++ types, required fields (x, z) come before fields with defaults (y).
    q = Point3(1, 3)
    assert (q.x, q.y, q.z, q.label) == (1, 7, 3, "pt")
    q = Point3(x=1, y=2, z=3, label="l")
    assert (q.x, q.y, q.z, q.label) == (1, 2, 3, "l")


# ---- hierarchy, identity, printing --------------------------------------------------------


def test_isinstance_through_the_hierarchy():
    q = Point3(1, 2)
    assert isinstance(q, Point3) and isinstance(q, Point) and isinstance(q, tvm_ffi.Object)
    assert not isinstance(Point(1), Point3)
    child = CxxChild(5, 6)
    assert isinstance(child, tvm_ffi.testing._TestCxxClassBase)


def test_rust_subtype_of_cpp_type():
    child = CxxChild(5, 6, note="hi")
    assert (child.v_i64, child.v_i32, child.note) == (5, 6, "hi")
    assert child.total() == 11
    assert CxxChild(1, 2).note == "child"


def test_repr():
    assert repr(Point(1, 2)) == 'my_ext.Point(x=1, y=2, label="pt")'
    assert repr(Point3(1, 3)) == 'my_ext.Point3(x=1, y=7, label="pt", z=3)'
    assert repr(Interval(1.0, 2.5)) == "my_ext.Interval(lo=1, hi=2.5)"


def test_identity_round_trip():
    identity = tvm_ffi.get_global_func("my_ext.identity")
    p = Point(1, 2)
    assert identity(p).same_as(p)
    made_in_rust = Point.origin()
    back = identity(made_in_rust)
    assert back.same_as(made_in_rust)
    back.x = 42
    assert made_in_rust.x == 42


# ---- structural equality, serialization, copies --------------------------------------------


def test_structural_equal_and_hash():
    assert tvm_ffi.structural_equal(Point(1, 2), Point(1, 2))
    assert not tvm_ffi.structural_equal(Point(1, 2), Point(1, 3))
    assert tvm_ffi.structural_hash(Point(1, 2)) == tvm_ffi.structural_hash(Point(1, 2))
    assert tvm_ffi.structural_hash(Point(1, 2)) != tvm_ffi.structural_hash(Point(2, 1))
    assert tvm_ffi.structural_equal(Point3(1, 2), Point3(1, 2))


def test_pickle_round_trip():
    p = Point(5, 6, label="pickled label, longer than seven bytes")
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, Point) and not q.same_as(p)
    assert fields(q) == fields(p)
    assert q.norm2() == p.norm2()


def test_json_graph_round_trip():
    to_json = tvm_ffi.get_global_func("ffi.ToJSONGraphString")
    from_json = tvm_ffi.get_global_func("ffi.FromJSONGraphString")
    q = Point3(1, 2, y=3, label="j")
    text = to_json(q, None)
    assert '"type":"my_ext.Point3"' in text
    back = from_json(text)
    assert isinstance(back, Point3)
    assert (back.x, back.y, back.z, back.label) == (1, 3, 2, "j")


def test_copy_and_deepcopy():
    p = Point(1, 2, label="c")
    for clone in (copy.copy(p), copy.deepcopy(p)):
        assert isinstance(clone, Point) and not clone.same_as(p)
        assert fields(clone) == fields(p)
        clone.x = 100
        assert p.x == 1


# ---- stubs and memory ---------------------------------------------------------------------


def test_stubgen_writes_typed_stubs(tmp_path: pathlib.Path):
    stubgen = pathlib.Path(sys.executable).with_name("tvm-ffi-stubgen")
    subprocess.run(
        [
            str(stubgen),
            "--dlls",
            example_lib_path(),
            "--init-pypkg",
            "my_ext",
            "--init-lib",
            "tvm_ffi_example_point",
            "--init-prefix",
            "my_ext.",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    api = (tmp_path / "my_ext" / "_ffi_api.py").read_text()
    assert '@_FFI_REG_OBJ("my_ext.Point")' in api
    for line in [
        "x: int",
        "label: str",
        "def __init__(self, x: int, y: int = ..., *, label: str = ...) -> None: ...",
        "def norm2(self, /) -> int: ...",
        "def origin() -> Point: ...",
        "def lift(self, _1: int, /) -> Point3: ...",
        "def __init__(self, x: int, z: int, y: int = ..., *, label: str = ...) -> None: ...",
        "def length(self, /) -> float: ...",
        "class CxxChild(_testing_TestCxxClassBase):",
    ]:
        assert line in api, line


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@skip_under_asan
def test_million_create_drop_cycles_keep_memory_flat():
    def cycle(n):
        for i in range(n):
            Point(i, label="a label longer than seven bytes")

    cycle(20_000)  # warm up allocator pools and caches
    gc.collect()
    before = _rss_bytes()
    cycle(1_000_000)
    gc.collect()
    grown = _rss_bytes() - before
    # A leak of even one 72-byte object per cycle would grow by ~70 MB.
    assert grown < 8 * 1024 * 1024, f"RSS grew by {grown} bytes"


def test_loading_a_second_copy_of_the_library_shares_types(tmp_path: pathlib.Path):
    # Another path, same contents: identical type layouts are shared, duplicate global names are
    # reported (not fatal), and the first copy's registrations stay in force.
    import shutil

    copy_path = tmp_path / "libcopy.so"
    shutil.copy(example_lib_path(), copy_path)
    script = f"""
import tvm_ffi
tvm_ffi.load_module({example_lib_path()!r})
tvm_ffi.load_module({str(copy_path)!r})
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
p = Point(3, 4)
assert p.norm2() == 25, p
assert tvm_ffi.get_global_func("my_ext.add")(1, 2) == 3
print("ok")
"""
    run = run_in_fresh_python(script)
    assert run.stdout.strip() == "ok"
    # A load error per global function (the types are shared): the first five printed, then a
    # line that counts the rest.
    lines = run.stderr.splitlines()
    assert len(lines) == 6, run.stderr
    duplicate = re.compile(r"tvm-ffi: cannot register global function `(my_ext\.\w+)`: "
                           r"Global Function `\1` is already registered$")
    assert all(duplicate.match(line) for line in lines[:5]), run.stderr
    assert re.fullmatch(r"tvm-ffi: \.\.\. and \d+ more load errors "
                        r"\(tvm_ffi::registry::load_errors\(\) lists them all\)", lines[5]), run.stderr
    assert "cannot register type" not in run.stderr


def test_a_key_defined_with_another_rust_layout_is_refused_naming_it():
    """tests/layout-variants defines `my_ext.Point` and `my_ext.Options` with reflection
    identical to the example's, but `y` stored as `Rw<i64>` (not `i64`) and the Rust-only
    `scratch` field of another type: sharing them would let each library read the other's
    memory as its own Rust type. Loaded second, it is refused, naming each key; the example's
    types keep working."""
    from conftest import _lib_path

    script = f"""
import tvm_ffi
tvm_ffi.load_module({example_lib_path()!r})
tvm_ffi.load_module({_lib_path("libtvm_ffi_layout_variants.so")!r})
for error in tvm_ffi.get_global_func("layout_variants.load_errors")():
    print(error)
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
assert Point(3, 4).norm2() == 25
try:
    tvm_ffi.get_global_func("layout_variants.make_point")()
except RuntimeError as err:
    print("first use:", err)
"""
    run = run_in_fresh_python(script)
    first_use = [line for line in run.stdout.splitlines() if line.startswith("first use:")]
    # Its first use from Rust raises the conflict itself, not a "Rust panic in" an SDK file.
    assert len(first_use) == 1, run.stdout
    assert first_use[0].startswith(
        "first use: TVM-FFI type `my_ext.Point` did not register when its library loaded: "
        "cannot register type `my_ext.Point`: type `my_ext.Point` is already registered with a "
        "different layout"
    ), first_use[0]
    assert "Rust panic" not in run.stdout
    errors = [line for line in run.stdout.splitlines() if not line.startswith("first use:")]
    assert len(errors) == 2, run.stdout
    options, point = sorted(errors)
    assert point.startswith(
        "cannot register type `my_ext.Point`: type `my_ext.Point` is already registered with a "
        "different layout (another Rust library defines it with the layout `size=56;x@0:8:rw:"
    )
    assert 'y@8:8:ro:{"type":"int"}' in point and 'y@8:8:rw:{"type":"int"}' in point
    assert options.startswith("cannot register type `my_ext.Options`: type `my_ext.Options` is already registered")
    assert "skip scratch@80:24:alloc::vec::Vec<u8>" in options and "skip scratch@80:24:[u64; 3]" in options
    # Each load error is reported on stderr once, and nothing else is.
    assert sorted(run.stderr.splitlines()) == sorted(f"tvm-ffi: {e}" for e in errors)


def test_types_are_registered_when_loaded_with_ctypes():
    # No tvm_ffi.load_module: a plain dlopen runs the registration.
    script = f"""
import ctypes
import tvm_ffi
ctypes.CDLL({example_lib_path()!r})
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
@tvm_ffi.register_object("my_ext.Point3")
class Point3(Point):
    pass
q = Point3(1, 2)
assert (q.x, q.z, q.y) == (1, 2, 7), q
assert tvm_ffi.get_global_func("my_ext.add")(2, 3) == 5
print("ok")
"""
    run = run_in_fresh_python(script)
    assert run.stdout.strip() == "ok"
    assert "tvm-ffi:" not in run.stderr, run.stderr


# ---- every field option (examples/point/src/options.rs) -----------------------------------


def test_field_options_defaults_rename_factory_and_init_off():
    a, b = Options(1), Options(1)
    assert (a.id, a.title, list(a.tags), a.hits, a.verbose, a.timeout, a.parent) == (
        1, "untitled", [], 0, False, 10, None,
    )
    assert not hasattr(a, "name") and not hasattr(a, "scratch")
    assert not a.tags.same_as(b.tags)  # default_factory: a fresh array per object
    with pytest.raises(TypeError) as info:
        Options(1, hits=3)
    assert str(info.value) == "my_ext.Options.__ffi_init__() got an unexpected keyword argument 'hits'"
    with pytest.raises(TypeError, match="positional"):
        Options(1, "t", [1], 5, 6, 7, None, True)  # `verbose` is keyword-only
    c = Options(2, verbose=True, parent=a)
    assert c.verbose is True and c.parent.same_as(a)


def test_field_options_repr_compare_hash_and_structural_flags():
    a = Options(1, cache=5, version=1)
    assert repr(a) == (
        'my_ext.Options(id=1, title="untitled", tags=(), hits=0, verbose=False, version=1, '
        "timeout=10, parent=None)"
    )  # cache: repr = false
    recursive_eq = tvm_ffi.get_global_func("ffi.RecursiveEq")
    recursive_hash = tvm_ffi.get_global_func("ffi.RecursiveHash")
    assert recursive_eq(a, Options(1, cache=99, version=1))  # compare = false
    assert recursive_hash(a) == recursive_hash(Options(1, cache=99, version=1))  # hash = false
    assert not recursive_eq(a, Options(2, cache=5, version=1))
    assert tvm_ffi.structural_equal(a, Options(1, cache=5, version=7))  # structural = "ignore"
    assert tvm_ffi.structural_hash(a) == tvm_ffi.structural_hash(Options(1, cache=5, version=7))
    assert not tvm_ffi.structural_equal(a, Options(1, cache=5, version=1, timeout=11))


def test_field_option_metadata_and_docs():
    by_name = {f.name: f for f in Options.__tvm_ffi_type_info__.fields}
    assert by_name["timeout"].metadata == {"type_schema": '{"type":"int"}', "unit": "ms", "max": 1000}
    assert by_name["title"].doc == "Renamed: Python and C++ see `title`."
    assert json.loads(by_name["parent"].metadata["type_schema"]) == {
        "type": "Optional",
        "args": [{"type": "my_ext.Options"}],
    }


def test_python_subclasses_of_rust_types_work():
    # A Python `@py_class` subclass of a Rust type is allocated (zero-filled) by Python, which
    # builds the parent's fields from their reflected storage and sets them through the Rust
    # setters; Rust methods then read the payload like any other.
    script = f"""
import tvm_ffi
from tvm_ffi.dataclasses import py_class
tvm_ffi.load_module({example_lib_path()!r})
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
@py_class("test.SubPoint")
class SubPoint(Point):
    extra: int = 0
p = SubPoint(x=3, y=4, extra=5)
print(p.x, p.y, p.label, p.extra, p.norm2())
p.x = 6
print(p.norm2(), isinstance(p, Point))
"""
    run = run_in_fresh_python(script)
    assert run.stdout.splitlines() == ["3 4 pt 5 25", "52 True"], run.stdout
