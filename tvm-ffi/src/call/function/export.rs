//! Module exports: the C symbols through which `tvm_ffi.load_module(lib).NAME` (and C++
//! `ffi::Module::GetFunction`) reach a function without the global registry, the Rust side of
//! C++ `TVM_FFI_DLL_EXPORT_TYPED_FUNC` / `TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC`.
//!
//! For `#[ffi_func(export = "NAME")]` the macro emits three `#[no_mangle]` functions of type
//! `TVMFFISafeCallType`, each a one-line call into this module:
//!
//! | symbol | called by | does |
//! | --- | --- | --- |
//! | `__tvm_ffi_NAME` | `mod.NAME(...)` | [`call`]: the function itself |
//! | `__tvm_ffi__metadata_NAME` | `mod.get_function_metadata("NAME")` | [`string`]: `{"type_schema":"..."}` |
//! | `__tvm_ffi__doc_NAME` (only for a documented function) | `mod.get_function_doc("NAME")` | [`string`]: the `///` doc |
//!
//! The export runs the same generated argument/result conversion as the function's global
//! object ([`super::Function::from_invoke`]) through the same boundary code, so arity and type
//! errors read exactly as C++ writes them (naming the export, as C++ does: `add_one(0: int) ->
//! int`), a Rust `Err` raises its kind, and a panic becomes a `RuntimeError` naming the export;
//! nothing unwinds into the caller. The runtime passes a null `self` to exports; it is ignored.
use std::ffi::c_int;

use super::panic_guard;
use super::signature::FnSignature;
use super::Function;
use crate::abi::sys::TVMFFIAny;
use crate::base::error::Result;
use crate::base::value::{Any, AnyView, String};

/// The body of the `__tvm_ffi_NAME` symbol of a typed function: binds the arguments to the
/// parameters ([`FnSignature::with_args`]: arity, keywords, defaults) and runs `invoke` (the
/// function's generated argument and result conversion, which receives exactly one argument
/// per parameter) with `signature` (named after the export) at the ABI boundary.
///
/// # Safety
/// The `TVMFFISafeCallType` contract: `args` points to `num_args` borrowed values that stay
/// alive during the call, and `result` is a writable slot the caller initialised to `None`.
#[inline]
pub unsafe fn call<F>(
    signature: &FnSignature,
    invoke: F,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int
where
    F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any>,
{
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe {
        call_packed(
            signature,
            |signature, args| signature.with_args(args, |args| invoke(signature, args)),
            args,
            num_args,
            result,
        )
    }
}

/// [`call`] for a packed function: `invoke` receives the arguments as they came.
///
/// # Safety
/// As for [`call`].
#[inline]
pub unsafe fn call_packed<F>(
    signature: &FnSignature,
    invoke: F,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int
where
    F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any>,
{
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe {
        panic_guard::enter(&signature.full_name(), args, num_args, result, |args| {
            invoke(signature, args)
        })
    }
}

/// The body of the `__tvm_ffi__metadata_NAME` and `__tvm_ffi__doc_NAME` symbols: writes
/// `text()` as an owned `ffi.String` (allocated by libtvm_ffi, as C++ does, so it does not
/// depend on this library's allocator). Any arguments are ignored. `context` names the symbol
/// in the error raised if `text` panics.
///
/// # Safety
/// `result` must be a writable slot the caller initialised to `None`.
pub unsafe fn string<S: AsRef<str>>(
    context: &str,
    result: *mut TVMFFIAny,
    text: impl FnOnce() -> S,
) -> c_int {
    // SAFETY: the caller's contract on `result`; no arguments are read.
    unsafe {
        panic_guard::enter(context, std::ptr::null(), 0, result, |_| {
            Ok(Any::new(String::new(text().as_ref())))
        })
    }
}

/// The function object of a typed function whose argument and result conversion is
/// `invoke` (what `#[ffi_func(name = ...)]` and `#[ffi_methods]` register; generated code
/// names it as `__private::function_from_invoke`): the arguments are bound to the parameters
/// first ([`FnSignature::with_args`]), so `invoke` receives one argument per parameter.
///
/// # Safety
/// `signature` is `invoke`'s own (its parameters, their names and its result, generated from
/// the same Rust signature): the result is registered under it, and the runtime and Python
/// take that signature (the `type_schema` of its metadata) as the truth about the function.
pub unsafe fn function_from_invoke<F>(signature: &'static FnSignature, invoke: F) -> Function
where
    F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
{
    Function::from_invoke(signature, move |signature, args| {
        signature.with_args(args, |args| invoke(signature, args))
    })
}

/// [`function_from_invoke`] for a packed function: `invoke` receives the arguments as they
/// came.
///
/// # Safety
/// As for [`function_from_invoke`].
pub unsafe fn function_from_packed_invoke<F>(signature: &'static FnSignature, invoke: F) -> Function
where
    F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
{
    Function::from_invoke(signature, invoke)
}
