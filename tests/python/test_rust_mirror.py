"""Rust declarations of C++ types, generated (`python -m tvm_ffi_build.rust_mirror`):
the declarations of every `ffi.*` and `testing.*` type of the wheel (`tests/mirrors/src/
generated.rs`) are current, load with no error (the SDK checks each against the runtime's
reflection), and read C++ objects' fields, call their methods and construct them from Rust; the
types the generator cannot declare are listed with the reason, each one the SDK's own load
check would also refuse."""
import pathlib
import subprocess
import sys

import pytest
from conftest import UNDER_ASAN, _lib_path, run_in_fresh_python

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The build tool's command (tvm-ffi-build/tvm_ffi_build/rust_mirror.py; scripts/setup.sh installs it).
GENERATOR = ["-m", "tvm_ffi_build.rust_mirror"]
GENERATED = ROOT / "tests" / "mirrors" / "src" / "generated.rs"
ARGS = ["--import", "tvm_ffi.testing", "--prefix", "ffi.", "--prefix", "testing."]


@pytest.mark.skipif(UNDER_ASAN, reason="runs rustfmt, which must not inherit the preloaded sanitizer")
def test_the_generated_declarations_are_current(tmp_path):
    out = tmp_path / "generated.rs"
    subprocess.run([sys.executable, *GENERATOR, *ARGS, "--out", str(out)], check=True)
    assert out.read_text() == GENERATED.read_text(), (
        "tests/mirrors/src/generated.rs is stale: run python -m tvm_ffi_build.rust_mirror"
        " " + " ".join(ARGS) + " --out tests/mirrors/src/generated.rs")


def test_what_is_declared_and_what_is_not():
    text = GENERATED.read_text()
    declared = text.count("#[ffi_type(key = ")
    assert declared == text.count("unsafe impl tvm_ffi::ExternalType for ") >= 30
    for line in [
        '#[ffi_type(key = "testing.TestCxxClassDerivedDerived", external)]',
        "    pub base: TestCxxClassDerived,",
        "    pub v_map: tvm_ffi::Rw<tvm_ffi::Map<tvm_ffi::Any, tvm_ffi::Any>>,",
        # A C++ object reference may be null: `Option`, as the SDK's load check requires.
        "    pub value: tvm_ffi::Rw<Option<tvm_ffi::ObjectRef<TestObjectBase>>>,",
        "    pub fn new(arg0: i64, arg1: i64) -> tvm_ffi::Result<tvm_ffi::ObjectRef<TestIntPair>> {",
        "    pub fn add_i64(this: &tvm_ffi::ObjectRef<Self>, arg0: i64) -> tvm_ffi::Result<i64> {",
    ]:
        assert line in text, line
    for reason in [
        # Opaque: a typed handle, its parent declared, its own fields not (the blocker named).
        "/// The type `testing.SchemaAllTypes` (184 bytes), declared from the runtime's "
        "reflection: opaque (field `v_variant` has the type `Variant`, which the generated "
        "declarations do not express), its own fields are not declared.",
        '#[ffi_type(key = "testing.TestCxxClassPolymorphic", external, opaque)]',
        "// - `ffi.Array`: the SDK declares it (`tvm_ffi::Array`)",
    ]:
        assert reason in text, reason


def test_every_declaration_loads_and_reads_cpp_objects():
    run_in_fresh_python(f"""
import tvm_ffi, tvm_ffi.testing as t
tvm_ffi.load_module({_lib_path("libtvm_ffi_test_mirrors.so")!r})
f = lambda name: tvm_ffi.get_global_func("mirrors." + name)
assert list(f("load_errors")()) == []
base = t.TestObjectBase(v_i64=3, v_f64=1.5, v_str="a string longer than small")
assert list(f("object_base")(base)) == [3, 1.5, "a string longer than small", 4]
base.v_i64 = 10                      # a C++ write, seen by the Rust read (fields are Rw)
assert list(f("object_base")(base))[0] == 10
derived = t.TestObjectDerived(v_i64=1, v_f64=2.0, v_str="s", v_map={{"a": 1, "b": 2}}, v_array=[1, 2, 3])
assert list(f("object_base")(derived))[:3] == [1, 2.0, "s"]     # as its parent
assert list(f("object_derived")(derived)) == [1, 2, 3]
dd = t._TestCxxClassDerivedDerived(v_i64=1, v_i32=2, v_f64=3.5, v_f32=4.25, v_str="v", v_bool=True)
assert list(f("derived_derived")(dd)) == [1, 2, 3.5, 4.25, "v", True]
holder = t.TestObjectPtrHolder(value=base, optional_value=None)
assert list(f("ptr_holder")(holder)) == [10, None]
pair, total = f("int_pair")(20, 22)
assert (pair.a, pair.b, total) == (20, 22, 42) and type(pair).__name__ == "TestIntPair"
try:
    f("object_derived")(base)
except TypeError as err:
    assert "testing.TestObjectDerived" in str(err), err
else:
    raise AssertionError("a base passed as the derived type")
""")
