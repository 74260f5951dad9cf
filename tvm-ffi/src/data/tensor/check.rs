//! [`TensorCheck`]: argument checks whose errors name the argument.
use std::fmt;

use super::element::Element;
use super::layout::{byte_parts, host_accessible, slice_parts};
use super::view::TensorView;
use crate::base::error::{Error, Result};
use crate::base::value::{DataType, Device};

/// Checks of a tensor argument named `name`, made by [`TensorView::check`] or
/// [`Tensor::check`](super::Tensor::check). Each check returns the checker again or an error that names the argument
/// and says what was expected and what it got: a `TypeError` for a wrong dtype, a `ValueError`
/// for the rest.
///
/// ```
/// use tvm_ffi::{Device, Tensor};
/// let x = Tensor::from_vec(vec![0f32; 6], &[2, 3]).unwrap();
/// let xs = x.check("x").dtype::<f32>().unwrap().ndim(2).unwrap().dim(1, 3).unwrap()
///     .device(Device::cpu()).unwrap().contiguous().unwrap().as_slice::<f32>().unwrap();
/// assert_eq!(xs.len(), 6);
/// assert_eq!(x.check("x").shape(&[3, 2]).unwrap_err().message(), "`x` must have shape [3, 2], got [2, 3]");
/// assert_eq!(x.check("x").dtype::<i64>().unwrap_err().message(), "`x` must have dtype int64, got float32");
/// assert_eq!(x.check("x").ndim(1).unwrap_err().message(), "`x` must have 1 dimension, got 2 (shape [2, 3])");
/// ```
///
/// In a kernel, `?` after each step:
///
/// ```
/// # use tvm_ffi::{Result, TensorView};
/// fn add_one(x: TensorView, y: TensorView) -> Result<()> {
///     let xs = x.check("x").ndim(1)?.as_slice::<f32>()?;
///     let y = y.check("y").shape(x.shape())?.disjoint_from(&x, "x")?;
///     // SAFETY: `y` is disjoint from `x` (checked) and this is the only slice of `y`.
///     let ys = unsafe { y.as_mut_slice::<f32>()? };
///     for (out, value) in ys.iter_mut().zip(xs) {
///         *out = value + 1.0;
///     }
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy)]
pub struct TensorCheck<'a, 'n> {
    pub(super) view: TensorView<'a>,
    pub(super) name: &'n str,
}

impl<'a, 'n> TensorCheck<'a, 'n> {
    fn fail(&self, kind: &str, requirement: fmt::Arguments<'_>) -> Error {
        Error::new(kind, format!("`{}` must {requirement}", self.name))
    }

    /// The element type is `T`'s.
    pub fn dtype<T: Element>(self) -> Result<Self> {
        self.dtype_is(T::DTYPE)
    }

    /// The element type is `dtype`.
    pub fn dtype_is(self, dtype: DataType) -> Result<Self> {
        if self.view.dtype() == dtype {
            Ok(self)
        } else {
            Err(self.fail(
                "TypeError",
                format_args!("have dtype {dtype}, got {}", self.view.dtype()),
            ))
        }
    }

    /// The tensor has `ndim` dimensions.
    pub fn ndim(self, ndim: usize) -> Result<Self> {
        if self.view.ndim() == ndim {
            Ok(self)
        } else {
            let plural = if ndim == 1 { "" } else { "s" };
            Err(self.fail(
                "ValueError",
                format_args!(
                    "have {ndim} dimension{plural}, got {} (shape {:?})",
                    self.view.ndim(),
                    self.view.shape()
                ),
            ))
        }
    }

    /// The shape is exactly `shape`.
    pub fn shape(self, shape: &[i64]) -> Result<Self> {
        if self.view.shape() == shape {
            Ok(self)
        } else {
            Err(self.fail(
                "ValueError",
                format_args!("have shape {shape:?}, got {:?}", self.view.shape()),
            ))
        }
    }

    /// Dimension `axis` has extent `size`.
    pub fn dim(self, axis: usize, size: i64) -> Result<Self> {
        match self.view.shape().get(axis) {
            Some(&extent) if extent == size => Ok(self),
            Some(&extent) => Err(self.fail(
                "ValueError",
                format_args!(
                    "have size {size} in dimension {axis}, got {extent} (shape {:?})",
                    self.view.shape()
                ),
            )),
            None => Err(self.fail(
                "ValueError",
                format_args!(
                    "have at least {} dimensions, got {} (shape {:?})",
                    axis + 1,
                    self.view.ndim(),
                    self.view.shape()
                ),
            )),
        }
    }

