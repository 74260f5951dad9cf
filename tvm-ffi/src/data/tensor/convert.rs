//! Conversions of the tensor types into and out of values and arguments.
use std::ffi::c_void;

use super::mutable::TensorMut;
use super::owned::Tensor;
use super::view::TensorView;
use crate::abi::sys::{self, type_index as ti, DLTensor};
use crate::base::error::Result;
use crate::base::object::builtin::TensorObj;
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::call::function::{impl_into_arg_borrowed, object_view, IntoArg};

impl TypeSchema for Tensor {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
crate::base::value::object_wrapper_conversions!(Tensor, TensorObj);

impl TypeSchema for &Tensor {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
impl<'a> FromAny<'a> for &'a Tensor {
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&'a ObjectRef<TensorObj>>::from_any(view)?;
        // SAFETY: Tensor is repr(transparent) over ObjectRef<TensorObj>.
        Some(unsafe { &*(obj as *const ObjectRef<TensorObj> as *const Tensor) })
    }
}

impl TypeSchema for TensorMut {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
impl IntoAny for TensorMut {
    /// Shares the tensor ([`TensorMut::freeze`]), so a kernel may return a `TensorMut`.
    fn into_any(self) -> Any {
        self.freeze().into_any()
    }
}

impl TypeSchema for TensorView<'_> {
    /// `DLTensor*`, as C++ names `TensorView` in signatures (Python shows both as `Tensor`).
    fn type_str() -> String {
        "DLTensor*".into()
    }
}
impl<'a> FromAny<'a> for TensorView<'a> {
    /// Accepts an `ffi.Tensor` or a non-null `DLTensor*`, as C++ `TensorView` does.
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        let raw = view.as_raw();
        match raw.type_index {
            ti::kTVMFFITensor => {
                let obj = <&'a ObjectRef<TensorObj>>::from_any(view)?;
                Some(TensorView::of_object(obj))
            }
            ti::kTVMFFIDLTensorPtr => {
                // SAFETY: index 7 stores a DLTensor pointer borrowed for the call ('a).
                let ptr = unsafe { raw.value.v_ptr } as *const DLTensor;
                // SAFETY: the caller passes a valid DLTensor for the call, as C++ assumes.
                unsafe { ptr.as_ref() }.map(|dl| TensorView { dl, owner: None })
            }
            _ => None,
        }
    }
}

impl_into_arg_borrowed! {
    [] Tensor => |h| object_view(h.as_object_ref());
}

/// A view is passed as its `ffi.Tensor` object when it has one (so both `Tensor` and
/// `TensorView` parameters accept it), else as a `DLTensor*`, as C++ passes a `TensorView`.
// SAFETY: this crate's own view of the tensor.
unsafe impl crate::call::function::args::Sealed for TensorView<'_> {}
impl<'a> IntoArg for TensorView<'a> {
    type Holder = TensorView<'a>;
    #[inline]
    fn into_holder(self) -> Result<Self> {
        Ok(self)
    }
    #[inline]
    fn view(holder: &Self) -> AnyView<'_> {
        let raw = match holder.owner_object() {
            Some(obj) => crate::base::value::pod(
                ti::kTVMFFITensor,
                sys::TVMFFIAnyValue {
                    v_obj: obj.as_ptr(),
                },
            ),
            None => crate::base::value::pod(
                ti::kTVMFFIDLTensorPtr,
                sys::TVMFFIAnyValue {
                    v_ptr: holder.as_dltensor() as *const sys::DLTensor as *mut c_void,
                },
            ),
        };
        // SAFETY: the tensor object or the DLTensor is borrowed by `holder` (the view's
        // lifetime), which keeps it and its data alive and unchanged.
        unsafe { AnyView::from_raw(raw) }
    }
}
