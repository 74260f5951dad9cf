//! [`TensorMut`]: a new tensor that Rust fills before sharing it, and tensor allocation.
use std::ffi::c_void;
use std::fmt;

use super::accessors::{owned_tensor_accessors, view_accessors};
use super::check::TensorCheck;
use super::element::Element;
use super::layout::{
    byte_parts, checked_numel, data_size, host_accessible, is_contiguous, shape_of, slice_parts,
};
use super::layout::{compact_strides, strides_of};
use super::owned::{tensor_object_from_handle, Tensor};
use super::rust_memory::{rust_alloc_zeroed, rust_managed_tensor};
use super::view::{debug_tensor, TensorView};
use crate::abi::sys::{self, DLTensor};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::TensorObj;
use crate::base::object::ObjectRef;
use crate::base::value::{DataType, Device};
use std::borrow::Cow;

/// A new tensor whose memory nothing else can reach yet, so Rust writes it safely through
/// `&mut self`; [`freeze`](Self::freeze) (or returning it from a function) shares it.
///
/// ```
/// use tvm_ffi::{DataType, Device, Tensor, TensorMut};
/// let mut out = TensorMut::empty(&[2, 2], DataType::float(32), Device::cpu()).unwrap();
/// assert_eq!(out.as_slice::<f32>().unwrap(), &[0.0; 4]); // zero-filled
/// out.as_mut_slice::<f32>().unwrap().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
/// let shared: Tensor = out.freeze();
/// assert_eq!(shared.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
/// ```
pub struct TensorMut(
    /// Invariant: the only reference to the object, whose memory no one else can reach.
    pub(super) ObjectRef<TensorObj>,
);

impl TensorMut {
    /// Allocates a compact row-major tensor.
    ///
    /// Uses the environment's DLPack allocator when one is set (tvm_ffi sets PyTorch's when
    /// PyTorch is in use), otherwise
    /// the Rust heap, which only serves CPU tensors (64-byte aligned). Host memory is
    /// zero-filled: unlike `torch.empty`, because Rust must not read uninitialised memory.
    ///
    /// ```
    /// use tvm_ffi::{DataType, Device, TensorMut};
    /// let err = TensorMut::empty(&[4], DataType::float(32), Device::cuda(0)).unwrap_err();
    /// assert!(err.message().contains("only allocate CPU memory"));
    /// let err = TensorMut::empty(&[-1], DataType::float(32), Device::cpu()).unwrap_err();
    /// assert_eq!(err.message(), "TensorMut::empty: invalid shape [-1]");
    /// ```
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<TensorMut> {
        let numel = checked_numel(shape).ok_or_else(|| {
            Error::value_error(format!("TensorMut::empty: invalid shape {shape:?}"))
        })?;
        let bytes = data_size(numel, dtype).ok_or_else(|| {
            Error::value_error(format!(
                "TensorMut::empty: {shape:?} elements of {dtype} exceed the address space"
            ))
        })?;
        let ndim = i32::try_from(shape.len()).map_err(|_| {
            Error::value_error("TensorMut::empty: too many dimensions for a DLTensor")
        })?;
        let obj = match env_alloc(shape, ndim, dtype, device)? {
            Some(obj) => obj,
            None if device.device_type() == sys::kDLCPU => rust_alloc_zeroed(shape, dtype, bytes)?,
            None => {
                return Err(Error::runtime_error(format!(
                    "TensorMut::empty: no DLPack tensor allocator is set in the environment \
                     (TVMFFIEnvSetDLPackManagedTensorAllocator), and Rust can only allocate CPU \
                     memory itself; asked for {device}"
                )))
            }
        };
        Ok(TensorMut(obj))
    }

    /// [`empty`](Self::empty) with the shape, dtype and device of `like`.
    pub fn empty_like(like: &TensorView<'_>) -> Result<TensorMut> {
        TensorMut::empty(like.shape(), like.dtype(), like.device())
    }

