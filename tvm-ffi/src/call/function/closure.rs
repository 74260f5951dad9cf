//! Rust closures as function objects: the header, the runtime's function cell (`safe_call`,
//! with no C++ fast path) and the closure in one allocation, reached through one indirect call.
use std::borrow::Cow;
use std::ffi::{c_int, c_void};

use super::panic_guard;
use crate::abi::sys::{self, type_index as ti, TVMFFIAny};
use crate::base::error::Result;
use crate::base::object::builtin::FunctionObj;
use crate::base::object::{self, ObjectCell, ObjectRef};
use crate::base::value::{Any, AnyView};

/// Payload of a Rust-allocated function object: the runtime's cell first, then the closure.
#[repr(C)]
struct ClosureCell<F> {
    cell: sys::TVMFFIFunctionCell,
    name: Cow<'static, str>,
    body: F,
}

unsafe extern "C" fn closure_trampoline<F>(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int
where
    F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any>,
{
    // SAFETY: the runtime passes the function object itself; we allocated it as
    // ObjectCell<ClosureCell<F>>, so the payload sits at PAYLOAD_OFFSET.
    let closure = unsafe {
        &*((handle as *const u8).add(ObjectCell::<ClosureCell<F>>::PAYLOAD_OFFSET)
            as *const ClosureCell<F>)
    };
    // SAFETY: the runtime's calling convention, passed on unchanged.
    unsafe { panic_guard::enter(&closure.name, args, num_args, result, &closure.body) }
}

/// Allocates the function object of a closure whose alignment is at most 8.
pub(super) fn alloc_closure<F>(name: Cow<'static, str>, body: F) -> ObjectRef<FunctionObj>
where
    F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
{
    let payload = ClosureCell {
        cell: sys::TVMFFIFunctionCell {
            safe_call: Some(closure_trampoline::<F>),
            cpp_call: std::ptr::null_mut(),
        },
        name,
        body,
    };
    // SAFETY: a closure cell starts with the runtime's function cell, the payload of
    // `ffi.Function`.
    let ptr = unsafe { object::alloc_object(payload, ti::kTVMFFIFunction, 0) };
    // SAFETY: a fresh function object (header + function cell prefix), one reference.
    unsafe { ObjectRef::from_raw(ptr) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::function::signature::{FnSignature, TypeDesc};
    use crate::call::function::Function;

    static SIG: FnSignature = FnSignature {
        owner: "",
        name: Cow::Borrowed("demo.twice"),
        params: Cow::Borrowed(&[TypeDesc::of::<i64>()]),
        ret: TypeDesc::of::<i64>(),
        names: &[],
    };

    fn invoke<'a>(sig: &FnSignature, args: &'a [AnyView<'a>]) -> Result<Any> {
        sig.check_arity(args)?;
        Ok(Any::new(2 * sig.arg::<i64>(args, 0)?))
    }

    #[test]
    fn from_invoke_names_the_signature_in_errors() {
        let twice = Function::from_invoke(&SIG, invoke);
        assert_eq!(twice.call_as::<i64, _>((21,)).unwrap(), 42);
        assert_eq!(
            twice.call(("x",)).unwrap_err().message(),
            "Mismatched type on argument #0 when calling: `demo.twice(0: int) -> int`. Expected `int` but got `ffi.SmallStr`"
        );
    }
}
