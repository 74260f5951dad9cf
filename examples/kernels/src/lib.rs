//! A small kernel library: functions over tensors that Python passes from NumPy (or PyTorch,
//! or C++ passes as `TensorView`), without copying.
//!
//! ```python
//! import numpy as np, tvm_ffi
//! tvm_ffi.load_module("target/debug/libtvm_ffi_example_kernels.so")
//! add_one = tvm_ffi.get_global_func("kernels.add_one")
//! x = np.arange(4, dtype="float32"); y = np.empty_like(x)
//! add_one(x, y)                                   # writes into y's memory
//! scaled = np.from_dlpack(tvm_ffi.get_global_func("kernels.scale")(x, 2.0))
//! ```
use tvm_ffi::half::{bf16, f16};
use tvm_ffi::{
    ffi_func, ffi_methods, Any, Array, Bytes, DataType, Device, Function, Object, Result, Tensor,
    TensorMut, TensorView,
};

/// `y = x + 1`, elementwise, written into `y` in place. Both are contiguous float32 CPU
/// tensors of the same shape; `y` must not overlap `x`.
#[ffi_func(name = "kernels.add_one", export = "add_one")]
pub fn add_one(x: TensorView, y: TensorView) -> Result<()> {
    let xs = x.check("x").as_slice::<f32>()?;
    let y = y.check("y").shape(x.shape())?.disjoint_from(&x, "x")?;
    // SAFETY: `y` does not overlap `x` (checked above), this is the only slice of `y` taken
    // during the call, and callers do not touch a kernel's arguments while it runs.
    let ys = unsafe { y.as_mut_slice::<f32>()? };
    // Two slices that cannot alias: this loop compiles to vector instructions.
    for (out, &value) in ys.iter_mut().zip(xs) {
        *out = value + 1.0;
    }
    Ok(())
}

/// The sum of a contiguous float32 CPU tensor, accumulated in float64.
#[ffi_func(name = "kernels.sum", export = "sum")]
pub fn sum(x: TensorView) -> Result<f64> {
    let xs = x.check("x").as_slice::<f32>()?;
    Ok(xs.iter().map(|&v| f64::from(v)).sum())
}

/// A new tensor `x * factor` (float32, the shape of `x`). Python reads it with
/// `numpy.from_dlpack` without a copy; the memory is freed when the last holder drops it.
#[ffi_func(name = "kernels.scale", export = "scale")]
pub fn scale(x: TensorView, factor: f64) -> Result<Tensor> {
    let xs = x.check("x").as_slice::<f32>()?;
    let mut out = TensorMut::empty_like(&x)?;
    let factor = factor as f32;
    for (o, &v) in out.as_mut_slice::<f32>()?.iter_mut().zip(xs) {
        *o = v * factor;
    }
    Ok(out.freeze())
}

/// `[0, 1, ..., n - 1]` as float32, in a Rust-allocated tensor.
#[ffi_func(name = "kernels.arange")]
pub fn arange(n: i64) -> Result<Tensor> {
    tvm_ffi::ensure!(n >= 0, ValueError, "`n` must be non-negative, got {n}");
    // Allocated fallibly: `arange(2**53)` raises MemoryError instead of aborting the host
    // (as `(0..n).collect::<Vec<_>>()` would).
    let mut out = TensorMut::empty(&[n], DataType::float(32), Device::cpu())?;
    for (i, v) in out.as_mut_slice::<f32>()?.iter_mut().enumerate() {
        *v = i as f32;
    }
    Ok(out.freeze())
}

/// The sum over a list of float32 tensors (`Array<Tensor>`: Python passes a list of arrays).
#[ffi_func(name = "kernels.sum_all")]
pub fn sum_all(xs: Array<Tensor>) -> Result<f64> {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        let values = x.check(&format!("xs[{i}]")).as_slice::<f32>()?;
        total += values.iter().map(|&v| f64::from(v)).sum::<f64>();
    }
    Ok(total)
}

