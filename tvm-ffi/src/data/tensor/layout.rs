//! `DLTensor` layout helpers shared by every tensor type: shape, strides, contiguity, the
//! checked address computation behind typed slices, and how messages describe a tensor.
use std::fmt::Write as _;
use std::ptr::NonNull;

use super::element::{assert_element_size, Element};
use crate::abi::sys::{self, DLTensor};
use crate::base::error::{Error, Result};
use crate::base::value::{DataType, Device};

/// The shape array of a DLTensor (empty for a scalar).
pub(super) fn shape_of(dl: &DLTensor) -> &[i64] {
    if dl.ndim <= 0 || dl.shape.is_null() {
        &[]
    } else {
        // SAFETY: every way of obtaining a `&DLTensor` here (runtime objects, call arguments,
        // `TensorView::from_dltensor`'s contract) guarantees `ndim` valid shape entries for as
        // long as the DLTensor is borrowed.
        unsafe { std::slice::from_raw_parts(dl.shape, dl.ndim as usize) }
    }
}

/// The strides array, or `None` when the DLTensor leaves it null (compact row-major).
pub(super) fn strides_of(dl: &DLTensor) -> Option<&[i64]> {
    if dl.ndim <= 0 {
        Some(&[])
    } else if dl.strides.is_null() {
        None
    } else {
        // SAFETY: as for the shape: a non-null strides array has `ndim` entries.
        Some(unsafe { std::slice::from_raw_parts(dl.strides, dl.ndim as usize) })
    }
}

/// Row-major strides of a compact tensor of `shape` (C++ `FillStridesFromShape`).
pub(super) fn compact_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0; shape.len()];
    let mut next = 1i64;
    for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
        *stride = next;
        next = next.wrapping_mul(extent);
    }
    strides
}

/// C++ `IsContiguous`: null strides, an empty tensor, or row-major strides (extent-1 dimensions
/// may have any stride, as PyTorch normalises them).
pub(super) fn is_contiguous(dl: &DLTensor) -> bool {
    let Some(strides) = strides_of(dl) else {
        return true;
    };
    let shape = shape_of(dl);
    if shape.contains(&0) {
        return true;
    }
    let mut expected = 1i64;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        if extent == 1 {
            continue;
        }
        if stride != expected {
            return false;
        }
        expected = expected.wrapping_mul(extent);
    }
    true
}

/// Number of elements, or `None` for a negative extent or an overflow.
pub(super) fn checked_numel(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &extent| {
        usize::try_from(extent)
            .ok()
            .and_then(|e| acc.checked_mul(e))
    })
}

/// Bytes of `numel` packed elements of `dtype` (C++ `GetDataSize`), or `None` on overflow.
pub(super) fn data_size(numel: usize, dtype: DataType) -> Option<usize> {
    let bits = numel
        .checked_mul(dtype.bits() as usize)?
        .checked_mul(dtype.lanes() as usize)?;
    Some(bits.div_ceil(8))
}

/// Devices whose memory the CPU can address directly (so typed slices make sense).
pub(super) fn host_accessible(device: Device) -> bool {
    matches!(
        device.device_type(),
        sys::kDLCPU | sys::kDLCUDAHost | sys::kDLROCMHost
    )
}

/// `float32 on cpu:0`, or `non-contiguous float32 on cpu:0 (shape [5], strides [2])`: how an
/// error message names the tensor it got.
pub(super) fn describe(dl: &DLTensor) -> String {
    let contiguous = is_contiguous(dl);
    let mut text = String::new();
    if !contiguous {
        text.push_str("non-contiguous ");
    }
    let _ = write!(
        text,
        "{} on {}",
        DataType::from(dl.dtype),
        Device::from(dl.device)
    );
    if !contiguous {
        let strides = strides_of(dl).unwrap_or_default();
        let _ = write!(text, " (shape {:?}, strides {:?})", shape_of(dl), strides);
    }
    text
}

/// The end of the user address space: no buffer a tensor may describe reaches beyond it.
/// (x86-64: the lower half of 57-bit virtual addresses; AArch64: 52-bit virtual addresses.)
#[cfg(target_arch = "x86_64")]
const MAX_USER_ADDRESS: usize = 1 << 56;
#[cfg(target_arch = "aarch64")]
const MAX_USER_ADDRESS: usize = 1 << 52;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const MAX_USER_ADDRESS: usize = isize::MAX as usize;

