//! The CPU implementation: the reference semantics, computed in float32 whatever the storage
//! dtype (as FlashInfer's kernels do).
use tvm_ffi::half::{bf16, f16};
use tvm_ffi::{Element, Error, Result, TensorView};

use crate::layout::Rows;

/// A storage dtype the ops compute in float32.
pub trait Float: Element {
    /// The value in float32.
    fn to_f32(self) -> f32;
    /// `value` rounded to this type (to nearest even).
    fn from_f32(value: f32) -> Self;
}

impl Float for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(value: f32) -> f32 {
        value
    }
}

impl Float for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_f32(value: f32) -> f16 {
        f16::from_f32(value)
    }
}

impl Float for bf16 {
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    fn from_f32(value: f32) -> bf16 {
        bf16::from_f32(value)
    }
}

/// `1 / sqrt(mean(row^2) + eps)`, accumulated in float32.
pub fn inv_rms<T: Float>(row: &[T], eps: f32) -> f32 {
    let sum: f32 = row.iter().map(|v| v.to_f32() * v.to_f32()).sum();
    1.0 / (sum / row.len() as f32 + eps).sqrt()
}

/// The address of row `r` of an operand checked by [`crate::layout::rows`], checked to be
/// aligned for `T`.
fn row_ptr<T: Float>(view: &TensorView<'_>, layout: &Rows, r: usize, name: &str) -> Result<*mut T> {
    let base = view.first_element_ptr()?.cast::<T>();
    if !base.is_aligned() {
        return Err(Error::value_error(format!(
            "`{name}` must be aligned to its element size ({} bytes)",
            std::mem::align_of::<T>()
        )));
    }
    // SAFETY: the view's memory covers every element its shape and strides address (the
    // invariant of a TensorView); row `r < rows` starts `r * row_stride` elements in.
    Ok(unsafe { base.add(r * layout.row_stride) })
}

/// `out = x / sqrt(mean(x^2) + eps) * weight`, row by row; `inv_rms_out` (if given) receives
/// each row's `1 / sqrt(mean(x^2) + eps)`.
///
/// # Safety
/// `out` must not overlap `x` or `weight`, its rows must not overlap one another, and no other
/// reference to its memory may be used during the call. All three are CPU tensors checked by
/// [`crate::layout`] with dtype `T`.
pub unsafe fn rmsnorm<T: Float>(
    out: &TensorView<'_>,
    out_rows: &Rows,
    x: &TensorView<'_>,
    x_rows: &Rows,
    weight: &[T],
    eps: f32,
    mut inv_rms_out: Option<&mut [f32]>,
) -> Result<()> {
    if x_rows.hidden == 0 {
        // Nothing to normalise (and an empty tensor's data pointer may be null).
        return Ok(());
    }
    for r in 0..x_rows.rows {
        let (xp, op) = (
            row_ptr::<T>(x, x_rows, r, "x")?,
            row_ptr::<T>(out, out_rows, r, "out")?,
        );
        // SAFETY: rows of `hidden` aligned elements inside their tensors (see `row_ptr`); the
        // out row overlaps nothing else read or written here (the caller's contract).
        let (xs, os) = unsafe {
            (
                std::slice::from_raw_parts(xp.cast_const(), x_rows.hidden),
                std::slice::from_raw_parts_mut(op, x_rows.hidden),
            )
        };
        let scale = inv_rms(xs, eps);
        if let Some(slots) = inv_rms_out.as_deref_mut() {
            slots[r] = scale;
        }
        for ((o, &v), &w) in os.iter_mut().zip(xs).zip(weight) {
            *o = T::from_f32(v.to_f32() * scale * w.to_f32());
        }
    }
    Ok(())
}

/// `residual += x` (rounded to `T`), then `x = rmsnorm(residual) * weight`, row by row.
///
/// # Safety
/// `x` and `residual` must not overlap each other or `weight`, their rows must not overlap, and
/// no other reference to their memory may be used during the call. CPU tensors checked by
/// [`crate::layout`] with dtype `T`.
pub unsafe fn fused_add_rmsnorm<T: Float>(
    x: &TensorView<'_>,
    x_rows: &Rows,
    residual: &TensorView<'_>,
    residual_rows: &Rows,
    weight: &[T],
    eps: f32,
) -> Result<()> {
    if x_rows.hidden == 0 {
        return Ok(());
    }
    for r in 0..x_rows.rows {
        let xp = row_ptr::<T>(x, x_rows, r, "x")?;
        let rp = row_ptr::<T>(residual, residual_rows, r, "residual")?;
        // SAFETY: as in `rmsnorm`: two disjoint rows, each only referenced here.
        let (xs, rs) = unsafe {
            (
                std::slice::from_raw_parts_mut(xp, x_rows.hidden),
                std::slice::from_raw_parts_mut(rp, x_rows.hidden),
            )
        };
        for (r, &v) in rs.iter_mut().zip(xs.iter()) {
            *r = T::from_f32(r.to_f32() + v.to_f32());
        }
        let scale = inv_rms(rs, eps);
        for ((o, &v), &w) in xs.iter_mut().zip(rs.iter()).zip(weight) {
            *o = T::from_f32(v.to_f32() * scale * w.to_f32());
        }
    }
    Ok(())
}
