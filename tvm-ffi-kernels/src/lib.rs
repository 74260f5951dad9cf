//! A toolkit for GPU kernel libraries exported through TVM-FFI, the Rust counterpart of what C++
//! libraries such as FlashInfer write by hand around `tvm/ffi`:
//!
//! - [`DeviceGuard`]: make a CUDA device current for a scope (C++ `CUDADeviceGuard`);
//!   [`current_stream`]: the environment's stream (PyTorch's current stream inside a call);
//! - [`dispatch_dtype!`]: one kernel instance per element type ([`dtype`]: f32, f16, bf16,
//!   fp8 kinds, integers), with an error naming the argument and the accepted dtypes;
//! - [`KernelModule`] ([`embed_ptx!`], [`embed_binary!`]): kernels embedded at compile time,
//!   loaded lazily on each device and cached; [`Kernel::launch`] with a [`LaunchConfig`]: grid,
//!   block, dynamic shared memory (raising the kernel's limit past 48 KiB), stream, and the
//!   `cuLaunchKernelEx` attributes (cluster dimensions, programmatic dependent launch,
//!   non-portable cluster sizes); a debug check that the launch goes to the framework's
//!   current stream;
//!
//! The CUDA driver is loaded at run time ([`Driver`], `libcuda.so.1`): building needs no CUDA
//! toolkit, nothing links CUDA, and without a driver every launch is a `RuntimeError` naming the
//! kernel, the launch configuration and why.
//!
//! ```no_run
//! use tvm_ffi::{ffi_func, Result, TensorView};
//! use tvm_ffi_kernels::{embed_ptx, DevicePtr, Kernel, KernelModule, LaunchConfig};
//!
//! static MODULE: KernelModule = embed_ptx!("demo", "../tests/data/add.ptx");
//! static ADD: Kernel<(DevicePtr, DevicePtr, DevicePtr, u64)> = MODULE.kernel(c"add_f32");
//!
//! #[ffi_func(name = "demo.add")]
//! fn add(x: TensorView, y: TensorView, out: TensorView) -> Result<()> {
//!     let n = x.numel() as u64;
//!     let x_ptr = DevicePtr::of(&x.check("x").dtype::<f32>()?.contiguous()?.view())?;
//!     let y_ptr = DevicePtr::of(&y.check("y").device(x.device())?.shape(x.shape())?.view())?;
//!     let out_ptr = DevicePtr::of(&out.check("out").device(x.device())?.view())?;
//!     let config = LaunchConfig::new(x.device(), n.div_ceil(256).min(65535) as u32, 256u32);
//!     // SAFETY: add_f32(x, y, out, n) over n contiguous float32 elements on x's device.
//!     unsafe { ADD.launch(&config, (x_ptr, y_ptr, out_ptr, n)) }
//! }
//! ```
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod abi;
mod device;
pub mod driver;
pub mod dtype;
mod launch;
mod module;

pub use device::DeviceGuard;
pub use driver::{Driver, LIBCUDA};
pub use launch::{
    Dim3, LaunchConfig, DEFAULT_MAX_DYNAMIC_SHARED_MEMORY, MAX_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE,
};
pub use module::{DevicePtr, Kernel, KernelArgs, KernelModule, KernelParam};
pub use tvm_ffi::env::current_stream;

/// What the exported macros name; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use tvm_ffi::{DataType, Element};
}
