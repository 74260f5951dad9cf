//! The few CUDA driver API functions the example needs, loaded at run time from
//! `libcuda.so.1` (the driver, installed with the NVIDIA kernel module; not the toolkit). A
//! machine without it builds and loads this library, and its functions raise a clear error.
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, OnceLock};

use tvm_ffi::{Error, Result};

/// `CUresult`: 0 is success.
type CuResult = c_int;
type CuDevice = c_int;
/// `CUcontext`, `CUmodule`, `CUfunction`, `CUstream`: opaque driver handles.
type Handle = *mut c_void;

/// The driver library's name (the soname the NVIDIA driver installs).
pub const LIBCUDA: &str = "libcuda.so.1";

/// The driver's entry points, resolved once.
struct Api {
    cu_init: unsafe extern "C" fn(c_uint) -> CuResult,
    cu_driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    cu_device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    cu_device_primary_ctx_retain: unsafe extern "C" fn(*mut Handle, CuDevice) -> CuResult,
    cu_ctx_push_current: unsafe extern "C" fn(Handle) -> CuResult,
    cu_ctx_pop_current: unsafe extern "C" fn(*mut Handle) -> CuResult,
    cu_module_load_data: unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult,
    cu_module_get_function: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    #[allow(clippy::type_complexity)] // the C signature, spelled out once
    cu_launch_kernel: unsafe extern "C" fn(
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
    ) -> CuResult,
    cu_get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    cu_get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// Keeps the library loaded (and so the function pointers above valid) for the process.
    _library: libloading::Library,
}

/// The kernels of one device: its primary context and the functions of the loaded module.
#[derive(Clone, Copy)]
struct Kernels {
    context: Handle,
    add_f32: Handle,
    scale_f32: Handle,
}

// SAFETY: driver handles are plain identifiers that the driver lets any thread use.
unsafe impl Send for Kernels {}

/// The driver, loaded and initialised on first use. A failure is remembered: every call then
/// raises the same error.
pub struct Driver {
    api: Api,
    kernels: Mutex<HashMap<i32, Kernels>>,
}

/// The PTX module, NUL-terminated as `cuModuleLoadData` reads it.
const PTX: &str = concat!(include_str!("kernels.ptx"), "\0");

/// Which kernel to launch.
#[derive(Clone, Copy, Debug)]
pub enum Kernel {
    /// `add_f32(x, y, out, n)`.
    AddF32,
    /// `scale_f32(x, out, factor, n)`.
    ScaleF32,
}