    /// The data is in host memory (CPU, or CUDA/ROCm pinned host memory).
    pub fn cpu(self) -> Result<Self> {
        if host_accessible(self.view.device()) {
            Ok(self)
        } else {
            Err(self.fail(
                "ValueError",
                format_args!("be a CPU tensor, got a tensor on {}", self.view.device()),
            ))
        }
    }

    /// The data is on a device of type `device_type` (a `kDL*` constant such as
    /// [`sys::kDLCUDA`](crate::sys::kDLCUDA)), any device id.
    pub fn device_type(self, device_type: i32) -> Result<Self> {
        if self.view.device().device_type() == device_type {
            Ok(self)
        } else {
            let wanted = Device::new(device_type, 0).type_name();
            Err(self.fail(
                "ValueError",
                format_args!(
                    "be a {wanted} tensor, got a tensor on {}",
                    self.view.device()
                ),
            ))
        }
    }

    /// The data is on `device`.
    pub fn device(self, device: Device) -> Result<Self> {
        if self.view.device() == device {
            Ok(self)
        } else {
            Err(self.fail(
                "ValueError",
                format_args!("be on {device}, got {}", self.view.device()),
            ))
        }
    }

    /// The elements are stored compactly in row-major order.
    pub fn contiguous(self) -> Result<Self> {
        if self.view.is_contiguous() {
            Ok(self)
        } else {
            Err(self.fail(
                "ValueError",
                format_args!(
                    "be contiguous, got strides {:?} for shape {:?}",
                    self.view.strides(),
                    self.view.shape()
                ),
            ))
        }
    }

    /// The memory does not overlap that of `other` (argument `other_name`); see
    /// [`TensorView::overlaps`]. Checked before writing one argument while reading another.
    pub fn disjoint_from(self, other: &TensorView<'_>, other_name: &str) -> Result<Self> {
        if self.view.overlaps(other) {
            Err(self.fail(
                "ValueError",
                format_args!("not overlap `{other_name}` in memory"),
            ))
        } else {
            Ok(self)
        }
    }

    /// The checked view.
    #[inline]
    pub fn view(self) -> TensorView<'a> {
        self.view
    }

    /// [`TensorView::as_slice`], with the argument's name in the error.
    #[inline]
    pub fn as_slice<T: Element>(self) -> Result<&'a [T]> {
        let (first, len) = slice_parts::<T>(self.view.dl, Some(self.name))?;
        // SAFETY: as in `TensorView::as_slice`.
        Ok(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
    }

    /// [`TensorView::as_bytes`], with the argument's name in the error.
    #[inline]
    pub fn as_bytes(self) -> Result<&'a [u8]> {
        let (first, len) = byte_parts(self.view.dl, Some(self.name))?;
        // SAFETY: as in `TensorView::as_bytes`.
        Ok(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
    }

    /// [`TensorView::as_mut_bytes`], with the argument's name in the error.
    ///
    /// # Safety
    /// As for [`TensorView::as_mut_slice`].
    #[inline]
    pub unsafe fn as_mut_bytes(self) -> Result<&'a mut [u8]> {
        let (first, len) = byte_parts(self.view.dl, Some(self.name))?;
        // SAFETY: layout as in `as_bytes`; exclusivity is the caller's promise.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// [`TensorView::as_mut_slice`], with the argument's name in the error.
    ///
    /// # Safety
    /// As for [`TensorView::as_mut_slice`].
    #[inline]
    pub unsafe fn as_mut_slice<T: Element>(self) -> Result<&'a mut [T]> {
        let (first, len) = slice_parts::<T>(self.view.dl, Some(self.name))?;
        // SAFETY: layout as in `as_slice`; exclusivity is the caller's promise.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }
}

impl fmt::Debug for TensorCheck<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorCheck(`{}`: {:?})", self.name, self.view)
    }
}

impl<'a> TensorView<'a> {
    /// Starts checking this tensor as argument `name`: every failed check is an error that
    /// names the argument and what was expected (see [`TensorCheck`]).
    #[inline]
    pub fn check<'n>(self, name: &'n str) -> TensorCheck<'a, 'n> {
        TensorCheck { view: self, name }
    }
}
