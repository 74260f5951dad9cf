//! `Debug` of objects and values through the runtime's reflection printer (`ffi.ReprPrint`),
//! the same text as Python's `repr`. It lives here, above the object and value layers, because
//! printing calls a global function.
use std::fmt;

use super::GlobalCache;
use crate::abi::sys::type_index as ti;
use crate::base::object::builtin::AnyObject;
use crate::base::object::{ObjectRef, ObjectType};
use crate::base::value::{Any, AnyView, DataType, Device};

/// The runtime's reflection-based printout of an object (`ffi.ReprPrint`), as Python's `repr`.
pub(crate) fn repr_of(obj: &ObjectRef<AnyObject>) -> Option<std::string::String> {
    static REPR: GlobalCache = GlobalCache::new("ffi.ReprPrint");
    let f = REPR.get().ok()?;
    let out = f.call((obj,)).ok()?;
    out.checked_cast::<std::string::String>()
}

impl<T: ObjectType> fmt::Debug for ObjectRef<T> {
    /// Prints through the runtime's reflection printer (the same text as Python's `repr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match repr_of(self.as_object()) {
            Some(text) => f.write_str(&text),
            None => write!(f, "{}({:p})", self.type_key(), self.as_raw()),
        }
    }
}

impl<T: ObjectType> fmt::Display for ObjectRef<T> {
    /// The runtime's reflection printer (`ffi.ReprPrint`), as Python's `repr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = self.as_raw();
        // SAFETY: each arm reads the union member that the type index selects.
        unsafe {
            match raw.type_index {
                ti::kTVMFFINone => f.write_str("None"),
                ti::kTVMFFIInt => write!(f, "{}", raw.value.v_int64),
                ti::kTVMFFIBool => write!(f, "{}", raw.value.v_int64 != 0),
                ti::kTVMFFIFloat => write!(f, "{:?}", raw.value.v_float64),
                ti::kTVMFFIOpaquePtr => write!(f, "{:p}", raw.value.v_ptr),
                ti::kTVMFFIDataType => write!(f, "{}", DataType::from(raw.value.v_dtype)),
                ti::kTVMFFIDevice => write!(f, "{}", Device::from(raw.value.v_device)),
                _ => {
                    if let Some(s) = self.checked_cast::<&str>() {
                        write!(f, "{s:?}")
                    } else if let Some(obj) = self.checked_cast::<&ObjectRef<AnyObject>>() {
                        write!(f, "{obj:?}")
                    } else {
                        write!(f, "<{}>", self.type_key())
                    }
                }
            }
        }
    }
}

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_view(), f)
    }
}
