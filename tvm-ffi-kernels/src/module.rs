//! Kernels embedded in the library at compile time ([`KernelModule`]: PTX text, a cubin or a
//! fatbin), loaded lazily on each device (`cuModuleLoadData` in the device's primary context,
//! once) and launched with typed arguments ([`Kernel`]).
use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::sync::Mutex;

use tvm_ffi::{Error, Result, TensorView};

use crate::abi::{function_attribute, CuLaunchConfig, Handle};
use crate::driver::{Driver, SendHandle};
use crate::launch::{LaunchConfig, DEFAULT_MAX_DYNAMIC_SHARED_MEMORY};

/// Embeds a PTX file (a path relative to the current source file, as `include_str!`) as a
/// [`KernelModule`] named `$name`. PTX is the portable form: the driver compiles it for the GPU
/// it runs on.
///
/// ```
/// static MODULE: tvm_ffi_kernels::KernelModule =
///     tvm_ffi_kernels::embed_ptx!("doc", "../tests/data/add.ptx");
/// assert_eq!(MODULE.name(), "doc");
/// ```
#[macro_export]
macro_rules! embed_ptx {
    ($name:expr, $path:expr) => {
        $crate::KernelModule::ptx($name, ::core::concat!(::core::include_str!($path), "\0"))
    };
}

/// Embeds a cubin or fatbin file (`nvcc -cubin` / `-fatbin`, a path as for `include_bytes!`)
/// as a [`KernelModule`] named `$name`.
#[macro_export]
macro_rules! embed_binary {
    ($name:expr, $path:expr) => {
        $crate::KernelModule::binary($name, ::core::include_bytes!($path))
    };
}

enum Image {
    /// NUL-terminated PTX text.
    Ptx(&'static str),
    /// An ELF cubin or a fatbin.
    Binary(&'static [u8]),
}

/// A function of a loaded module on one device.
struct LoadedFunction {
    device_id: i32,
    name: &'static CStr,
    function: SendHandle,
    /// The dynamic shared memory limit set on it (48 KiB until raised).
    max_dynamic_shared_memory: u32,
    /// Whether non-portable cluster sizes were allowed on it.
    non_portable_cluster_size: bool,
}

/// A module of kernels embedded in the library ([`embed_ptx!`], [`embed_binary!`]), meant to
/// be a `static`. Loaded on first use on each device and kept for the process.
pub struct KernelModule {
    name: &'static str,
    image: Image,
    /// The module loaded on each device (ordinal, `CUmodule`).
    loaded: Mutex<Vec<(i32, SendHandle)>>,
    functions: Mutex<Vec<LoadedFunction>>,
}

impl KernelModule {
    /// A module of PTX text, which must end with a NUL byte (as [`embed_ptx!`] writes it).
    ///
    /// # Panics
    /// At compile time (in a `static`) when `text` does not end with NUL.
    pub const fn ptx(name: &'static str, text: &'static str) -> KernelModule {
        let bytes = text.as_bytes();
        assert!(
            !bytes.is_empty() && bytes[bytes.len() - 1] == 0,
            "PTX text must be NUL-terminated (use embed_ptx!)"
        );
        Self::new(name, Image::Ptx(text))
    }

    /// A module of a cubin or fatbin image.
    pub const fn binary(name: &'static str, image: &'static [u8]) -> KernelModule {
        Self::new(name, Image::Binary(image))
    }

    const fn new(name: &'static str, image: Image) -> KernelModule {
        KernelModule {
            name,
            image,
            loaded: Mutex::new(Vec::new()),
            functions: Mutex::new(Vec::new()),
        }
    }

    /// The module's name (in error messages).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel `name` of this module, launched with arguments of type `A` (a tuple of
    /// [`KernelParam`]s in the kernel's parameter order).
    pub const fn kernel<A: KernelArgs>(&'static self, name: &'static CStr) -> Kernel<A> {
        Kernel {
            module: self,
            name,
            _args: PhantomData,
        }
    }

    /// The module on device `device_id`, loaded on first use in the device's primary context.
    fn module_on(&self, driver: &Driver, device_id: i32, context: Handle) -> Result<Handle> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, module)) = loaded.iter().find(|(id, _)| *id == device_id) {
            return Ok(module.0);
        }
        // A binary image is copied to 8-byte-aligned memory: an ELF image embedded with
        // `include_bytes!` has no alignment.
        let aligned: Vec<u64>;
        let image: *const c_void = match self.image {
            Image::Ptx(text) => text.as_ptr().cast(),
            Image::Binary(bytes) => {
                let mut words = vec![0u64; bytes.len().div_ceil(8)];
                // SAFETY: `words` has at least `bytes.len()` bytes; u64 has no invalid bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        words.as_mut_ptr().cast::<u8>(),
                        bytes.len(),
                    )
                };
                aligned = words;
                aligned.as_ptr().cast()
            }
        };
        let _current = driver.make_current(context)?;
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: a valid output slot and an image the driver reads during the call (PTX is
        // NUL-terminated; a binary image is self-describing), in the pushed context.
        driver.check("cuModuleLoadData", unsafe {
            (driver.api.cu_module_load_data)(&mut module, image)
        })?;
        loaded.push((device_id, SendHandle(module)));
        Ok(module)
    }
}