/// The address of the first element of `x`, to show that arguments are not copied.
#[ffi_func(name = "kernels.data_address")]
pub fn data_address(x: TensorView) -> i64 {
    (x.data_ptr() as usize as i64).wrapping_add(x.byte_offset() as i64)
}

/// How many tensor buffers this library allocated are still alive (in any language).
#[ffi_func(name = "kernels.live_buffers")]
pub fn live_buffers() -> i64 {
    tvm_ffi::tensor::live_rust_buffers() as i64
}

/// A per-element bias: an object with a tensor field, added to inputs by `apply`.
#[derive(Object)]
#[ffi_type(key = "kernels.Bias", final)]
#[repr(C)]
pub struct Bias {
    /// The bias values (a 1-D float32 tensor, shared, not copied).
    pub values: Tensor,
}

#[ffi_methods]
impl Bias {
    /// Keeps a reference to `values` (a 1-D float32 CPU tensor).
    #[ffi(init)]
    pub fn new(values: Tensor) -> Result<Self> {
        values.check("values").ndim(1)?.as_slice::<f32>()?;
        Ok(Bias { values })
    }

    /// `y = x + values`, in place (`x`, `y`: float32 of the bias's shape, `y` disjoint from
    /// `x` and from the bias).
    pub fn apply(&self, x: TensorView, y: TensorView) -> Result<()> {
        let bias = self.values.as_slice::<f32>()?;
        let xs = x.check("x").shape(self.values.shape())?.as_slice::<f32>()?;
        let y = y
            .check("y")
            .shape(self.values.shape())?
            .disjoint_from(&x, "x")?
            .disjoint_from(&self.values.view(), "values")?;
        // SAFETY: `y` overlaps neither `x` nor the bias (checked) and is the only slice of its
        // memory taken during the call.
        let ys = unsafe { y.as_mut_slice::<f32>()? };
        for ((out, &v), &b) in ys.iter_mut().zip(xs).zip(bias) {
            *out = v + b;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The environment: streams and signals.

/// The current stream of `device` on the calling thread, as an address (0: the default
/// stream). Inside a Python call with a PyTorch CUDA tensor argument, PyTorch's current stream.
#[ffi_func(name = "kernels.current_stream")]
pub fn current_stream(device: Device) -> i64 {
    tvm_ffi::env::current_stream(device) as usize as i64
}

/// The current stream of the device holding `x` (what a GPU kernel launches on).
#[ffi_func(name = "kernels.tensor_stream")]
pub fn tensor_stream(x: TensorView) -> i64 {
    tvm_ffi::env::current_stream(x.device()) as usize as i64
}

/// Calls `f()` with `stream` as the current stream of `device`, then restores the previous one.
#[ffi_func(name = "kernels.with_stream")]
pub fn with_stream(device: Device, stream: i64, f: Function) -> Result<Any> {
    let _guard = tvm_ffi::env::use_stream(device, stream as usize as tvm_ffi::env::StreamHandle)?;
    f.call(())
}

/// Busy work that Ctrl-C interrupts: calls `on_start()` once, then loops, checking for signals
/// every iteration, until `seconds` (at most 60) have passed (returns the iteration count) or
/// a signal handler raises (Python: `KeyboardInterrupt`).
#[ffi_func(name = "kernels.spin")]
pub fn spin(on_start: Function, seconds: f64) -> Result<i64> {
    tvm_ffi::ensure!(
        (0.0..=60.0).contains(&seconds),
        ValueError,
        "`seconds` must be between 0 and 60, got {seconds}"
    );
    on_start.call(())?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
    let mut iterations = 0i64;
    while std::time::Instant::now() < deadline {
        tvm_ffi::env::check_signals()?;
        // Some work between checks, as a real loop has.
        std::hint::black_box((0..1000u64).sum::<u64>());
        iterations += 1;
    }
    Ok(iterations)
}

// ---------------------------------------------------------------------------------------------
// Element types: float16/bfloat16 (the `half` crate), fp8 and sub-byte types as bytes, views.

/// `x` (float16 or bfloat16) as a new float32 tensor.
#[ffi_func(name = "kernels.to_float32")]
pub fn to_float32(x: TensorView) -> Result<Tensor> {
    let mut out = TensorMut::empty(x.shape(), DataType::FLOAT32, Device::cpu())?;
    let values = out.as_mut_slice::<f32>()?;
    let x = x.check("x");
    match x.view().dtype() {
        DataType::FLOAT16 => {
            for (o, v) in values.iter_mut().zip(x.as_slice::<f16>()?) {
                *o = v.to_f32();
            }
        }
        DataType::BFLOAT16 => {
            for (o, v) in values.iter_mut().zip(x.as_slice::<bf16>()?) {
                *o = v.to_f32();
            }
        }
        other => tvm_ffi::bail!(
            TypeError,
            "`x` must have dtype float16 or bfloat16, got {other}"
        ),
    }
    Ok(out.freeze())
}

/// `x` (float32) rounded to `dtype` (`"float16"` or `"bfloat16"`), as a new tensor.
#[ffi_func(name = "kernels.from_float32")]
pub fn from_float32(x: TensorView, dtype: DataType) -> Result<Tensor> {
    let xs = x.check("x").as_slice::<f32>()?;
    let mut out = TensorMut::empty(x.shape(), dtype, Device::cpu())?;
    match dtype {
        DataType::FLOAT16 => {
            for (o, &v) in out.as_mut_slice::<f16>()?.iter_mut().zip(xs) {
                *o = f16::from_f32(v);
            }
        }
        DataType::BFLOAT16 => {
            for (o, &v) in out.as_mut_slice::<bf16>()?.iter_mut().zip(xs) {
                *o = bf16::from_f32(v);
            }
        }
        other => tvm_ffi::bail!(
            TypeError,
            "`dtype` must be float16 or bfloat16, got {other}"
        ),
    }
    Ok(out.freeze())
}

/// The raw bytes of a contiguous CPU tensor of any dtype (packed for sub-byte dtypes).
#[ffi_func(name = "kernels.raw_bytes")]
pub fn raw_bytes(x: TensorView) -> Result<Bytes> {
    Ok(Bytes::from(x.check("x").as_bytes()?))
}

/// A tensor of `dtype` and `shape` over a copy of `data` (exactly its byte size): how fp8
/// (`float8_e4m3fn`, ...) and packed sub-byte tensors (`int4`, `float4_e2m1fn`) are made.
#[ffi_func(name = "kernels.tensor_from_bytes")]
pub fn tensor_from_bytes(data: Bytes, shape: Array<i64>, dtype: DataType) -> Result<Tensor> {
    let shape: Vec<i64> = shape.iter().collect();
    Tensor::from_bytes(data.as_ref().to_vec(), &shape, dtype)
}

/// A view of `x` (no copy) with `shape`, `strides` and `offset` in elements; checked to stay
/// within `x`.
#[ffi_func(name = "kernels.as_strided")]
pub fn as_strided(
    x: Tensor,
    shape: Array<i64>,
    strides: Array<i64>,
    offset: i64,
) -> Result<Tensor> {
    let shape: Vec<i64> = shape.iter().collect();
    let strides: Vec<i64> = strides.iter().collect();
    x.as_strided(&shape, &strides, offset)
}

/// The transpose of a 2-D tensor, as a view (no copy).
#[ffi_func(name = "kernels.transpose")]
pub fn transpose(x: Tensor) -> Result<Tensor> {
    x.check("x").ndim(2)?;
    x.transpose(0, 1)
}

/// Rows `start .. start + length` of `x`, as a view (no copy).
#[ffi_func(name = "kernels.rows")]
pub fn rows(x: Tensor, start: i64, length: i64) -> Result<Tensor> {
    x.narrow(0, start, length)
}
