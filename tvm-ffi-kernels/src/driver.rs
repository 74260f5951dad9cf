//! The CUDA driver API, loaded at run time from `libcuda.so.1` (the driver that the NVIDIA
//! kernel module installs, not the toolkit): building needs no CUDA, nothing links it, and a
//! machine without it loads the library and gets a clear `RuntimeError` from each use.
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, OnceLock};

use tvm_ffi::{Error, Result};

use crate::abi::{CuDevice, CuLaunchConfig, CuResult, Handle};

/// The driver library's name (the soname the NVIDIA driver installs).
pub const LIBCUDA: &str = "libcuda.so.1";

type LaunchKernel = unsafe extern "C" fn(
    Handle,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;
type LaunchKernelEx = unsafe extern "C" fn(
    *const CuLaunchConfig,
    Handle,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CuResult;
type ErrorText = unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult;

/// The driver's entry points, resolved once. `pub(crate)`: every call through them is an
/// `unsafe` FFI call whose contract the crate's safe wrappers keep.
pub(crate) struct Api {
    pub cu_init: unsafe extern "C" fn(c_uint) -> CuResult,
    pub cu_driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub cu_device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    pub cu_device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub cu_device_primary_ctx_retain: unsafe extern "C" fn(*mut Handle, CuDevice) -> CuResult,
    pub cu_ctx_get_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    pub cu_ctx_set_current: unsafe extern "C" fn(Handle) -> CuResult,
    pub cu_ctx_push_current: unsafe extern "C" fn(Handle) -> CuResult,
    pub cu_ctx_pop_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    pub cu_module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult,
    pub cu_module_get_function:
        unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    pub cu_func_set_attribute: unsafe extern "C" fn(Handle, c_int, c_int) -> CuResult,
    pub cu_launch_kernel: LaunchKernel,
    /// CUDA 12.0 and later; `None` on an older driver (launches with attributes then fail
    /// with an error saying so).
    pub cu_launch_kernel_ex: Option<LaunchKernelEx>,
    cu_get_error_name: ErrorText,
    cu_get_error_string: ErrorText,
    /// Keeps the library loaded (and so the function pointers above valid) for the process.
    _library: libloading::Library,
}

/// The CUDA driver, loaded and initialised (`cuInit`) on first use.
pub struct Driver {
    pub(crate) api: Api,
    /// Each device's retained primary context, by ordinal.
    contexts: Mutex<Vec<(i32, SendHandle)>>,
}

/// A driver handle that may move between threads: handles are identifiers that the driver lets
/// any thread use.
#[derive(Clone, Copy)]
pub(crate) struct SendHandle(pub Handle);
// SAFETY: see the type's doc: the driver's handles are not tied to a thread.
unsafe impl Send for SendHandle {}

/// Resolves `name` in `library` as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the C signature of the symbol.
unsafe fn symbol<T: Copy>(
    library: &libloading::Library,
    name: &str,
) -> std::result::Result<T, String> {
    // SAFETY: the caller's contract; the pointer outlives its use because the library is kept
    // for the process (`Api::_library`).
    unsafe { library.get::<T>(name.as_bytes()) }
        .map(|symbol| *symbol)
        .map_err(|err| format!("the CUDA driver {LIBCUDA} lacks `{name}`: {err}"))
}

impl Driver {
    /// The loaded driver, or a `RuntimeError` saying why it cannot be used here (no driver
    /// installed, an unusable one, `cuInit` failing). A failure is remembered: each call then
    /// returns the same error.
    ///
    /// ```
    /// // On a machine without an NVIDIA driver:
    /// if let Err(err) = tvm_ffi_kernels::Driver::get() {
    ///     assert_eq!(err.kind(), "RuntimeError");
    ///     assert!(err.message().starts_with("cannot load the CUDA driver libcuda.so.1"));
    /// }
    /// ```
    pub fn get() -> Result<&'static Driver> {
        static DRIVER: OnceLock<std::result::Result<Driver, String>> = OnceLock::new();
        DRIVER
            .get_or_init(|| Driver::load(LIBCUDA))
            .as_ref()
            .map_err(Error::runtime_error)
    }

    pub(crate) fn load(library_name: &str) -> std::result::Result<Driver, String> {
        // SAFETY: loading the NVIDIA driver library runs its initialisers, which is what every
        // CUDA program does.
        let library = unsafe { libloading::Library::new(library_name) }.map_err(|err| {
            format!(
                "cannot load the CUDA driver {library_name} (is an NVIDIA GPU driver installed?): \
                 {err}"
            )
        })?;
        // SAFETY: each type below is the signature of the named function in cuda.h (the `_v2`
        // names are what cuda.h maps the unversioned ones to).
        let api = unsafe {
            Api {
                cu_init: symbol(&library, "cuInit")?,
                cu_driver_get_version: symbol(&library, "cuDriverGetVersion")?,
                cu_device_get: symbol(&library, "cuDeviceGet")?,
                cu_device_get_count: symbol(&library, "cuDeviceGetCount")?,
                cu_device_primary_ctx_retain: symbol(&library, "cuDevicePrimaryCtxRetain")?,
                cu_ctx_get_current: symbol(&library, "cuCtxGetCurrent")?,
                cu_ctx_set_current: symbol(&library, "cuCtxSetCurrent")?,
                cu_ctx_push_current: symbol(&library, "cuCtxPushCurrent_v2")?,
                cu_ctx_pop_current: symbol(&library, "cuCtxPopCurrent_v2")?,
                cu_module_load_data: symbol(&library, "cuModuleLoadData")?,
                cu_module_get_function: symbol(&library, "cuModuleGetFunction")?,
                cu_func_set_attribute: symbol(&library, "cuFuncSetAttribute")?,
                cu_launch_kernel: symbol(&library, "cuLaunchKernel")?,
                cu_launch_kernel_ex: symbol(&library, "cuLaunchKernelEx").ok(),
                cu_get_error_name: symbol(&library, "cuGetErrorName")?,
                cu_get_error_string: symbol(&library, "cuGetErrorString")?,
                _library: library,
            }
        };
        let driver = Driver {
            api,
            contexts: Mutex::new(Vec::new()),
        };
        // SAFETY: cuInit takes flags (0) and may be called any number of times.
        let initialised = unsafe { (driver.api.cu_init)(0) };
        driver
            .check("cuInit", initialised)
            .map_err(|err| err.message().to_string())?;
        Ok(driver)
    }

    /// `Ok` for `CUDA_SUCCESS`, else a `RuntimeError` naming the call and the driver's error
    /// (`CUDA_ERROR_INVALID_VALUE (invalid argument, code 1)`).
    pub(crate) fn check(&self, call: &str, result: CuResult) -> Result<()> {
        if result == 0 {
            return Ok(());
        }
        Err(Error::runtime_error(format!(
            "CUDA driver call {call} failed: {}",
            self.describe(result)
        )))
    }

    /// `NAME (description, code N)` for a driver error code.
    pub(crate) fn describe(&self, result: CuResult) -> String {
        let text = |f: ErrorText| {
            let mut text: *const c_char = std::ptr::null();
            // SAFETY: the driver writes a pointer to a static string, or fails.
            if unsafe { f(result, &mut text) } == 0 && !text.is_null() {
                // SAFETY: a NUL-terminated static string of the driver.
                unsafe { CStr::from_ptr(text) }
                    .to_string_lossy()
                    .into_owned()
            } else {
                "unknown error".to_string()
            }
        };
        format!(
            "{} ({}, code {result})",
            text(self.api.cu_get_error_name),
            text(self.api.cu_get_error_string)
        )
    }

    /// The driver's CUDA version, as `cuDriverGetVersion` reports it (12040 for 12.4).
    pub fn version(&self) -> Result<i32> {
        let mut version = 0;
        // SAFETY: a valid output slot.
        self.check("cuDriverGetVersion", unsafe {
            (self.api.cu_driver_get_version)(&mut version)
        })?;
        Ok(version)
    }

    /// How many CUDA devices the driver sees.
    pub fn device_count(&self) -> Result<i32> {
        let mut count = 0;
        // SAFETY: a valid output slot.
        self.check("cuDeviceGetCount", unsafe {
            (self.api.cu_device_get_count)(&mut count)
        })?;
        Ok(count)
    }

    /// The primary context of device `device_id` (the one the CUDA runtime, and so PyTorch,
    /// uses), retained once for the process.
    pub(crate) fn primary_context(&self, device_id: i32) -> Result<Handle> {
        let mut contexts = self.contexts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, context)) = contexts.iter().find(|(id, _)| *id == device_id) {
            return Ok(context.0);
        }
        let mut device: CuDevice = 0;
        let mut context: Handle = std::ptr::null_mut();
        // SAFETY: valid output slots; an out-of-range ordinal is an error code.
        unsafe {
            self.check(
                "cuDeviceGet",
                (self.api.cu_device_get)(&mut device, device_id),
            )?;
            self.check(
                "cuDevicePrimaryCtxRetain",
                (self.api.cu_device_primary_ctx_retain)(&mut context, device),
            )?;
        }
        contexts.push((device_id, SendHandle(context)));
        Ok(context)
    }

    /// Makes `context` current on this thread until the guard drops (then the caller's context,
    /// such as PyTorch's, is current again). Where it is current already (the common case: the
    /// framework made the device's primary context current), nothing is pushed: one driver call
    /// instead of three on every launch.
    pub(crate) fn make_current(&self, context: Handle) -> Result<PushedContext<'_>> {
        let mut current: Handle = std::ptr::null_mut();
        // SAFETY: a valid output slot.
        self.check("cuCtxGetCurrent", unsafe {
            (self.api.cu_ctx_get_current)(&mut current)
        })?;
        if current == context {
            return Ok(PushedContext {
                driver: self,
                pushed: false,
            });
        }
        // SAFETY: a context handle of this driver (a retained primary context).
        self.check("cuCtxPushCurrent", unsafe {
            (self.api.cu_ctx_push_current)(context)
        })?;
        Ok(PushedContext {
            driver: self,
            pushed: true,
        })
    }
}

/// Pops the context pushed by [`Driver::make_current`], if it pushed one.
pub(crate) struct PushedContext<'a> {
    driver: &'a Driver,
    pushed: bool,
}

impl Drop for PushedContext<'_> {
    fn drop(&mut self) {
        if !self.pushed {
            return;
        }
        let mut popped: Handle = std::ptr::null_mut();
        // SAFETY: pops the context this guard pushed on this thread. A failure leaves nothing
        // to release, so it is ignored.
        let _ = unsafe { (self.driver.api.cu_ctx_pop_current)(&mut popped) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_driver_is_named_with_the_reason() {
        let Err(message) = Driver::load("libcuda-absent-for-this-test.so.1") else {
            panic!("a library of that name exists");
        };
        assert!(
            message.starts_with(
                "cannot load the CUDA driver libcuda-absent-for-this-test.so.1 \
                 (is an NVIDIA GPU driver installed?): "
            ),
            "{message}"
        );
    }
}