/// Validates typed host access to all elements of `dl` and returns the first element and the
/// element count. `name` is the argument name used in messages, if any.
pub(super) fn slice_parts<T: Element>(
    dl: &DLTensor,
    name: Option<&str>,
) -> Result<(NonNull<T>, usize)> {
    assert_element_size::<T>();
    let dtype_ok = dl.dtype == T::DTYPE.0;
    if !(dtype_ok && host_accessible(Device::from(dl.device)) && is_contiguous(dl)) {
        return Err(access_error::<T>(dl, name, dtype_ok));
    }
    let subject = |what: &str| subject(name, what);
    let shape = shape_of(dl);
    let len = checked_numel(shape)
        .ok_or_else(|| Error::value_error(subject(&format!("has an invalid shape {shape:?}"))))?;
    if len == 0 {
        // No element is ever read: the data pointer of an empty tensor may be anything.
        return Ok((NonNull::dangling(), 0));
    }
    let bytes = match len.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => bytes,
        _ => return Err(Error::value_error(subject("is too large to address"))),
    };
    let align = std::mem::align_of::<T>();
    let first = host_range(
        dl,
        name,
        bytes,
        align,
        T::DTYPE,
        format_args!("{len} elements"),
    )?;
    Ok((first.cast(), len))
}

/// `` `name` what `` or `the tensor what`: the subject of a message.
fn subject(name: Option<&str>, what: &str) -> String {
    match name {
        Some(name) => format!("`{name}` {what}"),
        None => format!("the tensor {what}"),
    }
}

/// Validates byte access to all elements of `dl`, whatever the dtype (packed sub-byte types
/// included), and returns the first byte and the byte count (C++ `GetDataSize`).
pub(super) fn byte_parts(dl: &DLTensor, name: Option<&str>) -> Result<(NonNull<u8>, usize)> {
    if !(host_accessible(Device::from(dl.device)) && is_contiguous(dl)) {
        let got = describe(dl);
        return Err(Error::value_error(match name {
            Some(name) => format!("`{name}` must be a contiguous CPU tensor, got {got}"),
            None => format!("expected a contiguous CPU tensor, got {got}"),
        }));
    }
    let shape = shape_of(dl);
    let dtype = DataType::from(dl.dtype);
    let numel = checked_numel(shape).ok_or_else(|| {
        Error::value_error(subject(name, &format!("has an invalid shape {shape:?}")))
    })?;
    let bytes = match data_size(numel, dtype) {
        Some(bytes) if bytes <= isize::MAX as usize => bytes,
        _ => return Err(Error::value_error(subject(name, "is too large to address"))),
    };
    if bytes == 0 {
        return Ok((NonNull::dangling(), 0));
    }
    let first = host_range(
        dl,
        name,
        bytes,
        1,
        dtype,
        format_args!("{bytes} bytes of data"),
    )?;
    Ok((first, bytes))
}

/// The first byte of the `bytes` bytes at `data + byte_offset`, after checking that they lie in
/// the address space and that the start is aligned to `align`.
fn host_range(
    dl: &DLTensor,
    name: Option<&str>,
    bytes: usize,
    align: usize,
    dtype: DataType,
    count: std::fmt::Arguments<'_>,
) -> Result<NonNull<u8>> {
    let subject = |what: &str| subject(name, what);
    let Some(base) = NonNull::new(dl.data as *mut u8) else {
        return Err(Error::value_error(subject(&format!(
            "has {count} but a null data pointer"
        ))));
    };
    // Every address is computed with checked arithmetic and the whole range must lie in the
    // address space: a hostile byte offset (2**62, or 2**64 - 4 that would wrap around to
    // before the buffer) is an error, never an access.
    let start = usize::try_from(dl.byte_offset)
        .ok()
        .and_then(|offset| (base.as_ptr() as usize).checked_add(offset));
    let in_address_space = start
        .and_then(|start| start.checked_add(bytes))
        .is_some_and(|end| end <= MAX_USER_ADDRESS);
    let Some(start) = start.filter(|_| in_address_space) else {
        return Err(Error::value_error(subject(&format!(
            "addresses bytes beyond the address space (data {:p}, byte offset {}, {bytes} bytes)",
            dl.data, dl.byte_offset
        ))));
    };
    // Formed from the checked address, so the pointer keeps the buffer's provenance.
    let first = base.as_ptr().wrapping_add(start - base.as_ptr() as usize);
    if start % align != 0 {
        return Err(Error::value_error(subject(&format!(
            "has data at {first:p}, not aligned to the {align} bytes {dtype} needs"
        ))));
    }
    // Not null: `start` is at least the non-null base address and did not wrap.
    NonNull::new(first).ok_or_else(|| Error::value_error(subject("has an invalid data address")))
}

