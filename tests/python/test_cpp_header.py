"""C++ headers for Rust types (`python -m tvm_ffi_build.cpp_header`): the header
generated from a library's reflection compiles with `-Wall -Wextra -Werror` (its
`static_assert`s hold), a C++ pass builds a Rust IR's nodes with the typed `New(...)` and reads
them in place (`examples/ir/cpp/pass.cc`),
every kind of field of `examples/point` reads back in C++ as Python sees it (`Rw` fields through
their getter), a wrong type is a TypeError, and a header that no longer matches the library is a
RuntimeError naming the field."""
import pathlib
import re
import subprocess
import sys

import pytest
import tvm_ffi
from conftest import UNDER_ASAN, _lib_path, example_lib_path, run_in_fresh_python, run_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build tool's command (tvm-ffi-build/tvm_ffi_build/cpp_header.py; scripts/setup.sh installs it).
GENERATOR = ["-m", "tvm_ffi_build.cpp_header"]


def generate(library, prefix, out):
    # A process of its own: the generator loads the library, as a user's build step would.
    subprocess.run(
        [sys.executable, *GENERATOR, library, "--prefix", prefix, "--out", str(out)],
        check=True, capture_output=True, text=True,
    )
    return out.read_text()


def compile_cpp(source, out, include_dir, shared=False):
    include = tvm_ffi.libinfo.find_include_path()
    libdir = pathlib.Path(tvm_ffi.libinfo.find_libtvm_ffi()).parent
    # -isystem: warnings are ours to fix, not the wheel headers'.
    command = ["c++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-isystem", include,
               f"-I{include_dir}", str(source), "-o", str(out), f"-L{libdir}", "-ltvm_ffi",
               f"-Wl,-rpath,{libdir}", "-ldl"]
    if shared:
        command[1:1] = ["-shared", "-fPIC"]
    run = subprocess.run(command, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


def test_a_cpp_pass_reads_the_rust_ir_in_place(tmp_path):
    lib = _lib_path("libtvm_ffi_example_ir.so")
    header = generate(lib, "ir_example.", tmp_path / "ir_example_types.h")
    assert 'static_assert(offsetof(Add, a) == 24, "offset of ir_example.Add.a");' in header
    assert 'static_assert(sizeof(Let) == 48, "size of ir_example.Let");' in header
    exe = compile_cpp(ROOT / "examples" / "ir" / "cpp" / "pass.cc", tmp_path / "pass", tmp_path)
    run = subprocess.run([str(exe), lib], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "eval: 14, nodes: 8",
        "same child as the getter: true",
        "expected TypeError: expected `ir_example.Const`, got `ir_example.Var`",
    ]
    assert run.stderr == ""


@pytest.fixture(scope="module")
def reader_lib(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("header")
    generate(example_lib_path(), "my_ext.", tmp / "my_ext_types.h")
    return compile_cpp(ROOT / "tests" / "cpp" / "header_reader.cc", tmp / "libheader_reader.so",
                       tmp, shared=True)


# The checks run in a process of their own: they register Python classes for examples/point's
# types, which must not replace those of the other test modules.
PRELUDE = """
import tvm_ffi, tvm_ffi.testing
from conftest import example_lib_path
tvm_ffi.load_module(example_lib_path())
tvm_ffi.load_module({lib!r})
reader = lambda name: tvm_ffi.get_global_func("header_reader." + name)

def cls(key, base=tvm_ffi.Object):
    return tvm_ffi.register_object(key)(type(key.split(".")[-1], (base,), {{}}))

Point, Interval, Options = cls("my_ext.Point"), cls("my_ext.Interval"), cls("my_ext.Options")
Point3 = cls("my_ext.Point3", Point)
CxxChild = cls("my_ext.CxxChild", tvm_ffi.testing._TestCxxClassBase)
"""


def test_every_kind_of_field_reads_back_as_python_sees_it(reader_lib):
    run_in_fresh_python(PRELUDE.format(lib=str(reader_lib)) + """
p = Point(1, 2, label="a label longer than a small string")
assert list(reader("point")(p)) == [1, 2, "a label longer than a small string"]
p.x = 41  # an Rw field: the C++ read goes through the getter and sees the write
assert list(reader("point")(p)) == [41, 2, "a label longer than a small string"]
assert list(reader("point3")(Point3(x=3, y=4, z=5, label="pt"))) == [3, 4, "pt", 5]
assert list(reader("interval")(Interval(0.5, 2.25))) == [0.5, 2.25]
parent = Options(1, "parent")
child = Options(2, "child", [7, 8], verbose=True, parent=parent)
got = list(reader("options")(child))
expected = [child.id, child.title, child.tags, child.hits, child.verbose, child.cache,
            child.version, child.timeout, child.parent]
assert got[:2] + got[3:8] == expected[:2] + expected[3:8], (got, expected)
assert list(got[2]) == [7, 8] and got[8].same_as(parent)
assert reader("options")(parent)[8] is None
assert list(reader("cxx_child")(CxxChild(5, 6, note="hi"))) == [5, 6, "hi"]
""")


def test_cpp_builds_rust_nodes_with_the_typed_constructors(reader_lib):
    run_in_fresh_python(PRELUDE.format(lib=str(reader_lib)) + """
x, y, label, tag_sum, verbose, same_parent, child = reader("made")()
assert (x, y, label, tag_sum, verbose, same_parent) == (1, 2, "made in C++", 9, True, True)
# A Rust object, as Python reads it.
assert isinstance(child, Options) and child.id == 6 and child.parent.title == "parent"
assert child.timeout == 20 and list(child.parent.tags) == [4, 5]
# Enum parameters are typed (`IntEnum`/`StrEnum`); `Get` looks an entry up by its value.
marker, color, error, stroke = reader("stroked")()
assert (marker, color) == (2, "dark blue")
assert error == "ValueError: Enum `my_ext.Color` has no instance with index purple", error
assert tvm_ffi.get_global_func("my_ext.describe_marker")(stroke.marker, stroke.color) == "dark blue Cross"
""")


def test_subtypes_are_accepted_and_other_types_refused(reader_lib):
    run_in_fresh_python(PRELUDE.format(lib=str(reader_lib)) + """
assert reader("is_point")(Point3(x=1, y=2, z=3, label="a")) is True
assert list(reader("point")(Point3(x=1, y=2, z=3, label="a"))) == [1, 2, "a"]
assert reader("is_point")(tvm_ffi.convert([1])) is False
try:
    reader("point")(tvm_ffi.convert([1]))
except TypeError as err:
    assert str(err) == "expected `my_ext.Point`, got `ffi.Array`", err
else:
    raise AssertionError("an Array read as a Point")
""")


def test_a_stale_header_is_an_error_naming_the_field(tmp_path):
    header = generate(example_lib_path(), "my_ext.", tmp_path / "my_ext_types.h")
    # The library moved `y` (as a rebuilt crate with a new field before it would).
    stale = header.replace('{"x", 24, 8}, {"y", 32, 8}', '{"x", 24, 8}, {"y", 40, 8}')
    assert stale != header
    (tmp_path / "my_ext_types.h").write_text(stale)
    lib = compile_cpp(ROOT / "tests" / "cpp" / "header_reader.cc", tmp_path / "libstale.so",
                      tmp_path, shared=True)
    run = run_python(f"""
import tvm_ffi
from conftest import example_lib_path
tvm_ffi.load_module(example_lib_path())
tvm_ffi.load_module({str(lib)!r})
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass
try:
    tvm_ffi.get_global_func("header_reader.point")(Point(1, 2))
except RuntimeError as err:
    print(err)
""")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == (
        "the generated header of `my_ext.Point` does not match the loaded library (regenerate "
        "it): field `y` is 8 bytes at offset 32, the header says 8 at 40"
    )


@pytest.mark.skipif(UNDER_ASAN, reason="runs cargo, which must not inherit the preloaded sanitizer")
def test_the_build_backend_writes_the_header(tmp_path):
    """`python -m tvm_ffi_build cpp-header --out PATH` in a package made from the template (here
    examples/point) builds the library and writes the header of the package's prefix."""
    out = tmp_path / "my_ext_types.h"
    run = subprocess.run(
        [sys.executable, "-m", "tvm_ffi_build", "cpp-header", "--out", str(out)],
        cwd=ROOT / "examples" / "point", capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(out)
    header = out.read_text()
    assert re.search(r'^// \(the object types under "my_ext\."\)', header, re.M)
    assert "class Point3 {" in header and "class Options {" in header
    assert 'static_assert(sizeof(Options) == 128, "size of my_ext.Options");' in header
