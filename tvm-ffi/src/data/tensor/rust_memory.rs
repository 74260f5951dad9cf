//! Tensors over Rust-owned memory, handed to the runtime as DLPack tensors whose deleter
//! frees the buffer when the last holder (in any language) drops the tensor.
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::dlpack::DLPackTensor;
use super::layout::compact_strides;
use super::owned::Tensor;
use crate::abi::sys::{self, DLManagedTensorVersioned, DLTensor};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::TensorObj;
use crate::base::object::ObjectRef;
use crate::base::value::{DataType, Device};

/// How many tensor buffers allocated by this copy of the crate ([`Tensor::from_vec`],
/// [`TensorMut::empty`](super::TensorMut::empty) without an environment allocator, ...) are alive, in any language.
/// Each buffer is freed when the last holder of its tensor drops it; tests use this to see
/// that tensors handed to other languages come back and are freed.
pub fn live_rust_buffers() -> usize {
    LIVE_RUST_BUFFERS.load(Ordering::Acquire)
}

static LIVE_RUST_BUFFERS: AtomicUsize = AtomicUsize::new(0);

/// The DLPack context of a Rust buffer: the managed tensor first (the deleter receives a
/// pointer to it), then everything its `DLTensor` points into.
#[repr(C)]
struct RustManaged {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    _storage: Box<dyn Send>,
}

unsafe extern "C" fn rust_managed_deleter(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: `managed` is the first field of a RustManaged leaked by `rust_managed_tensor`,
    // and DLPack calls the deleter once. Dropping boxes and plain buffers cannot unwind.
    drop(unsafe { Box::from_raw(managed as *mut RustManaged) });
    LIVE_RUST_BUFFERS.fetch_sub(1, Ordering::Release);
}

/// A tensor object over Rust-owned memory: `first` points into `storage`, which is dropped
/// (with the shape and strides) when the runtime releases the tensor.
pub(super) fn rust_managed_tensor(
    first: *mut c_void,
    storage: Box<dyn Send>,
    shape: &[i64],
    dtype: DataType,
) -> Result<ObjectRef<TensorObj>> {
    let ndim = i32::try_from(shape.len())
        .map_err(|_| Error::value_error("too many dimensions for a DLTensor"))?;
    let shape: Box<[i64]> = shape.into();
    let strides: Box<[i64]> = compact_strides(&shape).into();
    let context = Box::new(RustManaged {
        managed: DLManagedTensorVersioned {
            version: sys::DLPackVersion {
                major: sys::DLPACK_MAJOR_VERSION,
                minor: sys::DLPACK_MINOR_VERSION,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(rust_managed_deleter),
            flags: 0,
            dl_tensor: DLTensor {
                data: first,
                device: Device::cpu().0,
                ndim,
                dtype: dtype.0,
                // The boxed slices keep their heap addresses when moved into the context.
                shape: shape.as_ptr() as *mut i64,
                strides: strides.as_ptr() as *mut i64,
                byte_offset: 0,
            },
        },
        shape,
        strides,
        _storage: storage,
    });
    LIVE_RUST_BUFFERS.fetch_add(1, Ordering::AcqRel);
    let raw = Box::into_raw(context);
    // SAFETY: `raw` is a valid, uniquely owned context.
    unsafe { (*raw).managed.manager_ctx = raw as *mut c_void };
    // SAFETY: `raw` starts with a valid managed tensor (explicit strides, so the runtime uses
    // our shape and strides arrays).
    let managed = unsafe { DLPackTensor::from_raw(NonNull::new_unchecked(raw).cast()) };
    Tensor::from_dlpack(managed).map(Tensor::into_object_ref)
}

/// A zero-filled, 64-byte aligned heap buffer (TVM's allocation alignment; enough for every
/// element type and for AVX-512 loads).
struct AlignedBuffer {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: a plain owned heap allocation.
unsafe impl Send for AlignedBuffer {}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `rust_alloc_zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

const ALLOC_ALIGNMENT: usize = 64;

pub(super) fn rust_alloc_zeroed(
    shape: &[i64],
    dtype: DataType,
    bytes: usize,
) -> Result<ObjectRef<TensorObj>> {
    if bytes == 0 {
        // No element to store: an aligned dangling address, never dereferenced.
        let first = ALLOC_ALIGNMENT as *mut c_void;
        return rust_managed_tensor(first, Box::new(()), shape, dtype);
    }
    let layout = std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGNMENT)
        .map_err(|_| Error::value_error(format!("cannot allocate {bytes} bytes")))?;
    // SAFETY: a non-zero size.
    let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
        .ok_or_else(|| Error::new("MemoryError", format!("cannot allocate {bytes} bytes")))?;
    let buffer = AlignedBuffer { ptr, layout };
    rust_managed_tensor(ptr.as_ptr() as *mut c_void, Box::new(buffer), shape, dtype)
}
