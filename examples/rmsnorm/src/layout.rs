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
