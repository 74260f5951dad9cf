//! The calling environment (`c_env_api.h`): the current stream of each device, the DLPack
//! tensor allocator, and interruption by signals (Ctrl-C).
//!
//! All of it is **thread-local** state of the runtime, keyed by device for streams: a value set
//! on one thread is not seen by another. When Python calls a function with a PyTorch tensor on
//! a GPU, tvm_ffi sets that device's current stream (the one `torch.cuda.current_stream()`
//! returns, so `with torch.cuda.stream(s):` is honoured) and PyTorch's allocator for the call,
//! then restores both: a kernel reads them with [`current_stream`] and allocates with
//! [`TensorMut::empty`](crate::tensor::TensorMut::empty).
//!
//! ```
//! use tvm_ffi::env::{self, StreamHandle};
//! use tvm_ffi::Device;
//! let gpu = Device::cuda(0);
//! assert!(env::current_stream(gpu).is_null()); // unset: the device's default stream
//! let s = 0x1234 as StreamHandle;               // a cudaStream_t in real code
//! {
//!     let _guard = env::use_stream(gpu, s).unwrap();
//!     assert_eq!(env::current_stream(gpu), s);
//!     assert!(env::current_stream(Device::cuda(1)).is_null()); // per device
//! }
//! assert!(env::current_stream(gpu).is_null()); // restored on drop
//! ```
use std::fmt;

use crate::abi::sys;
use crate::base::error::{Error, Result};
use crate::base::value::Device;

/// A device stream (`TVMFFIStreamHandle`): a `cudaStream_t` / `CUstream` for CUDA, a
/// `hipStream_t` for ROCm. Null is the device's default stream (the legacy default stream for
/// CUDA).
///
/// ```
/// use tvm_ffi::env::{self, StreamHandle};
/// use tvm_ffi::Device;
/// let stream = 0x10 as StreamHandle; // a `cudaStream_t` in real code
/// let previous = env::set_stream(Device::cuda(0), stream).unwrap();
/// assert!(previous.is_null()); // the default stream
/// assert_eq!(env::set_stream(Device::cuda(0), previous).unwrap(), stream);
/// ```
pub type StreamHandle = sys::TVMFFIStreamHandle;

/// The DLPack tensor allocator of the environment (`DLPackManagedTensorAllocator`), `None`
/// when none is set.
///
/// ```
/// use tvm_ffi::env::{self, DLPackAllocator};
/// // In a Rust host nothing installs one (tvm_ffi installs PyTorch's around calls from
/// // Python), so `TensorMut::empty` allocates on the Rust heap.
/// let current: DLPackAllocator = env::dlpack_allocator();
/// assert!(current.is_none());
/// ```
pub type DLPackAllocator = sys::DLPackManagedTensorAllocator;

/// The error kind meaning "the error is already set in the frontend" (C++
/// `EnvErrorAlreadySet`): Python re-raises its pending exception (such as `KeyboardInterrupt`)
/// instead of an `ffi.Error`. [`check_signals`] returns an error of this kind.
pub const ENV_ERROR_ALREADY_SET: &str = "EnvErrorAlreadySet";

/// The current stream of `device` on this thread (`TVMFFIEnvGetStream`); null when none is set
/// (the default stream).
///
/// Inside a call from Python with a PyTorch GPU tensor argument, this is the stream PyTorch
/// considers current for that tensor's device (`torch.cuda.current_stream(device)`), so work
/// launched on it is ordered with PyTorch's work and is captured by CUDA graphs.
#[inline]
pub fn current_stream(device: Device) -> StreamHandle {
    // SAFETY: a query of thread-local state that cannot fail (the runtime logs and returns
    // null on an internal error).
    unsafe { sys::TVMFFIEnvGetStream(device.device_type(), device.device_id()) }
}

/// Makes `stream` the current stream of `device` on this thread until the returned guard is
/// dropped, which restores the previous one (`TVMFFIEnvSetStream`, as Python's
/// `tvm_ffi.use_raw_stream`). Functions called meanwhile (Rust, C++ or Python) see `stream` in
/// [`current_stream`].
///
/// The runtime stores the handle only: nothing is created, synchronised or released, and the
/// caller keeps `stream` alive while the guard lives. Safe for any pointer because nothing
/// safe reads through it: what hands it to a driver (a kernel launch, such as
/// `tvm_ffi_kernels::Kernel::launch`) is `unsafe`, and its caller vouches for the stream. Guards nest; drop them in reverse order
/// (the usual scope order) for each device.
pub fn use_stream(device: Device, stream: StreamHandle) -> Result<StreamGuard> {
    let previous = set_stream(device, stream)?;
    Ok(StreamGuard { device, previous })
}