#[cold]
#[inline(never)]
pub(super) fn access_error<T: Element>(dl: &DLTensor, name: Option<&str>, dtype_ok: bool) -> Error {
    let wanted = format!("a contiguous CPU tensor of dtype {}", T::DTYPE);
    let got = describe(dl);
    let message = match name {
        Some(name) => format!("`{name}` must be {wanted}, got {got}"),
        None => format!("expected {wanted}, got {got}"),
    };
    // A wrong element type is a type error; a wrong place or layout of the right type is a
    // value error, as Python classifies a wrong type and a wrong value.
    Error::new(if dtype_ok { "ValueError" } else { "TypeError" }, message)
}

/// The address range `[start, end)` covered by the elements of `dl`, or `None` when it has no
/// element. Conservative for strided tensors: the range may contain bytes no element uses. A
/// tensor whose extents and strides overflow the arithmetic covers everything (`i128::MIN ..
/// i128::MAX`), so a hostile tensor never passes an overlap check.
pub(super) fn byte_span(dl: &DLTensor) -> Option<(i128, i128)> {
    let shape = shape_of(dl);
    if shape.iter().any(|&extent| extent <= 0) {
        return None;
    }
    let everything = Some((i128::MIN, i128::MAX));
    let strides: Vec<i128> = match strides_of(dl) {
        Some(s) => s.iter().map(|&v| v as i128).collect(),
        None => {
            // Row-major strides, computed without wrapping.
            let mut strides = vec![0i128; shape.len()];
            let mut next = 1i128;
            for (stride, &extent) in strides.iter_mut().zip(shape).rev() {
                *stride = next;
                next = match next.checked_mul(extent as i128) {
                    Some(n) => n,
                    None => return everything,
                };
            }
            strides
        }
    };
    let (mut low, mut high) = (0i128, 0i128);
    for (&extent, &stride) in shape.iter().zip(&strides) {
        let Some(reach) = (extent as i128 - 1).checked_mul(stride) else {
            return everything;
        };
        let sum = if reach >= 0 {
            high.checked_add(reach).map(|h| high = h)
        } else {
            low.checked_add(reach).map(|l| low = l)
        };
        if sum.is_none() {
            return everything;
        }
    }
    let element = (DataType::from(dl.dtype).size_in_bytes() as i128).max(1);
    let base = dl.data as usize as i128 + dl.byte_offset as i128;
    let start = low.checked_mul(element).and_then(|l| base.checked_add(l));
    let end = high
        .checked_add(1)
        .and_then(|h| h.checked_mul(element))
        .and_then(|h| base.checked_add(h));
    match (start, end) {
        (Some(start), Some(end)) => Some((start, end)),
        _ => everything,
    }
}

/// Whether two devices may share an address space (both host memory, or the same device).
pub(super) fn same_memory_space(a: Device, b: Device) -> bool {
    a == b || (host_accessible(a) && host_accessible(b))
}

/// The element offsets `(lowest, highest)` that a tensor of `shape` and `strides` (in
/// elements) reaches from its first element; `Ok(None)` when it has no element, `Err(())` when
/// an extent is negative or the arithmetic overflows.
pub(super) fn element_span(shape: &[i64], strides: &[i64]) -> Result<Option<(i128, i128)>, ()> {
    if shape.iter().any(|&extent| extent < 0) {
        return Err(());
    }
    if shape.contains(&0) {
        return Ok(None);
    }
    let (mut low, mut high) = (0i128, 0i128);
    for (&extent, &stride) in shape.iter().zip(strides) {
        // i64 * i64 fits in i128; only the sums can overflow.
        let reach = (i128::from(extent) - 1) * i128::from(stride);
        if reach >= 0 {
            high = high.checked_add(reach).ok_or(())?;
        } else {
            low = low.checked_add(reach).ok_or(())?;
        }
    }
    Ok(Some((low, high)))
}

/// Devices whose data pointer is an address, so that an offset can be folded into it (C++
/// `IsDirectAddressDevice`); on the others it is a handle and offsets stay in `byte_offset`.
pub(super) fn direct_address(device: Device) -> bool {
    let t = device.device_type();
    t <= sys::kDLCUDAHost || t == sys::kDLCUDAManaged || t == sys::kDLROCM || t == sys::kDLROCMHost
}

/// `data + byte_offset` with checked arithmetic (the pointer keeps the data's provenance).
pub(super) fn first_element_ptr(dl: &DLTensor) -> Result<*mut std::ffi::c_void> {
    let address = usize::try_from(dl.byte_offset)
        .ok()
        .and_then(|offset| (dl.data as usize).checked_add(offset));
    match address {
        Some(address) => Ok((dl.data as *mut u8)
            .wrapping_add(address - dl.data as usize)
            .cast()),
        None => Err(Error::value_error(format!(
            "the tensor's byte offset {} leaves the address space (data {:p})",
            dl.byte_offset, dl.data
        ))),
    }
}
