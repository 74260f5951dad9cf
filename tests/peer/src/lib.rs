//! Rust functions that use what other languages hand them: a `Module` loaded by Python or C++,
//! and objects of C++ or Python types read and called by name, never declared in Rust. Called
//! by `tests/python/test_peer.py` and `tests/cpp/peer.cc`.
use tvm_ffi::builtin::Object;
use tvm_ffi::{ffi_func, Any, AnyView, Module, ObjectRef, Result};

/// Calls the function `name` of `module` with `x`.
#[ffi_func(name = "test_peer.module_call")]
fn module_call(module: Module, name: &str, x: i64) -> Result<i64> {
    module.function(name)?.call_as((x,))
}

/// What Rust reads of `module`'s function `name`: `[kind, implements, doc, metadata]`.
#[ffi_func(name = "test_peer.module_info")]
fn module_info(module: Module, name: &str) -> Result<tvm_ffi::Array<Any>> {
    tvm_ffi::Array::new([
        Any::new(module.kind()?),
        Any::new(module.implements_function(name)?),
        Any::new(module.function_doc(name)?),
        Any::new(module.function_metadata(name)?),
    ])
}

/// The field `name` of `obj`, whatever its type.
#[ffi_func(name = "test_peer.get_field")]
fn get_field(obj: ObjectRef<Object>, name: &str) -> Result<Any> {
    obj.get_field_any(name)
}

/// The field `name` of `obj` as an integer (a typed read).
#[ffi_func(name = "test_peer.get_int_field")]
fn get_int_field(obj: ObjectRef<Object>, name: &str) -> Result<i64> {
    obj.get_field(name)
}

/// Sets the field `name` of `obj` to `value`.
#[ffi_func(name = "test_peer.set_field")]
fn set_field(obj: ObjectRef<Object>, name: &str, value: Any) -> Result<()> {
    obj.set_field(name, value)
}

/// `(obj, name, *args)`: calls the method `name` of `obj` with `args`.
#[ffi_func(name = "test_peer.call_method")]
fn call_method(args: &[AnyView]) -> Result<Any> {
    let [obj, name, rest @ ..] = args else {
        tvm_ffi::bail!(
            TypeError,
            "test_peer.call_method(obj, name, *args) needs obj and name"
        );
    };
    let obj: ObjectRef<Object> = obj.cast()?;
    obj.call_method(name.cast::<&str>()?, rest)
}

/// Loads the module at `path` from Rust and calls its function `name` with `x`.
///
/// Test-only: loading a library trusts it (`Module::load_from_file` is `unsafe`); the tests
/// pass libraries of this workspace, as Python's `tvm_ffi.load_module` trusts its caller.
#[ffi_func(name = "test_peer.load_and_call")]
fn load_and_call(path: &str, name: &str, x: i64) -> Result<i64> {
    // SAFETY: only the test suite calls this, with libraries this workspace built.
    unsafe { Module::load_from_file(path)? }
        .function(name)?
        .call_as((x,))
}
