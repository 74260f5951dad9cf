//! FlashInfer's RMSNorm and fused add + RMSNorm, ported to Rust: one exported function per op,
//! a CPU implementation (the reference semantics, in float32) and a CUDA one (hand-written PTX
//! embedded in the library and launched on the caller's stream through `tvm-ffi-kernels`),
//! chosen by the tensors' device. float32, float16 and bfloat16.
//!
//! - `rmsnorm.rmsnorm(out, x, weight, eps, enable_pdl)`:
//!   `out = x / sqrt(mean(x^2, axis=-1) + eps) * weight`;
//! - `rmsnorm.fused_add_rmsnorm(x, residual, weight, eps, enable_pdl)`:
//!   `residual += x; x = rmsnorm(residual) * weight`, both in place;
//! - `rmsnorm.rmsnorm_new(x, weight, eps)`: the output allocated (PyTorch's allocator inside
//!   a call with PyTorch tensors);
//! - `rmsnorm.Runner`: a stateful runner with a caller-provided workspace (FlashInfer's
//!   `get_workspace_size` / `configure_workspace` / `run` pattern) through the C ABI only.
//!
//! `x`, `out`, `residual` are `[rows, hidden]` with contiguous rows (any row stride); `weight`
//! is `[hidden]`. Anything else is refused with an error naming the argument. See README.md.
use std::sync::Mutex;

use tvm_ffi::{bail, ffi_func, ffi_methods, sys, Object, Result, Tensor, TensorMut, TensorView};
use tvm_ffi_kernels::dispatch_dtype;
use tvm_ffi_kernels::dtype::{bf16, f16};

pub mod cpu;
pub mod cuda;
pub mod layout;

fn check_eps(eps: f64) -> Result<f32> {
    if !(eps.is_finite() && eps >= 0.0) {
        bail!(
            ValueError,
            "`eps` must be finite and non-negative, got {eps}"
        );
    }
    Ok(eps as f32)
}

/// Which implementation runs: the device of `x`.
fn on_cuda(x: &TensorView<'_>) -> Result<bool> {
    match x.device().device_type() {
        sys::kDLCPU => Ok(false),
        sys::kDLCUDA => Ok(true),
        _ => bail!(
            ValueError,
            "`x` must be a cpu or cuda tensor, got a tensor on {}",
            x.device()
        ),
    }
}

/// Checks that `tensor` (argument `name`) is shaped, typed and placed like `x`, and overlaps
/// neither `x` nor `weight`: what every tensor an op writes besides `x` must satisfy.
fn written_like_x<'a>(
    tensor: TensorView<'a>,
    name: &str,
    x: &TensorView<'_>,
    weight: &TensorView<'_>,
) -> Result<TensorView<'a>> {
    Ok(tensor
        .check(name)
        .shape(x.shape())?
        .dtype_is(x.dtype())?
        .device(x.device())?
        .disjoint_from(x, "x")?
        .disjoint_from(weight, "weight")?
        .view())
}

/// `rmsnorm` with an optional per-row inverse-RMS output (CPU only; the runner's workspace).
fn rmsnorm_impl(
    out: TensorView,
    x: TensorView,
    weight: TensorView,
    eps: f64,
    options: cuda::Options,
    inv_rms_out: Option<&mut [f32]>,
) -> Result<()> {
    let eps = check_eps(eps)?;
    let x_rows = layout::rows(&x, "x", false)?;
    let cuda = on_cuda(&x)?;
    let out = written_like_x(out, "out", &x, &weight)?;
    let out_rows = layout::rows(&out, "out", true)?;
    dispatch_dtype!(x.dtype(), "x", [f32, f16, bf16], |T| {
        layout::weight(&weight, &x, x_rows.hidden)?;
        if cuda {
            // SAFETY: checked above: CUDA tensors of one device and dtype; `out` overlaps
            // neither input and its rows do not overlap; the caller keeps them alive until
            // the stream's work is done.
            unsafe { cuda::launch(false, &out, &out_rows, &x, &x_rows, &weight, eps, options) }
        } else {
            let w = weight.as_slice::<T>()?;
            // SAFETY: as above, on the CPU; nothing else references `out` during the call.
            unsafe { cpu::rmsnorm::<T>(&out, &out_rows, &x, &x_rows, w, eps, inv_rms_out) }
        }
    })
}

/// `out = x / sqrt(mean(x^2) + eps) * weight` over the last axis (FlashInfer's `rmsnorm`).
/// `x`, `out`: `[rows, hidden]` of float32, float16 or bfloat16 with contiguous rows; `weight`:
/// `[hidden]`; all of one dtype on one device (cpu or cuda); `out` overlaps neither input.
/// `enable_pdl` launches with programmatic dependent launch (CUDA, sm_90+).
#[ffi_func(
    name = "rmsnorm.rmsnorm",
    export = "rmsnorm",
    metadata(mutates = "out")
)]
pub fn rmsnorm(
    out: TensorView,
    x: TensorView,
    weight: TensorView,
    eps: f64,
    enable_pdl: bool,
) -> Result<()> {
    let options = cuda::Options {
        pdl: enable_pdl,
        ..Default::default()
    };
    rmsnorm_impl(out, x, weight, eps, options, None)
}

