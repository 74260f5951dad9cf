//! Strided views of a [`Tensor`]: new shapes and strides over the same memory, without a copy
//! (`TVMFFITensorCreateUnsafeView`, C++ `Tensor::as_strided`), with every address checked.
use super::layout::{direct_address, element_span};
use super::owned::{tensor_object_from_handle, Tensor};
use crate::abi::sys::{self, DLTensor};
use crate::base::error::{Error, Result};

impl Tensor {
    /// A view of this tensor's memory with its own `shape` and `strides` (in elements), whose
    /// first element is element `element_offset` of this tensor's memory (counted from this
    /// tensor's first element, in elements): no copy, the view keeps this tensor alive, and
    /// writes through one are seen through the other (C++ `Tensor::as_strided`, PyTorch
    /// `as_strided`).
    ///
    /// Checked, unlike the runtime's unsafe view: every element the view reaches must lie
    /// between the lowest and the highest element this tensor reaches (a `ValueError`
    /// otherwise), all with checked arithmetic. Views of packed sub-byte dtypes (`int4`, ...)
    /// are refused, as their elements have no address of their own.
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let x = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[3, 4]).unwrap();
    /// let column = x.as_strided(&[3], &[4], 1).unwrap();     // x[:, 1]
    /// assert_eq!(column.shape(), &[3]);
    /// assert_eq!(&*column.strides(), &[4]);
    /// assert!(!column.is_contiguous());
    /// let err = x.as_strided(&[3], &[4], 4).unwrap_err();    // x[1:, 0] and one row past the end
    /// assert_eq!(
    ///     err.message(),
    ///     "Tensor::as_strided: the view (shape [3], strides [4], element offset 4) reaches \
    ///      elements 4..=12 of a tensor whose elements are 0..=11"
    /// );
    /// ```
    pub fn as_strided(
        &self,
        shape: &[i64],
        strides: &[i64],
        element_offset: i64,
    ) -> Result<Tensor> {
        let fail = |message: String| Error::value_error(format!("Tensor::as_strided: {message}"));
        if shape.len() != strides.len() {
            return Err(fail(format!(
                "shape {shape:?} has {} dimensions but strides {strides:?} has {}",
                shape.len(),
                strides.len()
            )));
        }
        let ndim = i32::try_from(shape.len())
            .map_err(|_| fail("too many dimensions for a DLTensor".into()))?;
        let dtype = self.dtype();
        if dtype.size_in_bits() % 8 != 0 {
            return Err(fail(format!(
                "views of {dtype} are not supported: its elements do not start at byte boundaries"
            )));
        }
        let described = || {
            format!(
                "the view (shape {shape:?}, strides {strides:?}, element offset {element_offset})"
            )
        };
        let view_span = element_span(shape, strides)
            .map_err(|()| fail(format!("{} has an invalid shape or overflows", described())))?;
        let source_strides = self.strides();
        // The source is a valid tensor: its span cannot overflow, but a hostile one is refused.
        let source_span = element_span(self.shape(), &source_strides)
            .map_err(|()| fail("the tensor has an invalid shape or strides".into()))?;
        let offset = i128::from(element_offset);
        match (view_span, source_span) {
            (Some((low, high)), Some((source_low, source_high))) => {
                let (first, last) = (offset + low, offset + high);
                if first < source_low || last > source_high {
                    return Err(fail(format!(
                        "{} reaches elements {first}..={last} of a tensor whose elements are \
                         {source_low}..={source_high}",
                        described()
                    )));
                }
            }
            (Some((low, high)), None) => {
                return Err(fail(format!(
                    "{} reaches elements {}..={} of a tensor with no elements",
                    described(),
                    offset + low,
                    offset + high
                )))
            }
            // An empty view reaches nothing; its start stays within (or just past) the source.
            (None, Some((source_low, source_high))) => {
                if offset < source_low || offset > source_high + 1 {
                    return Err(fail(format!(
                        "{} starts outside the elements {source_low}..={source_high} of the tensor",
                        described()
                    )));
                }
            }
            (None, None) => {
                if offset != 0 {
                    return Err(fail(format!(
                        "{} starts outside a tensor with no elements",
                        described()
                    )));
                }
            }
        }
        // Bytes from the data pointer to the view's first element: checked, and i128 holds any
        // product of an i64 offset and an element size.
        let element_bytes = dtype.size_in_bytes() as i128;
        let dl = self.as_dltensor();
        let first_byte = i128::from(dl.byte_offset) + offset * element_bytes;
        let (data, byte_offset) = if direct_address(self.device()) {
            // As C++ does: fold the offset into the address (a negative offset is fine there).
            let address = dl.data as usize as i128 + first_byte;
            if address < 0 || address > usize::MAX as i128 {
                return Err(fail(format!("{} leaves the address space", described())));
            }
            let delta = isize::try_from(first_byte)
                .map_err(|_| fail(format!("{} leaves the address space", described())))?;
            // `wrapping_offset` keeps the source's provenance; the range was checked above.
            ((dl.data as *mut u8).wrapping_offset(delta).cast(), 0u64)
        } else {
            // The data pointer is a handle: the offset must stay in `byte_offset`.
            let byte_offset = u64::try_from(first_byte)
                .map_err(|_| fail(format!("{} starts before the data handle", described())))?;
            (dl.data, byte_offset)
        };
        let mut shape_copy = shape.to_vec();
        let mut strides_copy = strides.to_vec();
        let prototype = DLTensor {
            data,
            device: dl.device,
            ndim,
            dtype: dl.dtype,
            shape: shape_copy.as_mut_ptr(),
            strides: strides_copy.as_mut_ptr(),
            byte_offset,
        };
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: `self` is a live tensor object; the prototype's shape and strides have `ndim`
        // entries and live across the call (the runtime copies them); its data lies within the
        // memory `self` reaches (checked above), which the view keeps alive by holding `self`.
        let rc = unsafe {
            sys::TVMFFITensorCreateUnsafeView(
                self.as_object_ref().as_raw().as_ptr() as sys::TVMFFIObjectHandle,
                &prototype,
                &mut out,
            )
        };
        if rc != 0 {
            return Err(Error::from_return_code(rc));
        }
        // SAFETY: on success `out` is a new tensor object with one reference, now ours.
        Ok(Tensor(unsafe { tensor_object_from_handle(out)? }))
    }

    /// The elements `start .. start + length` of dimension `axis`, as a view (PyTorch
    /// `narrow`, NumPy `x[.., start:start + length, ..]`).
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let x = Tensor::from_vec((0..12).map(|v| v as i32).collect(), &[3, 4]).unwrap();
    /// let middle = x.narrow(1, 1, 2).unwrap();   // x[:, 1:3]
    /// assert_eq!(middle.shape(), &[3, 2]);
    /// assert_eq!(x.narrow(0, 1, 2).unwrap().as_slice::<i32>().unwrap(), &[4, 5, 6, 7, 8, 9, 10, 11]);
    /// let err = x.narrow(0, 2, 2).unwrap_err();
    /// assert_eq!(err.message(), "Tensor::narrow: elements 2..4 of dimension 0 are out of range for extent 3");
    /// ```
    pub fn narrow(&self, axis: usize, start: i64, length: i64) -> Result<Tensor> {
        let shape = self.shape();
        let extent = *shape
            .get(axis)
            .ok_or_else(|| axis_error("narrow", axis, shape))?;
        let end = start.checked_add(length);
        if start < 0 || length < 0 || end.map_or(true, |end| end > extent) {
            return Err(Error::new(
                "IndexError",
                format!(
                    "Tensor::narrow: elements {start}..{} of dimension {axis} are out of range \
                     for extent {extent}",
                    end.map_or_else(|| "overflow".to_string(), |end| end.to_string())
                ),
            ));
        }
        let strides = self.strides();
        let mut new_shape = shape.to_vec();
        new_shape[axis] = length;
        // Inside the tensor (checked above), so the product cannot overflow.
        let offset = start
            .checked_mul(strides[axis])
            .ok_or_else(|| Error::value_error("Tensor::narrow: the offset overflows"))?;
        self.as_strided(&new_shape, &strides, offset)
    }

    /// The view with dimensions `axis0` and `axis1` swapped (PyTorch `transpose`; for a 2-D
    /// tensor, the matrix transpose `x.T`).
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    /// let t = x.transpose(0, 1).unwrap();
    /// assert_eq!((t.shape(), &*t.strides()), (&[3i64, 2][..], &[1i64, 3][..]));
    /// assert_eq!(t.data_ptr(), x.data_ptr()); // the same memory
    /// ```
    pub fn transpose(&self, axis0: usize, axis1: usize) -> Result<Tensor> {
        let shape = self.shape();
        for axis in [axis0, axis1] {
            if axis >= shape.len() {
                return Err(axis_error("transpose", axis, shape));
            }
        }
        let mut new_shape = shape.to_vec();
        let mut strides = self.strides().into_owned();
        new_shape.swap(axis0, axis1);
        strides.swap(axis0, axis1);
        self.as_strided(&new_shape, &strides, 0)
    }
}

fn axis_error(function: &str, axis: usize, shape: &[i64]) -> Error {
    Error::new(
        "IndexError",
        format!(
            "Tensor::{function}: dimension {axis} is out of range for a tensor of {} \
             dimensions (shape {shape:?})",
            shape.len()
        ),
    )
}
