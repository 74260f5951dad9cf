//! [`TensorView`]: a borrowed tensor, the argument type of kernels, and the accessors every
//! tensor type shares.
use std::borrow::Cow;
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

use super::accessors::view_accessors;
use super::element::Element;
use super::layout::{
    byte_parts, byte_span, checked_numel, compact_strides, is_contiguous, same_memory_space,
    shape_of, slice_parts, strides_of,
};
use crate::abi::sys::{DLTensor, TVMFFIObject};
use crate::base::error::Result;
use crate::base::object::builtin::TensorObj;
use crate::base::object::ObjectRef;
use crate::base::value::{DataType, Device};

/// A borrowed tensor: the argument type of kernels (C++ `ffi::TensorView`).
///
/// Converting an argument into a view costs no reference counting: it accepts an `ffi.Tensor`
/// object (what Python passes for NumPy arrays, PyTorch tensors and `tvm_ffi.Tensor`) or a raw
/// `DLTensor*` (type index 7, what C++ passes for its `TensorView`), borrowed for the call.
/// Its signature type is `DLTensor*`, as in C++.
///
/// ```
/// use tvm_ffi::{Any, Function, Tensor, TensorView};
/// let sum = Function::from_packed(|args| {
///     let x: TensorView = args[0].cast()?;
///     let xs = x.check("x").ndim(1)?.as_slice::<f64>()?;
///     Ok(Any::new(xs.iter().sum::<f64>()))
/// });
/// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.5], &[3]).unwrap();
/// assert_eq!(sum.call_as::<f64, _>((&t,)).unwrap(), 6.5);
/// let err = sum.call((Tensor::from_vec(vec![1i32], &[1]).unwrap(),)).unwrap_err();
/// assert_eq!(err.message(), "`x` must be a contiguous CPU tensor of dtype float64, got int32 on cpu:0");
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    pub(super) dl: &'a DLTensor,
    /// The `ffi.Tensor` object containing `dl`, when there is one and sharing it is allowed.
    pub(super) owner: Option<NonNull<TVMFFIObject>>,
}

// SAFETY: a view is immutable metadata plus, optionally, a pointer to a thread-safe
// reference-counted object; element access goes through methods whose contracts cover
// concurrent use.
unsafe impl Send for TensorView<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorView<'_> {}