/// `residual += x; x = residual / sqrt(mean(residual^2) + eps) * weight`, both in place
/// (FlashInfer's `fused_add_rmsnorm`); the sum is rounded to the dtype before normalising.
#[ffi_func(
    name = "rmsnorm.fused_add_rmsnorm",
    export = "fused_add_rmsnorm",
    metadata(mutates = "x,residual")
)]
pub fn fused_add_rmsnorm(
    x: TensorView,
    residual: TensorView,
    weight: TensorView,
    eps: f64,
    enable_pdl: bool,
) -> Result<()> {
    let eps = check_eps(eps)?;
    let x_rows = layout::rows(&x, "x", true)?;
    let cuda = on_cuda(&x)?;
    let residual = written_like_x(residual, "residual", &x, &weight)?;
    let residual_rows = layout::rows(&residual, "residual", true)?;
    x.check("x").disjoint_from(&weight, "weight")?;
    dispatch_dtype!(x.dtype(), "x", [f32, f16, bf16], |T| {
        layout::weight(&weight, &x, x_rows.hidden)?;
        if cuda {
            // SAFETY: as in `rmsnorm`: `x` and `residual` are disjoint from each other and
            // from `weight`, with rows that do not overlap.
            unsafe {
                cuda::launch(
                    true,
                    &x,
                    &x_rows,
                    &residual,
                    &residual_rows,
                    &weight,
                    eps,
                    cuda::Options {
                        pdl: enable_pdl,
                        ..Default::default()
                    },
                )
            }
        } else {
            let w = weight.as_slice::<T>()?;
            // SAFETY: as above, on the CPU.
            unsafe { cpu::fused_add_rmsnorm::<T>(&x, &x_rows, &residual, &residual_rows, w, eps) }
        }
    })
}

/// [`rmsnorm`] into a new tensor of the shape, dtype and device of `x` (allocated by the
/// environment's allocator: PyTorch's inside a call with PyTorch tensors; Rust's on the CPU).
#[ffi_func(
    name = "rmsnorm.rmsnorm_new",
    export = "rmsnorm_new",
    metadata(returns_like = "x")
)]
pub fn rmsnorm_new(x: TensorView, weight: TensorView, eps: f64) -> Result<Tensor> {
    layout::rows(&x, "x", false)?;
    let out = TensorMut::empty(x.shape(), x.dtype(), x.device())?;
    rmsnorm_impl(out.view(), x, weight, eps, Default::default(), None)?;
    Ok(out.freeze())
}

/// [`rmsnorm`] on CUDA with launch attributes: `cluster` blocks per thread-block cluster (the
/// row count a multiple of it; more than 8 allows non-portable sizes), programmatic dependent
/// launch, and `shared_memory` extra bytes of dynamic shared memory (more than 48 KiB raises
/// the kernel's limit). The GPU test of the toolkit's launch attributes.
#[ffi_func(name = "rmsnorm.rmsnorm_launch_options")]
pub fn rmsnorm_launch_options(
    out: TensorView,
    x: TensorView,
    weight: TensorView,
    eps: f64,
    cluster: i64,
    pdl: bool,
    shared_memory: i64,
) -> Result<()> {
    let options = cuda::Options {
        pdl,
        cluster: u32::try_from(cluster).map_err(|_| {
            tvm_ffi::Error::value_error(format!("`cluster` out of range: {cluster}"))
        })?,
        shared_memory: u32::try_from(shared_memory).map_err(|_| {
            tvm_ffi::Error::value_error(format!("`shared_memory` out of range: {shared_memory}"))
        })?,
        default_stream: false,
    };
    rmsnorm_impl(out, x, weight, eps, options, None)
}

/// [`rmsnorm`] launched on the default stream whatever the caller's current stream is: the
/// mistake the toolkit's debug stream check catches (its GPU test).
#[ffi_func(name = "rmsnorm.rmsnorm_on_default_stream")]
pub fn rmsnorm_on_default_stream(
    out: TensorView,
    x: TensorView,
    weight: TensorView,
    eps: f64,
) -> Result<()> {
    let options = cuda::Options {
        default_stream: true,
        ..Default::default()
    };
    rmsnorm_impl(out, x, weight, eps, options, None)
}

