//! The runtime's registration calls that several parts of the registry make, with their
//! return codes turned into errors.
use crate::abi::sys;
use crate::base::error::{Error, Result};
use crate::base::object::RuntimeType;
use crate::base::value::Any;

/// A runtime return code as a `Result` (the error the runtime raised).
pub(super) fn check(rc: i32) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::from_return_code(rc))
    }
}

/// A borrowed byte array of `s` for a call that copies it.
pub(super) fn byte_array(s: &str) -> sys::TVMFFIByteArray {
    sys::TVMFFIByteArray::from_bytes(s.as_bytes())
}

/// Registers the type attribute `name` of `ty` (the runtime copies the value).
pub(super) fn register_attr(ty: RuntimeType, name: &str, value: Any) -> Result<()> {
    let name = byte_array(name);
    // SAFETY: valid name and value; the runtime copies both.
    check(unsafe { sys::TVMFFITypeRegisterAttr(ty.index, &name, value.as_raw()) })
}