impl<'a> TensorView<'a> {
    /// Views a DLTensor (for example one received through a C API).
    ///
    /// # Safety
    /// For `'a`, `dl`'s shape (and strides, unless null) must point to `ndim` valid entries that
    /// do not change, and its data must be valid for the elements they describe.
    #[inline]
    pub unsafe fn from_dltensor(dl: &'a DLTensor) -> TensorView<'a> {
        TensorView { dl, owner: None }
    }

    /// The view of a tensor object (shares the object when converted back with `to_tensor`).
    #[inline]
    pub(super) fn of_object(obj: &'a ObjectRef<TensorObj>) -> TensorView<'a> {
        let payload: &'a TensorObj = obj;
        TensorView {
            dl: &payload.dl_tensor,
            owner: Some(obj.as_raw()),
        }
    }

    /// The underlying `DLTensor`.
    #[inline]
    pub fn as_dltensor(&self) -> &'a DLTensor {
        self.dl
    }

    view_accessors!('a);

    /// The object `to_tensor` would share, without taking a reference.
    #[inline]
    pub(super) fn owner_object(&self) -> Option<NonNull<TVMFFIObject>> {
        self.owner
    }

    /// Whether the memory of the two tensors may overlap. Conservative: a strided tensor counts
    /// as covering every byte between its first and last element, and tensors on different
    /// devices never overlap (unless both are host memory).
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let a = Tensor::from_vec(vec![0f32; 4], &[4]).unwrap();
    /// let b = Tensor::from_vec(vec![0f32; 4], &[4]).unwrap();
    /// assert!(a.view().overlaps(&a.view()));
    /// assert!(!a.view().overlaps(&b.view()));
    /// ```
    pub fn overlaps(&self, other: &TensorView<'_>) -> bool {
        if !same_memory_space(self.device(), other.device()) {
            return false;
        }
        match (byte_span(self.dl), byte_span(other.dl)) {
            (Some(a), Some(b)) => a.0 < b.1 && b.0 < a.1,
            _ => false,
        }
    }

    /// The elements, when the tensor is a contiguous host tensor of element type `T`;
    /// otherwise an error saying what was expected and what the tensor is (`TypeError` for a
    /// wrong dtype, `ValueError` for a wrong device or layout).
    ///
    /// Safe under the [crate-wide convention](super#who-may-write-tensor-memory) that a caller
    /// does not write the tensors it passes while the callee runs.
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let t = Tensor::from_vec(vec![1u8, 2, 3], &[3]).unwrap();
    /// assert_eq!(t.view().as_slice::<u8>().unwrap(), &[1, 2, 3]);
    /// ```
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        let (first, len) = slice_parts::<T>(self.dl, None)?;
        // SAFETY: `slice_parts` checked dtype, host access, contiguity, alignment and size, so
        // `len` elements of `T` start at `first`, valid for 'a. Nothing writes them meanwhile:
        // safe Rust cannot write shared tensor memory, unsafe writers promise exclusivity, and
        // callers do not write arguments during a call (module docs).
        Ok(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
    }

    /// The data as bytes, whatever the dtype, when the tensor is a contiguous host tensor:
    /// how fp8 (`float8_e4m3fn`, ...), packed sub-byte types (`int4`, `float4_e2m1fn`, ...) and
    /// `bool` tensors are read. Sub-byte elements are packed as DLPack specifies (element `i` in
    /// bits `i * bits ..`, little bit order), so a tensor of `n` elements has
    /// `ceil(n * bits / 8)` bytes ([`DataType::size_in_bits`]).
    ///
    /// ```
    /// use tvm_ffi::{DataType, Tensor};
    /// let t = Tensor::from_bytes(vec![0x21, 0x43, 0x05], &[5], DataType::INT4).unwrap();
    /// assert_eq!(t.as_bytes().unwrap(), &[0x21, 0x43, 0x05]);   // 5 nibbles in 3 bytes
    /// let err = t.as_slice::<u8>().unwrap_err();                // no typed access
    /// assert_eq!(err.message(), "expected a contiguous CPU tensor of dtype uint8, got int4 on cpu:0");
    /// ```
    #[inline]
    pub fn as_bytes(&self) -> Result<&'a [u8]> {
        let (first, len) = byte_parts(self.dl, None)?;
        // SAFETY: `byte_parts` checked host access, contiguity and the address range of the
        // `len` bytes at `first`, valid for 'a; not written meanwhile (as in `as_slice`).
        Ok(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
    }

    /// The data as bytes for writing in place, with the checks of [`as_bytes`](Self::as_bytes).
    ///
    /// # Safety
    /// As for [`as_mut_slice`](Self::as_mut_slice).
    #[inline]
    pub unsafe fn as_mut_bytes(&self) -> Result<&'a mut [u8]> {
        let (first, len) = byte_parts(self.dl, None)?;
        // SAFETY: layout as in `as_bytes`; exclusivity is the caller's promise.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// The elements for writing in place, with the checks of [`as_slice`](Self::as_slice).
    ///
    /// For tensors created in Rust prefer [`TensorMut::as_mut_slice`](super::TensorMut::as_mut_slice), which is safe.
    ///
    /// # Safety
    /// While the returned slice lives, nothing else may read or write its elements: no other
    /// slice of this or of an overlapping tensor (another argument may be the same array:
    /// check with [`TensorCheck::disjoint_from`](super::TensorCheck::disjoint_from) or [`overlaps`](Self::overlaps)), no second
    /// call of this method on a copy of the view, and no foreign code.
    #[inline]
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&'a mut [T]> {
        let (first, len) = slice_parts::<T>(self.dl, None)?;
        // SAFETY: layout as in `as_slice`; exclusivity is the caller's promise.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }
}

impl fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "TensorView", self)
    }
}

pub(super) fn debug_tensor(
    f: &mut fmt::Formatter<'_>,
    kind: &str,
    view: &TensorView<'_>,
) -> fmt::Result {
    write!(
        f,
        "{kind}(shape={:?}, dtype={}, device={}",
        view.shape(),
        view.dtype(),
        view.device()
    )?;
    if !view.is_contiguous() {
        write!(f, ", strides={:?}", view.strides())?;
    }
    if view.byte_offset() != 0 {
        write!(f, ", byte_offset={}", view.byte_offset())?;
    }
    f.write_str(")")
}