/// A kernel of a [`KernelModule`] with its argument types `A`: a tuple of [`KernelParam`]s
/// (`(DevicePtr, DevicePtr, u32, f32)`).
pub struct Kernel<A> {
    module: &'static KernelModule,
    name: &'static CStr,
    _args: PhantomData<fn(A)>,
}

impl<A> Clone for Kernel<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Kernel<A> {}

impl<A: KernelArgs> Kernel<A> {
    /// The kernel's name in its module.
    pub fn name(&self) -> &'static str {
        self.name.to_str().unwrap_or("<non-UTF-8 name>")
    }

    /// `kernel `name` (module `m`)`, as errors name it.
    fn describe(&self) -> String {
        format!("kernel `{}` (module `{}`)", self.name(), self.module.name)
    }

    /// Loads the kernel's module on `device` now (it is otherwise loaded by the first launch):
    /// a module load inside CUDA-graph capture would fail.
    pub fn load(&self, device: tvm_ffi::Device) -> Result<()> {
        self.with_function(device.device_id(), |_, _, _| Ok(()))
            .map_err(|err| self.error("loading", &device.to_string(), err))
    }

    /// Raises the dynamic shared memory `device`'s launches of this kernel may use to `bytes`
    /// (`cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)`). A launch asking
    /// for more than 48 KiB does this itself.
    pub fn set_max_dynamic_shared_memory(&self, device: tvm_ffi::Device, bytes: u32) -> Result<()> {
        self.with_function(device.device_id(), |driver, function, _| {
            set_max_dynamic_shared_memory(driver, function, bytes)
        })
        .map_err(|err| self.error("configuring", &device.to_string(), err))
    }

    /// Runs `f(driver, function, context)` with this kernel's function on `device_id`, loading
    /// the module on first use.
    fn with_function<R>(
        &self,
        device_id: i32,
        f: impl FnOnce(&Driver, &mut LoadedFunction, Handle) -> Result<R>,
    ) -> Result<R> {
        let driver = Driver::get()?;
        let context = driver.primary_context(device_id)?;
        let mut functions = self
            .module
            .functions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let index = match functions
            .iter()
            .position(|f| f.device_id == device_id && f.name == self.name)
        {
            Some(index) => index,
            None => {
                let module = self.module.module_on(driver, device_id, context)?;
                let mut function: Handle = std::ptr::null_mut();
                // SAFETY: a valid output slot, a loaded module, a NUL-terminated name.
                driver.check("cuModuleGetFunction", unsafe {
                    (driver.api.cu_module_get_function)(&mut function, module, self.name.as_ptr())
                })?;
                functions.push(LoadedFunction {
                    device_id,
                    name: self.name,
                    function: SendHandle(function),
                    max_dynamic_shared_memory: DEFAULT_MAX_DYNAMIC_SHARED_MEMORY,
                    non_portable_cluster_size: false,
                });
                functions.len() - 1
            }
        };
        f(driver, &mut functions[index], context)
    }

    fn error(&self, what: &str, config: &str, err: Error) -> Error {
        Error::new(
            err.kind(),
            format!(
                "{what} {} with {config}: {}",
                self.describe(),
                err.message()
            ),
        )
    }

    /// Launches the kernel with `args` as `config` says. Asynchronous: returns once the work is
    /// queued on the stream.
    ///
    /// Errors: a `ValueError` for a configuration [`LaunchConfig::validate`] refuses, a
    /// `RuntimeError` without a usable driver or when the driver refuses the load or launch;
    /// each names the kernel, the configuration and the CUDA error.
    ///
    /// # Safety
    /// `A` must be the kernel's parameter list (types and order), and every device pointer in
    /// `args` must address memory on `config.device` that the kernel may access as it does
    /// (read inputs, write outputs without overlap it does not expect) until the queued work
    /// completes. `config`'s stream (the environment's current stream of `config.device`
    /// unless [`LaunchConfig::stream`] replaced it) must be null or a live stream of that
    /// device until then: the driver is handed the pointer as it is, and a stream set in the
    /// environment ([`tvm_ffi::env::set_stream`], safe because the runtime only stores it) is
    /// trusted here, where the launch's caller vouches for it, as C++ launchers trust
    /// `TVMFFIEnvGetStream`.
    pub unsafe fn launch(&self, config: &LaunchConfig, mut args: A) -> Result<()> {
        config.validate().map_err(|err| {
            Error::new(
                err.kind(),
                format!("launching {}: {}", self.describe(), err.message()),
            )
        })?;
        self.with_function(config.device.device_id(), |driver, loaded, context| {
            if config.shared_memory_bytes > loaded.max_dynamic_shared_memory {
                set_max_dynamic_shared_memory(driver, loaded, config.shared_memory_bytes)?;
            }
            if config.non_portable_cluster_size && !loaded.non_portable_cluster_size {
                // SAFETY: a function of a loaded module; the attribute takes 0 or 1.
                let rc = unsafe {
                    (driver.api.cu_func_set_attribute)(
                        loaded.function.0,
                        function_attribute::NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                        1,
                    )
                };
                driver.check("cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)", rc)?;
                loaded.non_portable_cluster_size = true;
            }
            let mut params = args.param_pointers();
            let _current = driver.make_current(context)?;
            let (g, b) = (config.grid, config.block);
            if config.needs_launch_ex() {
                let launch_ex = driver.api.cu_launch_kernel_ex.ok_or_else(|| {
                    Error::runtime_error(
                        "launch attributes need cuLaunchKernelEx (a CUDA 12.0 or newer driver)",
                    )
                })?;
                let mut attributes = config.launch_attributes();
                let ex = CuLaunchConfig {
                    grid_dim_x: g.x,
                    grid_dim_y: g.y,
                    grid_dim_z: g.z,
                    block_dim_x: b.x,
                    block_dim_y: b.y,
                    block_dim_z: b.z,
                    shared_mem_bytes: config.shared_memory_bytes,
                    stream: config.stream,
                    attrs: attributes.as_mut_ptr(),
                    num_attrs: attributes.len() as u32,
                };
                // SAFETY: the caller's contract for the arguments; `ex` and its attributes
                // live across the call; the function's context is current.
                driver.check("cuLaunchKernelEx", unsafe {
                    launch_ex(
                        &ex,
                        loaded.function.0,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                })
            } else {
                // SAFETY: as above.
                driver.check("cuLaunchKernel", unsafe {
                    (driver.api.cu_launch_kernel)(
                        loaded.function.0,
                        g.x,
                        g.y,
                        g.z,
                        b.x,
                        b.y,
                        b.z,
                        config.shared_memory_bytes,
                        config.stream,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                })
            }
        })
        // The configuration is formatted only for an error: a launch allocates nothing.
        .map_err(|err| self.error("launching", &config.to_string(), err))
    }
}

fn set_max_dynamic_shared_memory(
    driver: &Driver,
    loaded: &mut LoadedFunction,
    bytes: u32,
) -> Result<()> {
    let value = i32::try_from(bytes)
        .map_err(|_| Error::value_error(format!("{bytes} B of shared memory is out of range")))?;
    // SAFETY: a function of a loaded module and a byte count; the driver refuses values the
    // device cannot provide with an error code.
    let rc = unsafe {
        (driver.api.cu_func_set_attribute)(
            loaded.function.0,
            function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES,
            value,
        )
    };
    driver.check("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", rc)?;
    loaded.max_dynamic_shared_memory = bytes;
    Ok(())
}

/// A value a kernel takes as a parameter, passed by value as the driver copies it: its bytes
/// must be the kernel parameter's.
///
/// # Safety
/// `Self` must have the size, alignment and representation of the C/PTX parameter type it is
/// passed as (`u64`/`DevicePtr` for `.u64` pointers, `f32` for `.f32`, a `#[repr(C)]` struct
/// for a struct parameter).
pub unsafe trait KernelParam: Copy {}

macro_rules! kernel_params {
    ($($t:ty),*) => {$(
        // SAFETY: a plain number type, passed as the PTX/C type of its size.
        unsafe impl KernelParam for $t {}
    )*};
}
kernel_params!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    tvm_ffi::half::f16,
    tvm_ffi::half::bf16
);