    /// A tensor that takes ownership of `data` (no copy), with the given row-major `shape`.
    ///
    /// ```
    /// use tvm_ffi::{Tensor, TensorMut};
    /// let mut tensor = TensorMut::from_vec(vec![0i32; 4], &[2, 2]).unwrap();
    /// tensor.as_mut_slice::<i32>().unwrap()[3] = 7;
    /// let frozen: Tensor = tensor.into(); // shareable, read-only from here
    /// assert_eq!(frozen.as_slice::<i32>().unwrap(), &[0, 0, 0, 7]);
    /// ```
    pub fn from_vec<T: Element>(mut data: Vec<T>, shape: &[i64]) -> Result<TensorMut> {
        match checked_numel(shape) {
            Some(n) if n == data.len() => {}
            Some(n) => {
                return Err(Error::value_error(format!(
                    "Tensor::from_vec: shape {shape:?} has {n} elements, the data has {}",
                    data.len()
                )))
            }
            None => {
                return Err(Error::value_error(format!(
                    "Tensor::from_vec: invalid shape {shape:?}"
                )))
            }
        }
        let first = data.as_mut_ptr() as *mut c_void;
        // Moving the Vec into the box keeps its heap buffer, and `first`, where they are.
        rust_managed_tensor(first, Box::new(data), shape, T::DTYPE).map(TensorMut)
    }

    /// A view for reading, or for passing to functions as a `DLTensor*` (it cannot be turned
    /// into a shared [`Tensor`], which would end the exclusivity).
    #[inline]
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            dl: &self.0.dl_tensor,
            owner: None,
        }
    }

    owned_tensor_accessors!();

    /// The elements for writing, when the tensor is a host tensor of element type `T`.
    #[inline]
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let (first, len) = slice_parts::<T>(&self.0.dl_tensor, None)?;
        // SAFETY: layout checked by `slice_parts`; exclusive because `self` is the only
        // reference to a tensor whose memory nothing else reaches, borrowed mutably here.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// The data as bytes for writing, whatever the dtype (fp8, packed sub-byte types, `bool`):
    /// see [`TensorView::as_bytes`].
    ///
    /// ```
    /// use tvm_ffi::{DataType, Device, TensorMut};
    /// let mut t = TensorMut::empty(&[3], DataType::FLOAT8_E4M3FN, Device::cpu()).unwrap();
    /// t.as_mut_bytes().unwrap().copy_from_slice(&[0x38, 0x40, 0xb8]); // 1.0, 2.0, -1.0
    /// assert_eq!(t.freeze().as_bytes().unwrap(), &[0x38, 0x40, 0xb8]);
    /// ```
    #[inline]
    pub fn as_mut_bytes(&mut self) -> Result<&mut [u8]> {
        let (first, len) = byte_parts(&self.0.dl_tensor, None)?;
        // SAFETY: checked by `byte_parts`; exclusive as in `as_mut_slice`.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// A tensor of `dtype` that takes ownership of `data` (no copy), with the given row-major
    /// `shape`: how fp8 and packed sub-byte tensors are made from Rust. `data` must have exactly
    /// the tensor's byte size (`ceil(numel * bits / 8)`).
    pub fn from_bytes(mut data: Vec<u8>, shape: &[i64], dtype: DataType) -> Result<TensorMut> {
        let numel = checked_numel(shape).ok_or_else(|| {
            Error::value_error(format!("Tensor::from_bytes: invalid shape {shape:?}"))
        })?;
        let bytes = data_size(numel, dtype).ok_or_else(|| {
            Error::value_error(format!(
                "Tensor::from_bytes: {shape:?} elements of {dtype} exceed the address space"
            ))
        })?;
        if bytes != data.len() {
            return Err(Error::value_error(format!(
                "Tensor::from_bytes: shape {shape:?} of {dtype} has {bytes} bytes, the data has {}",
                data.len()
            )));
        }
        let first = data.as_mut_ptr() as *mut c_void;
        rust_managed_tensor(first, Box::new(data), shape, dtype).map(TensorMut)
    }

    /// Shares the tensor: from now on its memory is read through [`Tensor`]s.
    #[inline]
    pub fn freeze(self) -> Tensor {
        Tensor(self.0)
    }
}

impl fmt::Debug for TensorMut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "TensorMut", &self.view())
    }
}