/// Sets the current stream of `device` on this thread and returns the previous one, without a
/// guard (see [`use_stream`] for the scoped form).
#[allow(clippy::not_unsafe_ptr_arg_deref)] // the runtime stores the handle, never reads through it
pub fn set_stream(device: Device, stream: StreamHandle) -> Result<StreamHandle> {
    let mut previous: StreamHandle = std::ptr::null_mut();
    // SAFETY: plain values and a valid output slot; the runtime only stores the handle.
    let rc = unsafe {
        sys::TVMFFIEnvSetStream(
            device.device_type(),
            device.device_id(),
            stream,
            &mut previous,
        )
    };
    if rc != 0 {
        return Err(Error::from_return_code(rc));
    }
    Ok(previous)
}

/// Restores the previous stream of a device when dropped; made by [`use_stream`].
///
/// Not `Send`: the stream table is per thread, so the guard must be dropped on the thread that
/// made it.
///
/// ```
/// use tvm_ffi::env::{self, StreamHandle};
/// use tvm_ffi::Device;
/// let gpu = Device::cuda(0);
/// let outer = env::use_stream(gpu, 0x10 as StreamHandle).unwrap();
/// assert!(outer.previous().is_null() && outer.device() == gpu);
/// {
///     let inner = env::use_stream(gpu, 0x20 as StreamHandle).unwrap();
///     assert_eq!(inner.previous(), 0x10 as StreamHandle);
/// }
/// assert_eq!(env::current_stream(gpu), 0x10 as StreamHandle); // the inner guard restored it
/// drop(outer);
/// assert!(env::current_stream(gpu).is_null());
/// ```
#[must_use = "the stream is restored as soon as the guard is dropped"]
pub struct StreamGuard {
    device: Device,
    previous: StreamHandle,
}

impl StreamGuard {
    /// The device whose stream this guard set.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The stream that was current before, restored on drop.
    pub fn previous(&self) -> StreamHandle {
        self.previous
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        // Setting a stream only stores a value in a table the runtime already grew when the
        // guard was made, so this cannot fail; a failure would leave an error to take.
        if set_stream(self.device, self.previous).is_err() {
            crate::abi::warn(format_args!(
                "restoring the previous stream of {} failed",
                self.device
            ));
        }
    }
}

impl fmt::Debug for StreamGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamGuard")
            .field("device", &self.device)
            .field("previous", &self.previous)
            .finish()
    }
}

/// The DLPack allocator [`TensorMut::empty`](crate::tensor::TensorMut::empty) uses on this
/// thread (`TVMFFIEnvGetDLPackManagedTensorAllocator`): the thread's own when set, else the
/// process-wide one, else `None`.
#[inline]
pub fn dlpack_allocator() -> DLPackAllocator {
    // SAFETY: a query of the runtime's environment that cannot fail.
    unsafe { sys::TVMFFIEnvGetDLPackManagedTensorAllocator() }
}

/// Sets this thread's DLPack allocator (and, with `global`, the process-wide one too) and
/// returns this thread's previous allocator (`TVMFFIEnvSetDLPackManagedTensorAllocator`).
/// `None` clears this thread's allocator, so the process-wide one applies again.
///
/// # Safety
/// `allocator` must follow the DLPack allocator contract for as long as it is installed: for
/// a prototype it returns `0` and a new `DLManagedTensorVersioned` whose shape, dtype and
/// device are the prototype's, whose data holds that many bytes (compact, writable, on that
/// device) and whose deleter frees it; or `-1` after setting an error. Rust code writes the
/// whole buffer it asks for ([`TensorMut::empty`](crate::tensor::TensorMut::empty)) and
/// trusts that much memory to be there.
pub unsafe fn set_dlpack_allocator(
    allocator: DLPackAllocator,
    global: bool,
) -> Result<DLPackAllocator> {
    let mut previous: DLPackAllocator = None;
    // SAFETY: the runtime stores the function pointer and writes the previous one; the
    // allocator's behaviour is the caller's contract.
    let rc = unsafe {
        sys::TVMFFIEnvSetDLPackManagedTensorAllocator(allocator, i32::from(global), &mut previous)
    };
    if rc != 0 {
        return Err(Error::from_return_code(rc));
    }
    Ok(previous)
}

