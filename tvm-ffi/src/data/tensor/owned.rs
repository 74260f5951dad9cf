//! [`Tensor`]: the runtime's reference-counted `ffi.Tensor`.
use std::fmt;
use std::ptr::NonNull;

use super::accessors::{owned_tensor_accessors, view_accessors};
use super::check::TensorCheck;
use super::dlpack::DLPackTensor;
use super::element::Element;
use super::layout::{checked_numel, compact_strides, is_contiguous, shape_of, strides_of};
use super::view::{debug_tensor, TensorView};
use crate::abi::sys::{self, DLManagedTensorVersioned, DLTensor, TVMFFIObject};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::TensorObj;
use crate::base::object::ObjectRef;
use crate::base::value::{DataType, Device};
use std::borrow::Cow;
use std::ffi::c_void;

/// A reference-counted tensor, the runtime's `ffi.Tensor` (Python `tvm_ffi.Tensor`).
///
/// Clones share the data. Python turns a returned `Tensor` into a `tvm_ffi.Tensor`, which
/// `numpy.from_dlpack` and `torch.from_dlpack` take without copying.
///
/// ```
/// use tvm_ffi::{Function, Tensor};
/// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
/// let echo = Function::from_packed(|args| args[0].to_owned());
/// let back: Tensor = echo.call_as((&t,)).unwrap();
/// assert!(back.as_object_ref().ptr_eq(t.as_object_ref())); // the same object
/// assert_eq!(back.data_ptr(), t.data_ptr());
/// assert_eq!(back.as_slice::<i64>().unwrap(), &[1, 2, 3, 4]);
/// ```
///
/// `==` and `Hash` are identity (the same tensor object, not equal contents), as for
/// [`ObjectRef`](crate::ObjectRef).
#[derive(Clone, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Tensor(pub(super) ObjectRef<TensorObj>);

impl Tensor {
    /// Imports a DLPack tensor (no copy); the tensor calls its deleter when the last holder
    /// drops it.
    ///
    /// Fails for a DLPack major version other than 1 and for read-only tensors: an
    /// `ffi.Tensor` has no read-only flag, so writers could not know.
    ///
    /// ```
    /// let t = tvm_ffi::Tensor::from_vec(vec![1.5f64, 2.5], &[2]).unwrap();
    /// let again = tvm_ffi::Tensor::from_dlpack(t.to_dlpack().unwrap()).unwrap();
    /// assert_eq!(again.as_slice::<f64>().unwrap(), &[1.5, 2.5]);
    /// ```
    pub fn from_dlpack(tensor: DLPackTensor) -> Result<Tensor> {
        let (major, minor) = tensor.version();
        if major != sys::DLPACK_MAJOR_VERSION {
            return Err(Error::value_error(format!(
                "Tensor::from_dlpack: unsupported DLPack version {major}.{minor} (this runtime \
                 reads major version {})",
                sys::DLPACK_MAJOR_VERSION
            )));
        }
        if tensor.flags() & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
            return Err(Error::value_error(
                "Tensor::from_dlpack: the DLPack tensor is read-only, and an ffi.Tensor cannot \
                 say so to its writers",
            ));
        }
        let raw = tensor.into_raw();
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: a valid managed tensor; on success the new object owns it.
        let rc = unsafe { sys::TVMFFITensorFromDLPackVersioned(raw.as_ptr(), 0, 0, &mut out) };
        if rc != 0 {
            let err = Error::from_return_code(rc);
            // SAFETY: on failure the runtime did not take the managed tensor: give it back to
            // its deleter.
            drop(unsafe { DLPackTensor::from_raw(raw) });
            return Err(err);
        }
        // SAFETY: on success `out` is a new tensor object with one reference, now ours.
        Ok(Tensor(unsafe { tensor_object_from_handle(out)? }))
    }

    /// Exports to DLPack (no copy): the result keeps the tensor alive until its deleter runs.
    pub fn to_dlpack(&self) -> Result<DLPackTensor> {
        let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
        // SAFETY: a live tensor object and an output slot; the runtime takes its own reference.
        let rc =
            unsafe { sys::TVMFFITensorToDLPackVersioned(self.0.as_raw().as_ptr() as _, &mut out) };
        if rc != 0 {
            return Err(Error::from_return_code(rc));
        }
        let ptr = NonNull::new(out)
            .ok_or_else(|| Error::runtime_error("TVMFFITensorToDLPackVersioned returned null"))?;
        // SAFETY: a fresh managed tensor that the caller owns.
        Ok(unsafe { DLPackTensor::from_raw(ptr) })
    }

    /// A borrowed view (no reference counting).
    #[inline]
    pub fn view(&self) -> TensorView<'_> {
        TensorView::of_object(&self.0)
    }

    owned_tensor_accessors!();

    /// The elements for writing in place; see [`TensorView::as_mut_slice`].
    ///
    /// # Safety
    /// As for [`TensorView::as_mut_slice`]: the clones of a `Tensor` share its memory, and so
    /// may other languages.
    #[inline]
    #[allow(clippy::mut_from_ref)] // shared memory by design; the contract above governs it
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&mut [T]> {
        // SAFETY: forwarded contract.
        unsafe { self.view().as_mut_slice() }
    }

    /// The data as bytes for writing in place; see [`TensorView::as_bytes`].
    ///
    /// # Safety
    /// As for [`TensorView::as_mut_slice`].
    #[inline]
    #[allow(clippy::mut_from_ref)] // shared memory by design; the contract above governs it
    pub unsafe fn as_mut_bytes(&self) -> Result<&mut [u8]> {
        // SAFETY: forwarded contract.
        unsafe { self.view().as_mut_bytes() }
    }

    /// The underlying object reference.
    #[inline]
    pub fn as_object_ref(&self) -> &ObjectRef<TensorObj> {
        &self.0
    }
    /// Wraps a tensor object reference.
    #[inline]
    pub fn from_object_ref(obj: ObjectRef<TensorObj>) -> Tensor {
        Tensor(obj)
    }
    /// Unwraps into the object reference.
    #[inline]
    pub fn into_object_ref(self) -> ObjectRef<TensorObj> {
        self.0
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "Tensor", &self.view())
    }
}

/// Takes ownership of a tensor handle returned by the runtime.
///
/// # Safety
/// A non-null `handle` must be a tensor object carrying one reference for the caller.
pub(super) unsafe fn tensor_object_from_handle(
    handle: sys::TVMFFIObjectHandle,
) -> Result<ObjectRef<TensorObj>> {
    let ptr = NonNull::new(handle as *mut TVMFFIObject)
        .ok_or_else(|| Error::runtime_error("the runtime returned a null tensor"))?;
    // SAFETY: the caller's contract.
    Ok(unsafe { ObjectRef::from_raw(ptr) })
}

impl<'a> TensorView<'a> {
    /// A new strong reference to the `ffi.Tensor` this view borrows, or `None` when the view
    /// came from a raw `DLTensor*` or from a [`TensorMut`](super::TensorMut) (which must stay exclusive).
    pub fn to_tensor(&self) -> Option<Tensor> {
        // SAFETY: `owner` is the live tensor object that contains `dl`, borrowed for 'a.
        self.owner
            .map(|ptr| Tensor(unsafe { ObjectRef::from_raw_borrowed(ptr) }))
    }
}
