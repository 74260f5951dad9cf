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
