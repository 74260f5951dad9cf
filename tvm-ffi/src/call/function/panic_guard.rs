//! The `extern "C"` boundary: every Rust function the runtime can call runs through [`guard`],
//! which writes an `Ok` value into the caller's result slot, raises an `Err`, and turns a panic
//! into a `RuntimeError` whose message says it was a panic and where. Nothing unwinds into C.
use crate::abi::sys::TVMFFIAny;
use crate::base::error::panic::{catch, raise_panic};
use crate::base::error::Result;
use crate::base::value::{Any, AnyView};
use std::ffi::c_int;

/// Runs `body` at the ABI boundary: writes its value into `result` and returns 0, or raises the
/// error (or the panic, as a `RuntimeError`) and returns -1.
///
/// # Safety
/// `result` must be a valid, writable output slot (the caller zero-initialises it).
#[inline]
pub unsafe fn guard(
    context: &str,
    result: *mut TVMFFIAny,
    body: impl FnOnce() -> Result<Any>,
) -> i32 {
    match catch(body) {
        Ok(Ok(value)) => {
            // SAFETY: valid output slot per the contract; ownership moves to the caller.
            unsafe { result.write(value.into_raw()) };
            0
        }
        Ok(Err(err)) => {
            err.set_raised();
            -1
        }
        Err(payload) => {
            raise_panic(context, payload);
            -1
        }
    }
}

/// The one body behind every `safe_call` that Rust implements: the trampoline of Rust function
/// objects ([`Function::from_packed`] and everything built on it, including the globals of
/// `#[ffi_func]`) and the module exports of `#[ffi_func(export = ...)]`
/// ([`super::export::call`]). It views the arguments, runs `body` under
/// [`guard`] (an `Err` is raised, a panic becomes a `RuntimeError` naming `context`,
/// nothing unwinds into C) and moves the owned result into the caller's slot.
///
/// # Safety
/// The `TVMFFISafeCallType` contract: `args` points to `num_args` borrowed values that stay
/// alive during the call, and `result` is a writable slot the caller initialised to `None`.
#[inline(always)]
pub(crate) unsafe fn enter<F>(
    context: &str,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
    body: F,
) -> c_int
where
    F: for<'a> FnOnce(&'a [AnyView<'a>]) -> Result<Any>,
{
    // A negative count cannot come from a well-behaved caller; it reads as "no arguments", so
    // a typed function reports the arity mismatch instead of reading out of bounds.
    // SAFETY: the caller passes `num_args` borrowed values that outlive the call.
    let args = unsafe { AnyView::slice_from_raw(args, num_args.max(0) as usize) };
    // SAFETY: `result` is the caller's zero-initialised output slot.
    unsafe { guard(context, result, || body(args)) }
}