/// Makes `allocator` this thread's DLPack allocator until the returned guard is dropped, which
/// restores the previous one (what tvm_ffi does around a call that has PyTorch tensors).
///
/// # Safety
/// As for [`set_dlpack_allocator`]: `allocator` must keep the DLPack allocator contract.
pub unsafe fn use_dlpack_allocator(allocator: DLPackAllocator) -> Result<AllocatorGuard> {
    // SAFETY: the caller's contract.
    let previous = unsafe { set_dlpack_allocator(allocator, false)? };
    Ok(AllocatorGuard {
        previous,
        _not_send: std::marker::PhantomData,
    })
}

/// Restores this thread's previous DLPack allocator when dropped; made by
/// [`use_dlpack_allocator`]. Not `Send`, as the allocator slot is per thread.
///
/// ```
/// use std::ffi::{c_char, c_void};
/// use tvm_ffi::sys::{DLManagedTensorVersioned, DLTensor};
/// use tvm_ffi::{env, DataType, Device, TensorMut};
/// /// Refuses every request, with an error.
/// unsafe extern "C" fn refuse(
///     _: *mut DLTensor, _: *mut *mut DLManagedTensorVersioned, ctx: *mut c_void,
///     set_error: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>,
/// ) -> i32 {
///     // SAFETY: the runtime's error callback, with its own context.
///     unsafe { set_error.unwrap()(ctx, c"MemoryError".as_ptr(), c"refused".as_ptr()) };
///     -1
/// }
/// {
///     // SAFETY: `refuse` keeps the contract: it returns -1 after setting an error.
///     let _guard = unsafe { env::use_dlpack_allocator(Some(refuse)) }.unwrap();
///     let err = TensorMut::empty(&[2], DataType::FLOAT32, Device::cpu()).unwrap_err();
///     assert_eq!(err.message(), "refused");
/// }
/// assert!(TensorMut::empty(&[2], DataType::FLOAT32, Device::cpu()).is_ok()); // restored
/// ```
#[must_use = "the allocator is restored as soon as the guard is dropped"]
pub struct AllocatorGuard {
    previous: DLPackAllocator,
    _not_send: std::marker::PhantomData<*mut ()>,
}

impl Drop for AllocatorGuard {
    fn drop(&mut self) {
        // SAFETY: the allocator that was installed before the guard, so one that keeps the
        // contract (installed through `set_dlpack_allocator` or by the runtime's host).
        if unsafe { set_dlpack_allocator(self.previous, false) }.is_err() {
            crate::abi::warn(format_args!(
                "restoring the previous DLPack allocator failed"
            ));
        }
    }
}

impl fmt::Debug for AllocatorGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AllocatorGuard")
            .field("previous", &self.previous.map(|p| p as *const ()))
            .finish()
    }
}

/// Lets the environment handle pending signals (`TVMFFIEnvCheckSignals`): under Python, runs
/// Python's signal handlers, so that Ctrl-C during a long Rust loop raises `KeyboardInterrupt`
/// in the caller. Without Python (a Rust or C++ host) it always returns `Ok(())`.
///
/// An `Err` (kind [`ENV_ERROR_ALREADY_SET`]) means a handler raised: return it with `?`, and
/// Python raises the pending exception (`KeyboardInterrupt`) when the error reaches it, also
/// through C++ frames in between.
///
/// The call is cheap when no signal is pending but not free (under Python it takes the GIL for
/// a moment): call it every few milliseconds of work, for example once per outer iteration,
/// not per element.
///
/// ```
/// fn long_loop(rows: usize) -> tvm_ffi::Result<u64> {
///     let mut total = 0u64;
///     for row in 0..rows {
///         tvm_ffi::env::check_signals()?; // Ctrl-C raises KeyboardInterrupt in Python
///         total += row as u64;
///     }
///     Ok(total)
/// }
/// assert_eq!(long_loop(4).unwrap(), 6);
/// ```
#[inline]
pub fn check_signals() -> Result<()> {
    // SAFETY: no arguments; the runtime calls the registered frontend hook, if any.
    let rc = unsafe { sys::TVMFFIEnvCheckSignals() };
    if rc == 0 {
        Ok(())
    } else {
        Err(signal_error())
    }
}

#[cold]
#[inline(never)]
fn signal_error() -> Error {
    // The frontend's exception is pending in the frontend, not in the runtime; should a future
    // runtime raise an error of its own, that one is more precise.
    Error::take_raised().unwrap_or_else(|| Error::new(ENV_ERROR_ALREADY_SET, ""))
}
