//! The argument checks shared by the CPU and CUDA paths: which tensors the ops accept, refused
//! otherwise with errors naming the argument.
use tvm_ffi::{bail, DataType, Result, TensorView};

/// A checked `[rows, hidden]` operand: rows `row_stride` elements apart, each row contiguous.
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// Number of rows.
    pub rows: usize,
    /// Elements per row.
    pub hidden: usize,
    /// Elements between the starts of consecutive rows.
    pub row_stride: usize,
}

/// Checks that `x` (argument `name`) is a 2-D tensor of rows that are each contiguous, with
/// non-negative row stride; a written operand (`written`) must also have rows that do not
/// overlap one another.
pub fn rows(x: &TensorView<'_>, name: &str, written: bool) -> Result<Rows> {
    let x = x.check(name).ndim(2)?.view();
    let (rows, hidden) = (x.shape()[0], x.shape()[1]);
    if rows == 0 || hidden == 0 {
        // No element, no memory addressed: exporters put anything in the strides of an empty
        // array (NumPy 2.3+ exports zeros), as C++'s IsContiguous accepts.
        return Ok(Rows {
            rows: rows as usize,
            hidden: hidden as usize,
            row_stride: hidden as usize,
        });
    }
    let strides = x.strides();
    if hidden > 1 && strides[1] != 1 {
        bail!(
            ValueError,
            "`{name}` must have contiguous rows (stride 1 along the last axis), got strides \
             {strides:?} for shape {:?}",
            x.shape()
        );
    }
    let min_stride: i64 = if written { hidden } else { 0 };
    if rows > 1 && strides[0] < min_stride {
        bail!(
            ValueError,
            "`{name}` must have a row stride of at least {min_stride}{}, got strides {strides:?} \
             for shape {:?}",
            if written {
                " (rows it writes must not overlap)"
            } else {
                ""
            },
            x.shape()
        );
    }
    Ok(Rows {
        rows: rows as usize,
        hidden: hidden as usize,
        row_stride: if rows > 1 {
            strides[0] as usize
        } else {
            hidden as usize
        },
    })
}

/// Checks `weight` against `x`: a contiguous 1-D tensor of `hidden` elements of the dtype and
/// device of `x`.
pub fn weight(weight: &TensorView<'_>, x: &TensorView<'_>, hidden: usize) -> Result<()> {
    weight
        .check("weight")
        .ndim(1)?
        .dim(0, hidden as i64)?
        .dtype_is(x.dtype())?
        .device(x.device())?
        .contiguous()?;
    Ok(())
}

/// The dtypes the ops accept.
pub const DTYPES: [DataType; 3] = [DataType::FLOAT32, DataType::FLOAT16, DataType::BFLOAT16];

#[cfg(test)]
mod tests {
    use super::*;
    use tvm_ffi::sys::DLTensor;
    use tvm_ffi::Device;

    /// NumPy 2.3+ exports an empty array with zero strides (seen on the GPU machine): an empty
    /// operand addresses nothing, so it is accepted whatever its strides.
    #[test]
    fn empty_operands_are_accepted_whatever_their_strides() {
        for (mut shape, mut strides) in [([0i64, 8], [0i64, 0]), ([3, 0], [0, 0])] {
            let dl = DLTensor {
                data: std::ptr::null_mut(),
                device: Device::cpu().0,
                ndim: 2,
                dtype: DataType::FLOAT32.0,
                shape: shape.as_mut_ptr(),
                strides: strides.as_mut_ptr(),
                byte_offset: 0,
            };
            // SAFETY: shape and strides hold 2 entries that outlive the view; it has no
            // element, so no data is addressed.
            let view = unsafe { TensorView::from_dltensor(&dl) };
            let checked = rows(&view, "x", true).expect("an empty operand is accepted");
            assert_eq!(
                (checked.rows, checked.hidden),
                (shape[0] as usize, shape[1] as usize)
            );
            assert_eq!(checked.row_stride, shape[1] as usize);
        }
    }
}