/// The loaded driver, or the error saying why it cannot be used here.
pub fn driver() -> Result<&'static Driver> {
    static DRIVER: OnceLock<std::result::Result<Driver, String>> = OnceLock::new();
    DRIVER
        .get_or_init(Driver::load)
        .as_ref()
        .map_err(Error::runtime_error)
}

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
    fn load() -> std::result::Result<Driver, String> {
        // SAFETY: loading the NVIDIA driver library runs its initialisers, which is what every
        // CUDA program does.
        let library = unsafe { libloading::Library::new(LIBCUDA) }.map_err(|err| {
            format!(
                "cannot load the CUDA driver {LIBCUDA} (is an NVIDIA GPU driver installed?): {err}"
            )
        })?;
        // SAFETY: each type below is the signature of the named function in cuda.h (the `_v2`
        // names are what cuda.h maps the unversioned ones to).
        let api = unsafe {
            Api {
                cu_init: symbol(&library, "cuInit")?,
                cu_driver_get_version: symbol(&library, "cuDriverGetVersion")?,
                cu_device_get: symbol(&library, "cuDeviceGet")?,
                cu_device_primary_ctx_retain: symbol(&library, "cuDevicePrimaryCtxRetain")?,
                cu_ctx_push_current: symbol(&library, "cuCtxPushCurrent_v2")?,
                cu_ctx_pop_current: symbol(&library, "cuCtxPopCurrent_v2")?,
                cu_module_load_data: symbol(&library, "cuModuleLoadData")?,
                cu_module_get_function: symbol(&library, "cuModuleGetFunction")?,
                cu_launch_kernel: symbol(&library, "cuLaunchKernel")?,
                cu_get_error_name: symbol(&library, "cuGetErrorName")?,
                cu_get_error_string: symbol(&library, "cuGetErrorString")?,
                _library: library,
            }
        };
        let driver = Driver {
            api,
            kernels: Mutex::new(HashMap::new()),
        };
        // SAFETY: cuInit takes flags (0) and may be called any number of times.
        driver
            .check("cuInit", unsafe { (driver.api.cu_init)(0) })
            .map_err(|err| err.message().to_string())?;
        Ok(driver)
    }

    /// `Ok` for `CUDA_SUCCESS`, else a `RuntimeError` naming the call and the driver's error.
    fn check(&self, call: &str, result: CuResult) -> Result<()> {
        if result == 0 {
            return Ok(());
        }
        let describe = |f: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult| {
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
        Err(Error::runtime_error(format!(
            "CUDA driver call {call} failed: {} ({}, code {result})",
            describe(self.api.cu_get_error_name),
            describe(self.api.cu_get_error_string),
        )))
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

    /// The primary context of `device_id` and the module's kernels there, loaded once.
    fn kernels(&self, device_id: i32) -> Result<Kernels> {
        let mut cache = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(kernels) = cache.get(&device_id) {
            return Ok(*kernels);
        }
        let mut device: CuDevice = 0;
        // SAFETY: valid output slots and a NUL-terminated PTX image and names throughout; the
        // primary context is the one PyTorch's runtime API uses, retained for the process.
        let kernels = unsafe {
            self.check(
                "cuDeviceGet",
                (self.api.cu_device_get)(&mut device, device_id),
            )?;
            let mut context: Handle = std::ptr::null_mut();
            self.check(
                "cuDevicePrimaryCtxRetain",
                (self.api.cu_device_primary_ctx_retain)(&mut context, device),
            )?;
            let _current = self.make_current(context)?;
            let mut module: Handle = std::ptr::null_mut();
            self.check(
                "cuModuleLoadData",
                (self.api.cu_module_load_data)(&mut module, PTX.as_ptr().cast()),
            )?;
            let mut add_f32: Handle = std::ptr::null_mut();
            self.check(
                "cuModuleGetFunction",
                (self.api.cu_module_get_function)(&mut add_f32, module, c"add_f32".as_ptr()),
            )?;
            let mut scale_f32: Handle = std::ptr::null_mut();
            self.check(
                "cuModuleGetFunction",
                (self.api.cu_module_get_function)(&mut scale_f32, module, c"scale_f32".as_ptr()),
            )?;
            Kernels {
                context,
                add_f32,
                scale_f32,
            }
        };
        cache.insert(device_id, kernels);
        Ok(kernels)
    }

    /// Makes `context` current on this thread until the guard drops (then the caller's context,
    /// such as PyTorch's, is current again).
    fn make_current(&self, context: Handle) -> Result<CurrentContext<'_>> {
        // SAFETY: a context handle of this driver.
        self.check("cuCtxPushCurrent", unsafe {
            (self.api.cu_ctx_push_current)(context)
        })?;
        Ok(CurrentContext { driver: self })
    }

    /// Launches `kernel` on `stream` of device `device_id` over `n` elements, with `params` the
    /// addresses of its arguments in order. Asynchronous: returns once the work is queued.
    ///
    /// # Safety
    /// `params` must match the kernel's parameters (types and count), and the device pointers
    /// among them must address `n` elements of float32 memory on that device that the kernel
    /// may read (inputs) and write (output) while the queued work runs.
    pub unsafe fn launch(
        &self,
        kernel: Kernel,
        device_id: i32,
        stream: tvm_ffi::env::StreamHandle,
        n: u64,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        const BLOCK: u64 = 256;
        // Grid-stride kernels: a grid of at most 65535 blocks covers any `n`.
        let grid = n.div_ceil(BLOCK).min(65535) as c_uint;
        let kernels = self.kernels(device_id)?;
        let function = match kernel {
            Kernel::AddF32 => kernels.add_f32,
            Kernel::ScaleF32 => kernels.scale_f32,
        };
        let _current = self.make_current(kernels.context)?;
        // SAFETY: a function of the loaded module, launched with the caller's arguments (see the
        // contract) on the caller's stream, in the context the function belongs to.
        self.check("cuLaunchKernel", unsafe {
            (self.api.cu_launch_kernel)(
                function,
                grid,
                1,
                1,
                BLOCK as c_uint,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }
}

/// Pops the context pushed by [`Driver::make_current`].
struct CurrentContext<'a> {
    driver: &'a Driver,
}

impl Drop for CurrentContext<'_> {
    fn drop(&mut self) {
        let mut popped: Handle = std::ptr::null_mut();
        // SAFETY: pops the context this guard pushed on this thread. A failure leaves nothing to
        // release, so it is ignored.
        let _ = unsafe { (self.driver.api.cu_ctx_pop_current)(&mut popped) };
    }
}