/// A device address, passed as a `.u64` PTX parameter (`T*` in CUDA C).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevicePtr(pub u64);

// SAFETY: repr(transparent) over u64.
unsafe impl KernelParam for DevicePtr {}

impl DevicePtr {
    /// The address of the first element of `tensor` (the data pointer plus the byte offset).
    pub fn of(tensor: &TensorView<'_>) -> Result<DevicePtr> {
        Ok(DevicePtr(tensor.first_element_ptr()? as usize as u64))
    }
}

/// The argument list of a [`Kernel`]: a tuple of [`KernelParam`]s.
///
/// # Safety
/// `param_pointers` must return one pointer per parameter, in order, each to the parameter's
/// value inside `self`.
pub unsafe trait KernelArgs {
    /// The address of each parameter's value (what `cuLaunchKernel` reads as `kernelParams`).
    fn param_pointers(&mut self) -> Vec<*mut c_void>;
}

macro_rules! kernel_args {
    ($($T:ident $i:tt),*) => {
        // SAFETY: one pointer per tuple field, in order, into `self`.
        unsafe impl<$($T: KernelParam),*> KernelArgs for ($($T,)*) {
            fn param_pointers(&mut self) -> Vec<*mut c_void> {
                vec![$(&mut self.$i as *mut $T as *mut c_void),*]
            }
        }
    };
}
kernel_args!();
kernel_args!(A 0);
kernel_args!(A 0, B 1);
kernel_args!(A 0, B 1, C 2);
kernel_args!(A 0, B 1, C 2, D 3);
kernel_args!(A 0, B 1, C 2, D 3, E 4);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
kernel_args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