/// Allocates through the environment's DLPack allocator, if one is set.
fn env_alloc(
    shape: &[i64],
    ndim: i32,
    dtype: DataType,
    device: Device,
) -> Result<Option<ObjectRef<TensorObj>>> {
    if crate::call::env::dlpack_allocator().is_none() {
        return Ok(None);
    }
    // The prototype's `shape` is a mutable pointer in C; give it a copy to be independent of
    // what the allocator does with it.
    let mut shape_copy = shape.to_vec();
    let mut prototype = DLTensor {
        data: std::ptr::null_mut(),
        device: device.0,
        ndim,
        dtype: dtype.0,
        shape: shape_copy.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: a valid prototype (data null, as the API requires) and output slot.
    let rc = unsafe { sys::TVMFFIEnvTensorAlloc(&mut prototype, &mut out) };
    if rc != 0 {
        return Err(Error::from_return_code(rc));
    }
    // SAFETY: on success `out` is a new tensor object with one reference, now ours.
    let obj = unsafe { tensor_object_from_handle(out)? };
    let dl = &obj.dl_tensor;
    if shape_of(dl) != shape || dl.dtype != dtype.0 || dl.device != device.0 || !is_contiguous(dl) {
        return Err(Error::runtime_error(format!(
            "the environment's DLPack tensor allocator returned {:?} for a compact {shape:?} \
             {dtype} tensor on {device}",
            TensorView::of_object(&obj)
        )));
    }
    if host_accessible(device) {
        let bytes = data_size(checked_numel(shape).unwrap_or(0), dtype).unwrap_or(0);
        if bytes > 0 {
            if dl.data.is_null() {
                return Err(Error::runtime_error(
                    "the environment's DLPack tensor allocator returned a null data pointer",
                ));
            }
            // SAFETY: a fresh compact host allocation of `bytes` bytes at data + byte_offset,
            // reachable only through `obj`.
            unsafe {
                std::ptr::write_bytes((dl.data as *mut u8).add(dl.byte_offset as usize), 0, bytes)
            };
        }
    }
    Ok(Some(obj))
}

/// The constructors of [`Tensor`] that fill a new tensor through a [`TensorMut`].
impl Tensor {
    /// A tensor that takes ownership of `data` (no copy), with the given row-major `shape`.
    ///
    /// ```
    /// let t = tvm_ffi::Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[3, 2]).unwrap();
    /// assert_eq!(t.numel(), 6);
    /// let err = tvm_ffi::Tensor::from_vec(vec![1i32, 2, 3], &[2, 2]).unwrap_err();
    /// assert_eq!(err.message(), "Tensor::from_vec: shape [2, 2] has 4 elements, the data has 3");
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        TensorMut::from_vec(data, shape).map(TensorMut::freeze)
    }

    /// A tensor of `dtype` over `data` (no copy), for dtypes without a Rust element type: fp8,
    /// packed sub-byte types, `bool`; see [`TensorMut::from_bytes`].
    ///
    /// ```
    /// use tvm_ffi::{DataType, Tensor};
    /// let t = Tensor::from_bytes(vec![0x3c, 0x00], &[2, 2], DataType::FLOAT4_E2M1FN).unwrap();
    /// assert_eq!(t.dtype().to_string(), "float4_e2m1fn");
    /// let err = Tensor::from_bytes(vec![0; 3], &[2, 2], DataType::FLOAT4_E2M1FN).unwrap_err();
    /// assert_eq!(err.message(), "Tensor::from_bytes: shape [2, 2] of float4_e2m1fn has 2 bytes, the data has 3");
    /// ```
    pub fn from_bytes(data: Vec<u8>, shape: &[i64], dtype: DataType) -> Result<Tensor> {
        TensorMut::from_bytes(data, shape, dtype).map(TensorMut::freeze)
    }

    /// A tensor holding a copy of `data`, with the given row-major `shape`.
    ///
    /// ```
    /// use tvm_ffi::{DataType, Tensor};
    /// let tensor = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!((tensor.shape(), tensor.dtype()), (&[2i64, 2][..], DataType::FLOAT32));
    /// assert!(Tensor::from_slice(&[1.0f32], &[2, 2]).is_err()); // 1 element, shape needs 4
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A new compact tensor (see [`TensorMut::empty`]; fill it through a `TensorMut` instead
    /// when Rust writes the data).
    ///
    /// ```
    /// use tvm_ffi::{DataType, Device, Tensor};
    /// let tensor = Tensor::empty(&[2, 3], DataType::FLOAT16, Device::cpu()).unwrap();
    /// assert_eq!((tensor.shape(), tensor.dtype()), (&[2i64, 3][..], DataType::FLOAT16));
    /// assert_eq!(tensor.view().device(), Device::cpu());
    /// ```
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        TensorMut::empty(shape, dtype, device).map(TensorMut::freeze)
    }
}

impl From<TensorMut> for Tensor {
    fn from(tensor: TensorMut) -> Tensor {
        tensor.freeze()
    }
}
