//! [`DLPackTensor`]: the DLPack (1.x) exchange form of a tensor.
use std::fmt;
use std::ptr::NonNull;

use super::view::{debug_tensor, TensorView};
use crate::abi::sys::DLManagedTensorVersioned;

/// An owned `DLManagedTensorVersioned*`, the DLPack (1.x) exchange form of a tensor: dropping
/// it calls its deleter. [`Tensor::to_dlpack`](super::Tensor::to_dlpack) makes one,
/// [`Tensor::from_dlpack`](super::Tensor::from_dlpack) takes one,
/// [`into_raw`](Self::into_raw) hands it to a C consumer.
///
/// ```
/// use tvm_ffi::{DLPackTensor, Tensor};
/// let tensor = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let exchanged: DLPackTensor = tensor.to_dlpack().unwrap(); // shares the data
/// assert_eq!(exchanged.version().0, 1);
/// assert_eq!(exchanged.view().shape(), &[3]);
/// let back = Tensor::from_dlpack(exchanged).unwrap();
/// assert_eq!(back.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0]);
/// ```
pub struct DLPackTensor {
    ptr: NonNull<DLManagedTensorVersioned>,
}

// SAFETY: DLPack allows the deleter to run on any thread; the tensor's fields are plain data.
unsafe impl Send for DLPackTensor {}

impl DLPackTensor {
    /// Takes ownership of a managed tensor.
    ///
    /// # Safety
    /// `ptr` must be a valid `DLManagedTensorVersioned` that the caller owns (its deleter has
    /// not run and no one else will call it), describing memory valid until the deleter runs.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<DLManagedTensorVersioned>) -> DLPackTensor {
        DLPackTensor { ptr }
    }

    /// Gives up ownership: the receiver must call the deleter.
    #[inline]
    pub fn into_raw(self) -> NonNull<DLManagedTensorVersioned> {
        std::mem::ManuallyDrop::new(self).ptr
    }

    /// The managed tensor, still owned by `self`.
    #[inline]
    pub fn as_ptr(&self) -> *mut DLManagedTensorVersioned {
        self.ptr.as_ptr()
    }

    fn managed(&self) -> &DLManagedTensorVersioned {
        // SAFETY: valid while owned (`from_raw`'s contract).
        unsafe { self.ptr.as_ref() }
    }

    /// The DLPack version of the producer, `(major, minor)`.
    pub fn version(&self) -> (u32, u32) {
        let v = self.managed().version;
        (v.major, v.minor)
    }

    /// The DLPack flags (`DLPACK_FLAG_BITMASK_READ_ONLY`, ...).
    pub fn flags(&self) -> u64 {
        self.managed().flags
    }

    /// A view of the tensor.
    pub fn view(&self) -> TensorView<'_> {
        // SAFETY: the managed tensor's DLTensor is valid until its deleter runs, which cannot
        // happen while `self` is borrowed.
        unsafe { TensorView::from_dltensor(&self.managed().dl_tensor) }
    }
}

impl Drop for DLPackTensor {
    fn drop(&mut self) {
        if let Some(deleter) = self.managed().deleter {
            // SAFETY: we own the managed tensor; DLPack's deleter releases it exactly once.
            unsafe { deleter(self.ptr.as_ptr()) }
        }
    }
}

impl fmt::Debug for DLPackTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "DLPackTensor", &self.view())
    }
}