/// A stateful RMSNorm runner (FlashInfer's runner pattern, through the C ABI only: no C++
/// vtable): it holds the weight and `eps`, and a workspace the caller allocates
/// (`get_workspace_size`, `configure_workspace`) in which `run` leaves each row's inverse RMS
/// (what a backward pass needs; CPU runs fill it, CUDA runs leave it as it is).
#[derive(Object)]
#[ffi_type(key = "rmsnorm.Runner", final)]
#[repr(C)]
pub struct Runner {
    /// The `[hidden]` weight.
    pub weight: Tensor,
    /// The epsilon added to the mean square.
    pub eps: f64,
    /// The configured workspace: a 1-D uint8 tensor.
    #[ffi(skip)]
    workspace: Mutex<Option<Tensor>>,
}

#[ffi_methods]
impl Runner {
    /// A runner for `weight` (1-D, float32, float16 or bfloat16) and `eps`.
    #[ffi(init)]
    pub fn new(weight: Tensor, eps: f64) -> Result<Self> {
        check_eps(eps)?;
        weight.check("weight").ndim(1)?.contiguous()?;
        dispatch_dtype!(weight.dtype(), "weight", [f32, f16, bf16], |T| Ok(()))?;
        Ok(Runner {
            weight,
            eps,
            workspace: Mutex::new(None),
        })
    }

    /// The workspace bytes a run over `rows` rows needs: one float32 per row.
    pub fn get_workspace_size(&self, rows: i64) -> Result<i64> {
        if rows < 0 {
            bail!(ValueError, "`rows` must be non-negative, got {rows}");
        }
        rows.checked_mul(4)
            .ok_or_else(|| tvm_ffi::Error::value_error(format!("`rows` {rows} is too large")))
    }

    /// Uses `buffer` (a contiguous 1-D uint8 tensor on the weight's device) as the workspace,
    /// replacing the previous one.
    pub fn configure_workspace(&self, buffer: Tensor) -> Result<()> {
        buffer
            .check("buffer")
            .ndim(1)?
            .dtype::<u8>()?
            .device(self.weight.device())?
            .contiguous()?;
        *self.workspace.lock().unwrap_or_else(|p| p.into_inner()) = Some(buffer);
        Ok(())
    }

    /// The configured workspace's size in bytes (0 when none is configured).
    pub fn workspace_size(&self) -> i64 {
        let workspace = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
        workspace.as_ref().map_or(0, |w| w.numel() as i64)
    }

    /// `out = rmsnorm(x) * weight` as [`rmsnorm`] computes it; on the CPU each row's inverse
    /// RMS is written to the workspace, which must hold `get_workspace_size(rows)` bytes.
    pub fn run(&self, out: TensorView, x: TensorView) -> Result<()> {
        let workspace = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
        let Some(buffer) = workspace.as_ref() else {
            bail!(
                RuntimeError,
                "Runner.run: no workspace; call configure_workspace(buffer) with \
                 get_workspace_size(rows) bytes first"
            );
        };
        let rows = layout::rows(&x, "x", false)?.rows;
        let needed = self.get_workspace_size(rows as i64)? as usize;
        if buffer.numel() < needed {
            bail!(
                ValueError,
                "Runner.run: the workspace has {} bytes, {rows} rows need {needed}",
                buffer.numel()
            );
        }
        if on_cuda(&x)? {
            return rmsnorm_impl(
                out,
                x,
                self.weight.view(),
                self.eps,
                Default::default(),
                None,
            );
        }
        // SAFETY: the workspace is only referenced here while the lock is held, and is a
        // contiguous uint8 CPU buffer of at least `needed` bytes (checked).
        let bytes = unsafe { buffer.as_mut_bytes()? };
        let mut inv_rms = vec![0f32; rows];
        rmsnorm_impl(
            out,
            x,
            self.weight.view(),
            self.eps,
            Default::default(),
            Some(&mut inv_rms),
        )?;
        for (slot, value) in bytes.chunks_exact_mut(4).zip(&inv_rms) {
            slot.copy_from_slice(&value.to_ne_bytes());
        }
        Ok(())
    }

    /// The inverse RMS of the first `rows` rows of the last CPU run, read from the workspace
    /// (a new float32 tensor).
    pub fn inv_rms(&self, rows: i64) -> Result<Tensor> {
        let needed = self.get_workspace_size(rows)? as usize;
        let workspace = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
        let Some(buffer) = workspace.as_ref() else {
            bail!(RuntimeError, "Runner.inv_rms: no workspace is configured");
        };
        let bytes = buffer.check("workspace").cpu()?.as_bytes()?;
        if bytes.len() < needed {
            bail!(
                ValueError,
                "Runner.inv_rms: the workspace holds fewer than {rows} rows"
            );
        }
        let values: Vec<f32> = bytes[..needed]
            .chunks_exact(4)
            .map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Tensor::from_vec(values, &[rows])
    }
}