#[cfg(test)]
mod tests {
    use super::*;
    use tvm_ffi::Device;

    static MODULE: KernelModule = crate::embed_ptx!("test", "../tests/data/add.ptx");
    static ADD: Kernel<(DevicePtr, DevicePtr, DevicePtr, u64)> = MODULE.kernel(c"add_f32");

    #[test]
    fn parameters_point_into_the_tuple_in_order() {
        let mut args = (DevicePtr(7), 3u32, 2.5f32);
        let base = &args as *const _ as usize;
        let size = std::mem::size_of_val(&args);
        let pointers = args.param_pointers();
        assert_eq!(pointers.len(), 3);
        assert!(pointers
            .iter()
            .all(|p| (*p as usize) >= base && (*p as usize) < base + size));
        // SAFETY: each pointer addresses the field of its type.
        unsafe {
            assert_eq!(*(pointers[0] as *const u64), 7);
            assert_eq!(*(pointers[1] as *const u32), 3);
            assert_eq!(*(pointers[2] as *const f32), 2.5);
        }
        assert!(().param_pointers().is_empty());
    }

    #[test]
    fn the_embedded_ptx_is_nul_terminated_and_named() {
        assert_eq!(MODULE.name(), "test");
        let Image::Ptx(text) = MODULE.image else {
            panic!("a PTX module");
        };
        assert!(text.ends_with("}\n\0") && text.contains(".entry add_f32"));
        assert_eq!(ADD.name(), "add_f32");
    }

    #[test]
    fn an_invalid_configuration_is_refused_before_the_driver_is_used() {
        let config = LaunchConfig::new(Device::cuda(0), 0u32, 32u32);
        // SAFETY: refused before anything is launched.
        let err = unsafe { ADD.launch(&config, (DevicePtr(0), DevicePtr(0), DevicePtr(0), 0)) }
            .unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(
            err.message(),
            "launching kernel `add_f32` (module `test`): invalid launch (grid (0, 1, 1), block \
             (32, 1, 1), 0 B dynamic shared memory, stream 0x0 on cuda:0): grid and block \
             extents must be at least 1"
        );
    }

    #[test]
    fn without_a_driver_a_launch_names_the_kernel_configuration_and_reason() {
        if Driver::get().is_ok() {
            return; // a GPU machine: tests/python/test_rmsnorm_torch.py launches for real
        }
        let config = LaunchConfig::new(Device::cuda(0), 4u32, 256u32)
            .shared_memory(100_000)
            .cluster((2u32, 1, 1))
            .programmatic_dependent_launch(true);
        // SAFETY: fails before anything is launched (no driver).
        let err = unsafe { ADD.launch(&config, (DevicePtr(0), DevicePtr(0), DevicePtr(0), 0)) }
            .unwrap_err();
        assert_eq!(err.kind(), "RuntimeError");
        assert!(
            err.message().starts_with(
                "launching kernel `add_f32` (module `test`) with grid (4, 1, 1), block (256, 1, \
                 1), 100000 B dynamic shared memory, stream 0x0 on cuda:0, cluster (2, 1, 1), \
                 programmatic dependent launch: cannot load the CUDA driver libcuda.so.1 (is an \
                 NVIDIA GPU driver installed?): "
            ),
            "{}",
            err.message()
        );
        let err = ADD.load(Device::cuda(0)).unwrap_err();
        assert!(err
            .message()
            .starts_with("loading kernel `add_f32` (module `test`) with cuda:0: cannot load"));
    }
}
