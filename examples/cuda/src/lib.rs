//! A GPU kernel library in Rust: elementwise float32 kernels over PyTorch (or any DLPack) CUDA
//! tensors, launched **on the caller's stream** (`tvm_ffi::env::current_stream`, which is
//! `torch.cuda.current_stream()` inside a call from Python), so they are ordered with the
//! caller's work and captured by CUDA graphs.
//!
//! The kernels are PTX text (`src/kernels.ptx`) embedded in the library and compiled by the
//! driver when first launched on a device; the launches go through `tvm-ffi-kernels`, which
//! loads the driver API at run time from `libcuda.so.1`: building needs no CUDA toolkit and the
//! library links nothing of CUDA. Without a driver, every function raises a `RuntimeError`
//! saying so.
//!
//! ```python
//! import torch, tvm_ffi
//! tvm_ffi.load_module("target/debug/libtvm_ffi_example_cuda.so")
//! add = tvm_ffi.get_global_func("cuda_example.add")
//! x, y = torch.rand(1000, device="cuda"), torch.rand(1000, device="cuda")
//! out = torch.empty_like(x)
//! s = torch.cuda.Stream()
//! with torch.cuda.stream(s):
//!     add(x, y, out)                               # queued on `s`
//! s.synchronize()
//! ```
use tvm_ffi::{ffi_func, sys, Result, Tensor, TensorCheck, TensorMut, TensorView};
use tvm_ffi_kernels::{embed_ptx, DevicePtr, Driver, Kernel, KernelModule, LaunchConfig};

pub use tvm_ffi_kernels::LIBCUDA;

static MODULE: KernelModule = embed_ptx!("cuda_example", "kernels.ptx");
/// `add_f32(x, y, out, n)`.
static ADD_F32: Kernel<(DevicePtr, DevicePtr, DevicePtr, u64)> = MODULE.kernel(c"add_f32");
/// `scale_f32(x, out, factor, n)`.
static SCALE_F32: Kernel<(DevicePtr, DevicePtr, f32, u64)> = MODULE.kernel(c"scale_f32");

/// Checks that argument `name` is a contiguous float32 CUDA tensor; returns the address of its
/// first element.
fn cuda_f32(check: TensorCheck<'_, '_>) -> Result<DevicePtr> {
    let view = check
        .device_type(sys::kDLCUDA)?
        .dtype::<f32>()?
        .contiguous()?
        .view();
    DevicePtr::of(&view)
}

/// Grid-stride kernels over `n` elements: blocks of 256 threads, at most 65535 blocks (which
/// cover any `n`), on the current stream of `x`'s device.
fn elementwise(x: &TensorView<'_>, n: u64) -> LaunchConfig {
    const BLOCK: u64 = 256;
    let grid = n.div_ceil(BLOCK).min(65535) as u32;
    LaunchConfig::new(x.device(), grid, BLOCK as u32)
}

/// `out = x + y`, elementwise, on the current stream of their device. All three are
/// contiguous float32 tensors of one shape on one CUDA device; `out` does not overlap the
/// inputs. Returns as soon as the work is queued (as PyTorch operations do).
#[ffi_func(name = "cuda_example.add", export = "add")]
pub fn add(x: TensorView, y: TensorView, out: TensorView) -> Result<()> {
    let x_ptr = cuda_f32(x.check("x"))?;
    let y_ptr = cuda_f32(y.check("y").device(x.device())?.shape(x.shape())?)?;
    let out_ptr = cuda_f32(
        out.check("out")
            .device(x.device())?
            .shape(x.shape())?
            .disjoint_from(&x, "x")?
            .disjoint_from(&y, "y")?,
    )?;
    Driver::get()?;
    let n = x.numel() as u64;
    if n == 0 {
        return Ok(());
    }
    // SAFETY: add_f32's parameters (three device pointers, an element count); each pointer
    // addresses `n` contiguous float32 elements on this device (checked above), the caller
    // keeps the tensors alive until the work on its stream completes (the stream-ordered
    // contract of every asynchronous GPU operation), and `out` overlaps neither input.
    unsafe { ADD_F32.launch(&elementwise(&x, n), (x_ptr, y_ptr, out_ptr, n)) }
}

/// A new tensor `x * factor` (float32, the shape and device of `x`), allocated through the
/// environment's allocator (PyTorch's, inside a call with PyTorch tensors) and computed on the
/// current stream of the device.
#[ffi_func(name = "cuda_example.scale", export = "scale")]
pub fn scale(x: TensorView, factor: f64) -> Result<Tensor> {
    let x_ptr = cuda_f32(x.check("x"))?;
    Driver::get()?;
    let out = TensorMut::empty_like(&x)?;
    let out_ptr = DevicePtr::of(&out.view())?;
    let n = x.numel() as u64;
    if n > 0 {
        // SAFETY: scale_f32's parameters; `x` is checked as above and `out` is a fresh compact
        // float32 tensor of the same shape on the same device, which the returned tensor keeps
        // alive; the allocator's memory is stream-ordered with the caller's stream.
        unsafe { SCALE_F32.launch(&elementwise(&x, n), (x_ptr, out_ptr, factor as f32, n))? };
    }
    Ok(out.freeze())
}

/// The CUDA version of the installed driver (`cuDriverGetVersion`: 12040 for 12.4), or a
/// `RuntimeError` when there is no usable driver.
#[ffi_func(name = "cuda_example.driver_version", export = "driver_version")]
pub fn driver_version() -> Result<i64> {
    Ok(i64::from(Driver::get()?.version()?))
}
