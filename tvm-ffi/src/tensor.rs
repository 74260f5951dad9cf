//! Tensors: [`Tensor`] (the runtime's reference-counted `ffi.Tensor`), [`TensorView`] (a
//! borrowed tensor argument, the C++ `TensorView` pattern), [`TensorMut`] (a new tensor that Rust
//! fills before sharing it) and [`DLPackTensor`] (the DLPack exchange form).
//!
//! An `ffi.Tensor` is an object header followed by a `DLTensor` (data pointer, device, dtype,
//! shape, strides, byte offset). A NumPy array or a PyTorch tensor passed from Python arrives
//! as such an object that points at the caller's memory: nothing is copied.
//!
//! ```
//! use tvm_ffi::{DataType, Device, Tensor};
//! let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//! assert_eq!(t.shape(), &[2, 3]);
//! assert_eq!(&*t.strides(), &[3, 1]);
//! assert_eq!(t.dtype(), DataType::float(32));
//! assert_eq!(t.device(), Device::cpu());
//! assert_eq!(t.as_slice::<f32>().unwrap()[4], 5.0);
//! let err = t.as_slice::<f64>().unwrap_err();
//! assert_eq!(err.message(), "expected a contiguous CPU tensor of dtype float64, got float32 on cpu:0");
//! ```
//!
//! # Who may write tensor memory
//!
//! Tensor memory is shared. A tensor from Python aliases the caller's array, every clone of a
//! [`Tensor`] and every [`TensorView`] share one buffer, and other languages may hold it. Rust
//! references promise more than that sharing can guarantee by itself, so access is split:
//!
//! - **Reading** ([`TensorView::as_slice`], [`Tensor::as_slice`]) is safe. Safe Rust itself
//!   never writes shared tensor memory (the only safe writer is [`TensorMut`], whose memory
//!   nothing else can reach), so what remains are writes by other code, which Rust cannot see.
//!   Reading relies on the convention every TVM-FFI and DLPack kernel relies on (C++
//!   `TensorView` included): while a function runs, its caller does not write the tensors it
//!   passed, nor does another thread. The Rust side of the same rule: do not keep a slice of a
//!   tensor across a call of a function that writes that tensor (an output argument). This is
//!   the trade rust-numpy makes for its safe read-only arrays, which Python code can still
//!   write.
//! - **Writing shared memory in place** ([`TensorView::as_mut_slice`],
//!   [`Tensor::as_mut_slice`]) is `unsafe`. Rust cannot see the other views of that memory:
//!   Python may pass one array as two arguments (`add_one(a, a)`), and two copies of a view give
//!   two `&mut` slices. The caller promises that nothing else uses the elements while the slice
//!   lives; [`TensorCheck::disjoint_from`] checks arguments against each other so that the
//!   promise rests on a check. This is what C++ kernels do with a raw `float*`, with the
//!   aliasing question made explicit.
//! - **New tensors** are [`TensorMut`]: memory allocated for it alone, writable through `&mut
//!   self` without `unsafe`, then frozen into a shared [`Tensor`] ([`TensorMut::freeze`]) or
//!   returned directly.
//!
//! `bool` tensors have no typed slices: a byte other than 0 or 1 written by foreign code would
//! be an invalid Rust `bool`. Fresh CPU memory is zero-filled, because Rust must not read
//! uninitialised memory.
//!
//! # Allocation
//!
//! [`TensorMut::empty`] (and [`Tensor::empty`]) allocate through the environment's DLPack
//! allocator when one is set (`TVMFFIEnvGetDLPackManagedTensorAllocator`; tvm_ffi's PyTorch
//! integration installs PyTorch's, so that kernels allocate from its caching allocator), else on
//! the Rust heap (CPU only). A Rust
//! buffer is handed to the runtime as a `DLManagedTensorVersioned` whose deleter frees it when
//! the last holder, in any language, drops the tensor; [`live_rust_buffers`] counts those
//! buffers.
use std::borrow::Cow;
use std::ffi::c_void;
use std::fmt::{self, Write as _};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::any::{AnyView, FromAny, IntoAny, TypeSchema};
use crate::builtin::TensorObj;
use crate::dtype::{DataType, Device};
use crate::error::{Error, Result};
use crate::object::ObjectRef;
use crate::sys::{self, type_index as ti, DLManagedTensorVersioned, DLTensor, TVMFFIObject};
use crate::Any;

// ---------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------

/// A Rust type that typed tensor access can read and write: `f32`, `f64`, `i8`..`i64`,
/// `u8`..`u64`.
///
/// # Safety
/// `DTYPE` must describe `Self` exactly (size and lanes), `Self` must have no padding, and every
/// bit pattern of that size must be a valid `Self` (foreign code may have written anything).
/// That last rule is why `bool` is not an element type.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The DLPack data type of one element.
    const DTYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        // SAFETY: a primitive number whose DLPack type has the same size; every bit pattern is
        // a valid value.
        unsafe impl Element for $t {
            const DTYPE: DataType = $dtype;
        }
    )*};
}
element!(
    f32 => DataType::float(32),
    f64 => DataType::float(64),
    i8 => DataType::int(8),
    i16 => DataType::int(16),
    i32 => DataType::int(32),
    i64 => DataType::int(64),
    u8 => DataType::uint(8),
    u16 => DataType::uint(16),
    u32 => DataType::uint(32),
    u64 => DataType::uint(64),
);

// ---------------------------------------------------------------------------------------------
// DLTensor layout helpers (shared by every tensor type)
// ---------------------------------------------------------------------------------------------

/// The shape array of a DLTensor (empty for a scalar).
fn shape_of(dl: &DLTensor) -> &[i64] {
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
fn strides_of(dl: &DLTensor) -> Option<&[i64]> {
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
fn compact_strides(shape: &[i64]) -> Vec<i64> {
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
fn is_contiguous(dl: &DLTensor) -> bool {
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
fn checked_numel(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &extent| {
        usize::try_from(extent)
            .ok()
            .and_then(|e| acc.checked_mul(e))
    })
}

/// Bytes of `numel` packed elements of `dtype` (C++ `GetDataSize`), or `None` on overflow.
fn data_size(numel: usize, dtype: DataType) -> Option<usize> {
    let bits = numel
        .checked_mul(dtype.bits() as usize)?
        .checked_mul(dtype.lanes() as usize)?;
    Some(bits.div_ceil(8))
}

/// Devices whose memory the CPU can address directly (so typed slices make sense).
fn host_accessible(device: Device) -> bool {
    matches!(
        device.device_type(),
        sys::kDLCPU | sys::kDLCUDAHost | sys::kDLROCMHost
    )
}

/// `float32 on cpu:0`, or `non-contiguous float32 on cpu:0 (shape [5], strides [2])`: how an
/// error message names the tensor it got.
fn describe(dl: &DLTensor) -> String {
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

/// Validates typed host access to all elements of `dl` and returns the first element and the
/// element count. `name` is the argument name used in messages, if any.
fn slice_parts<T: Element>(dl: &DLTensor, name: Option<&str>) -> Result<(NonNull<T>, usize)> {
    let dtype_ok = dl.dtype == T::DTYPE.0;
    if !(dtype_ok && host_accessible(Device::from(dl.device)) && is_contiguous(dl)) {
        return Err(access_error::<T>(dl, name, dtype_ok));
    }
    let subject = |what: &str| match name {
        Some(name) => format!("`{name}` {what}"),
        None => format!("the tensor {what}"),
    };
    let shape = shape_of(dl);
    let len = checked_numel(shape)
        .ok_or_else(|| Error::value_error(subject(&format!("has an invalid shape {shape:?}"))))?;
    if len == 0 {
        // No element is ever read: the data pointer of an empty tensor may be anything.
        return Ok((NonNull::dangling(), 0));
    }
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => {}
        _ => return Err(Error::value_error(subject("is too large to address"))),
    }
    let Some(base) = NonNull::new(dl.data as *mut u8) else {
        return Err(Error::value_error(subject(&format!(
            "has {len} elements but a null data pointer"
        ))));
    };
    let offset = usize::try_from(dl.byte_offset)
        .map_err(|_| Error::value_error(subject("has a byte offset beyond the address space")))?;
    // `wrapping_add`: the address is only formed here; it is validated before any access.
    let first = base.as_ptr().wrapping_add(offset);
    if (first as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Error::value_error(subject(&format!(
            "has data at {first:p}, not aligned to the {} bytes {} needs",
            std::mem::align_of::<T>(),
            T::DTYPE
        ))));
    }
    // A null result would mean the address wrapped around, which no valid tensor does.
    let first = NonNull::new(first as *mut T)
        .ok_or_else(|| Error::value_error(subject("has an invalid data address")))?;
    Ok((first, len))
}

#[cold]
#[inline(never)]
fn access_error<T: Element>(dl: &DLTensor, name: Option<&str>, dtype_ok: bool) -> Error {
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
/// element. Conservative for strided tensors: the range may contain bytes no element uses.
fn byte_span(dl: &DLTensor) -> Option<(i128, i128)> {
    let shape = shape_of(dl);
    if shape.iter().any(|&extent| extent <= 0) {
        return None;
    }
    let owned;
    let strides = match strides_of(dl) {
        Some(s) => s,
        None => {
            owned = compact_strides(shape);
            &owned
        }
    };
    let (mut low, mut high) = (0i128, 0i128);
    for (&extent, &stride) in shape.iter().zip(strides) {
        let reach = (extent as i128 - 1) * stride as i128;
        if reach >= 0 {
            high += reach;
        } else {
            low += reach;
        }
    }
    let element = (DataType::from(dl.dtype).size_in_bytes() as i128).max(1);
    let base = dl.data as usize as i128 + dl.byte_offset as i128;
    Some((base + low * element, base + (high + 1) * element))
}

/// Whether two devices may share an address space (both host memory, or the same device).
fn same_memory_space(a: Device, b: Device) -> bool {
    a == b || (host_accessible(a) && host_accessible(b))
}

// ---------------------------------------------------------------------------------------------
// TensorView
// ---------------------------------------------------------------------------------------------

/// A borrowed tensor: the argument type of kernels (C++ `ffi::TensorView`).
///
/// Converting an argument into a view costs no reference counting: it accepts an `ffi.Tensor`
/// object (what Python passes for NumPy arrays, PyTorch tensors and `tvm_ffi.Tensor`) or a raw
/// `DLTensor*` (type index 7, what C++ passes for its `TensorView`), borrowed for the call.
/// Its signature type is `DLTensor*`, as in C++.
///
/// ```
/// use tvm_ffi::{Any, Function, Tensor, TensorView};
/// let sum = Function::from_packed(|args| {
///     let x: TensorView = args[0].cast()?;
///     let xs = x.check("x").ndim(1)?.as_slice::<f64>()?;
///     Ok(Any::new(xs.iter().sum::<f64>()))
/// });
/// let t = Tensor::from_vec(vec![1.0f64, 2.0, 3.5], &[3]).unwrap();
/// assert_eq!(sum.call_as::<f64, _>((&t,)).unwrap(), 6.5);
/// let err = sum.call((Tensor::from_vec(vec![1i32], &[1]).unwrap(),)).unwrap_err();
/// assert_eq!(err.message(), "`x` must be a contiguous CPU tensor of dtype float64, got int32 on cpu:0");
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a> {
    dl: &'a DLTensor,
    /// The `ffi.Tensor` object containing `dl`, when there is one and sharing it is allowed.
    owner: Option<NonNull<TVMFFIObject>>,
}

// SAFETY: a view is immutable metadata plus, optionally, a pointer to a thread-safe
// reference-counted object; element access goes through methods whose contracts cover
// concurrent use.
unsafe impl Send for TensorView<'_> {}
// SAFETY: as above.
unsafe impl Sync for TensorView<'_> {}

/// The metadata accessors shared by the tensor types; `$lt` is how long the results borrow.
/// The accessors [`Tensor`] and [`TensorMut`] share: both hold a tensor object and read it
/// through a [`TensorView`].
macro_rules! owned_tensor_accessors {
    () => {
        /// The underlying `DLTensor`.
        #[inline]
        pub fn as_dltensor(&self) -> &DLTensor {
            &self.0.dl_tensor
        }

        view_accessors!('_);

        /// Starts checking this tensor as argument `name` (see [`TensorCheck`]).
        #[inline]
        pub fn check<'n>(&self, name: &'n str) -> TensorCheck<'_, 'n> {
            self.view().check(name)
        }

        /// The elements; see [`TensorView::as_slice`].
        #[inline]
        pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
            self.view().as_slice()
        }
    };
}

macro_rules! view_accessors {
    ($lt:lifetime) => {
        /// The extent of each dimension (empty for a scalar tensor).
        #[inline]
        pub fn shape(&self) -> &$lt [i64] {
            shape_of(self.as_dltensor())
        }

        /// The stride of each dimension, in elements; computed row-major strides when the
        /// DLTensor leaves them null.
        pub fn strides(&self) -> Cow<$lt, [i64]> {
            let dl = self.as_dltensor();
            match strides_of(dl) {
                Some(strides) => Cow::Borrowed(strides),
                None => Cow::Owned(compact_strides(shape_of(dl))),
            }
        }

        /// The number of dimensions.
        #[inline]
        pub fn ndim(&self) -> usize {
            self.as_dltensor().ndim.max(0) as usize
        }

        /// The number of elements (the product of the shape; 1 for a scalar tensor, 0 for an
        /// invalid shape with a negative extent).
        pub fn numel(&self) -> usize {
            checked_numel(self.shape()).unwrap_or(0)
        }

        /// The element type.
        #[inline]
        pub fn dtype(&self) -> DataType {
            DataType::from(self.as_dltensor().dtype)
        }

        /// The device holding the data.
        #[inline]
        pub fn device(&self) -> Device {
            Device::from(self.as_dltensor().device)
        }

        /// The offset of the first element from [`data_ptr`](Self::data_ptr), in bytes.
        #[inline]
        pub fn byte_offset(&self) -> u64 {
            self.as_dltensor().byte_offset
        }

        /// The DLTensor's data pointer (without the byte offset), as C++ `data_ptr()`.
        #[inline]
        pub fn data_ptr(&self) -> *mut c_void {
            self.as_dltensor().data
        }

        /// Whether the elements are stored compactly in row-major order (C++ `IsContiguous`:
        /// extent-1 dimensions may have any stride and empty tensors are contiguous).
        pub fn is_contiguous(&self) -> bool {
            is_contiguous(self.as_dltensor())
        }
    };
}

impl<'a> TensorView<'a> {
    /// Views a DLTensor (for example one received through a C API).
    ///
    /// # Safety
    /// For `'a`, `dl`'s shape (and strides, unless null) must point to `ndim` valid entries that
    /// do not change, and its data must be valid for the elements they describe.
    #[inline]
    pub unsafe fn from_dltensor(dl: &'a DLTensor) -> TensorView<'a> {
        TensorView { dl, owner: None }
    }

    /// The view of a tensor object (shares the object when converted back with `to_tensor`).
    #[inline]
    fn of_object(obj: &'a ObjectRef<TensorObj>) -> TensorView<'a> {
        let payload: &'a TensorObj = obj;
        TensorView {
            dl: &payload.dl_tensor,
            owner: Some(obj.as_raw()),
        }
    }

    /// The underlying `DLTensor`.
    #[inline]
    pub fn as_dltensor(&self) -> &'a DLTensor {
        self.dl
    }

    view_accessors!('a);

    /// A new strong reference to the `ffi.Tensor` this view borrows, or `None` when the view
    /// came from a raw `DLTensor*` or from a [`TensorMut`] (which must stay exclusive).
    pub fn to_tensor(&self) -> Option<Tensor> {
        // SAFETY: `owner` is the live tensor object that contains `dl`, borrowed for 'a.
        self.owner
            .map(|ptr| Tensor(unsafe { ObjectRef::from_raw_borrowed(ptr) }))
    }

    /// The object `to_tensor` would share, without taking a reference.
    #[inline]
    pub(crate) fn owner_object(&self) -> Option<NonNull<TVMFFIObject>> {
        self.owner
    }

    /// Whether the memory of the two tensors may overlap. Conservative: a strided tensor counts
    /// as covering every byte between its first and last element, and tensors on different
    /// devices never overlap (unless both are host memory).
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let a = Tensor::from_vec(vec![0f32; 4], &[4]).unwrap();
    /// let b = Tensor::from_vec(vec![0f32; 4], &[4]).unwrap();
    /// assert!(a.view().overlaps(&a.view()));
    /// assert!(!a.view().overlaps(&b.view()));
    /// ```
    pub fn overlaps(&self, other: &TensorView<'_>) -> bool {
        if !same_memory_space(self.device(), other.device()) {
            return false;
        }
        match (byte_span(self.dl), byte_span(other.dl)) {
            (Some(a), Some(b)) => a.0 < b.1 && b.0 < a.1,
            _ => false,
        }
    }

    /// Starts checking this tensor as argument `name`: every failed check is an error that
    /// names the argument and what was expected (see [`TensorCheck`]).
    #[inline]
    pub fn check<'n>(self, name: &'n str) -> TensorCheck<'a, 'n> {
        TensorCheck { view: self, name }
    }

    /// The elements, when the tensor is a contiguous host tensor of element type `T`;
    /// otherwise an error saying what was expected and what the tensor is (`TypeError` for a
    /// wrong dtype, `ValueError` for a wrong device or layout).
    ///
    /// Safe under the [crate-wide convention](self#who-may-write-tensor-memory) that a caller
    /// does not write the tensors it passes while the callee runs.
    ///
    /// ```
    /// use tvm_ffi::Tensor;
    /// let t = Tensor::from_vec(vec![1u8, 2, 3], &[3]).unwrap();
    /// assert_eq!(t.view().as_slice::<u8>().unwrap(), &[1, 2, 3]);
    /// ```
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Result<&'a [T]> {
        let (first, len) = slice_parts::<T>(self.dl, None)?;
        // SAFETY: `slice_parts` checked dtype, host access, contiguity, alignment and size, so
        // `len` elements of `T` start at `first`, valid for 'a. Nothing writes them meanwhile:
        // safe Rust cannot write shared tensor memory, unsafe writers promise exclusivity, and
        // callers do not write arguments during a call (module docs).
        Ok(unsafe { std::slice::from_raw_parts(first.as_ptr(), len) })
    }

    /// The elements for writing in place, with the checks of [`as_slice`](Self::as_slice).
    ///
    /// For tensors created in Rust prefer [`TensorMut::as_mut_slice`], which is safe.
    ///
    /// # Safety
    /// While the returned slice lives, nothing else may read or write its elements: no other
    /// slice of this or of an overlapping tensor (another argument may be the same array:
    /// check with [`TensorCheck::disjoint_from`] or [`overlaps`](Self::overlaps)), no second
    /// call of this method on a copy of the view, and no foreign code.
    #[inline]
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&'a mut [T]> {
        let (first, len) = slice_parts::<T>(self.dl, None)?;
        // SAFETY: layout as in `as_slice`; exclusivity is the caller's promise.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }
}

impl fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "TensorView", self)
    }
}

fn debug_tensor(f: &mut fmt::Formatter<'_>, kind: &str, view: &TensorView<'_>) -> fmt::Result {
    write!(
        f,
        "{kind}(shape={:?}, dtype={}, device={}",
        view.shape(),
        view.dtype(),
        view.device()
    )?;
    if !view.is_contiguous() {
        write!(f, ", strides={:?}", view.strides())?;
    }
    if view.byte_offset() != 0 {
        write!(f, ", byte_offset={}", view.byte_offset())?;
    }
    f.write_str(")")
}

// ---------------------------------------------------------------------------------------------
// Argument checks
// ---------------------------------------------------------------------------------------------

/// Checks of a tensor argument named `name`, made by [`TensorView::check`] or
/// [`Tensor::check`]. Each check returns the checker again or an error that names the argument
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
    view: TensorView<'a>,
    name: &'n str,
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

// ---------------------------------------------------------------------------------------------
// Tensor
// ---------------------------------------------------------------------------------------------

/// A reference-counted tensor, the runtime's `ffi.Tensor` (Python `tvm_ffi.Tensor`).
///
/// Clones share the data. Python turns a returned `Tensor` into a `tvm_ffi.Tensor`, which
/// `numpy.from_dlpack` and `torch.from_dlpack` take without copying.
///
/// ```
/// use tvm_ffi::{Function, Tensor};
/// let t = Tensor::from_slice(&[1i64, 2, 3, 4], &[2, 2]).unwrap();
/// let echo = Function::from_packed(|args| Ok(args[0].to_owned()));
/// let back: Tensor = echo.call_as((&t,)).unwrap();
/// assert!(back.as_object_ref().ptr_eq(t.as_object_ref())); // the same object
/// assert_eq!(back.data_ptr(), t.data_ptr());
/// assert_eq!(back.as_slice::<i64>().unwrap(), &[1, 2, 3, 4]);
/// ```
#[derive(Clone)]
#[repr(transparent)]
pub struct Tensor(ObjectRef<TensorObj>);

impl Tensor {
    /// A tensor that takes ownership of `data` (no copy), with the given row-major `shape`.
    ///
    /// ```
    /// let t = tvm_ffi::Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[3, 2]).unwrap();
    /// assert_eq!(t.numel(), 6);
    /// let err = tvm_ffi::Tensor::from_vec(vec![1i32, 2, 3], &[2, 2]).unwrap_err();
    /// assert_eq!(err.message(), "Tensor::from_vec: shape [2, 2] has 4 elements, the data has 3");
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        TensorMut::from_vec(data, shape).map(TensorMut::freeze)
    }

    /// A tensor holding a copy of `data`, with the given row-major `shape`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A new compact tensor (see [`TensorMut::empty`]; fill it through a `TensorMut` instead
    /// when Rust writes the data).
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        TensorMut::empty(shape, dtype, device).map(TensorMut::freeze)
    }

    /// Imports a DLPack tensor (no copy); the tensor calls its deleter when the last holder
    /// drops it.
    ///
    /// Fails for a DLPack major version other than 1 and for read-only tensors: an
    /// `ffi.Tensor` has no read-only flag, so writers could not know.
    ///
    /// ```
    /// let t = tvm_ffi::Tensor::from_vec(vec![1.5f64, 2.5], &[2]).unwrap();
    /// let again = tvm_ffi::Tensor::from_dlpack(t.to_dlpack().unwrap()).unwrap();
    /// assert_eq!(again.as_slice::<f64>().unwrap(), &[1.5, 2.5]);
    /// ```
    pub fn from_dlpack(tensor: DLPackTensor) -> Result<Tensor> {
        let (major, minor) = tensor.version();
        if major != sys::DLPACK_MAJOR_VERSION {
            return Err(Error::value_error(format!(
                "Tensor::from_dlpack: unsupported DLPack version {major}.{minor} (this runtime \
                 reads major version {})",
                sys::DLPACK_MAJOR_VERSION
            )));
        }
        if tensor.flags() & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
            return Err(Error::value_error(
                "Tensor::from_dlpack: the DLPack tensor is read-only, and an ffi.Tensor cannot \
                 say so to its writers",
            ));
        }
        let raw = tensor.into_raw();
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: a valid managed tensor; on success the new object owns it.
        let rc = unsafe { sys::TVMFFITensorFromDLPackVersioned(raw.as_ptr(), 0, 0, &mut out) };
        if rc != 0 {
            let err = Error::from_return_code(rc);
            // SAFETY: on failure the runtime did not take the managed tensor: give it back to
            // its deleter.
            drop(unsafe { DLPackTensor::from_raw(raw) });
            return Err(err);
        }
        // SAFETY: on success `out` is a new tensor object with one reference, now ours.
        Ok(Tensor(unsafe { tensor_object_from_handle(out)? }))
    }

    /// Exports to DLPack (no copy): the result keeps the tensor alive until its deleter runs.
    pub fn to_dlpack(&self) -> Result<DLPackTensor> {
        let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
        // SAFETY: a live tensor object and an output slot; the runtime takes its own reference.
        let rc =
            unsafe { sys::TVMFFITensorToDLPackVersioned(self.0.as_raw().as_ptr() as _, &mut out) };
        if rc != 0 {
            return Err(Error::from_return_code(rc));
        }
        let ptr = NonNull::new(out)
            .ok_or_else(|| Error::runtime_error("TVMFFITensorToDLPackVersioned returned null"))?;
        // SAFETY: a fresh managed tensor that the caller owns.
        Ok(unsafe { DLPackTensor::from_raw(ptr) })
    }

    /// A borrowed view (no reference counting).
    #[inline]
    pub fn view(&self) -> TensorView<'_> {
        TensorView::of_object(&self.0)
    }

    owned_tensor_accessors!();

    /// The elements for writing in place; see [`TensorView::as_mut_slice`].
    ///
    /// # Safety
    /// As for [`TensorView::as_mut_slice`]: the clones of a `Tensor` share its memory, and so
    /// may other languages.
    #[inline]
    #[allow(clippy::mut_from_ref)] // shared memory by design; the contract above governs it
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&mut [T]> {
        // SAFETY: forwarded contract.
        unsafe { self.view().as_mut_slice() }
    }

    /// The underlying object reference.
    #[inline]
    pub fn as_object_ref(&self) -> &ObjectRef<TensorObj> {
        &self.0
    }
    /// Wraps a tensor object reference.
    #[inline]
    pub fn from_object_ref(obj: ObjectRef<TensorObj>) -> Tensor {
        Tensor(obj)
    }
    /// Unwraps into the object reference.
    #[inline]
    pub fn into_object_ref(self) -> ObjectRef<TensorObj> {
        self.0
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "Tensor", &self.view())
    }
}

impl From<TensorMut> for Tensor {
    fn from(tensor: TensorMut) -> Tensor {
        tensor.freeze()
    }
}

/// Takes ownership of a tensor handle returned by the runtime.
///
/// # Safety
/// A non-null `handle` must be a tensor object carrying one reference for the caller.
unsafe fn tensor_object_from_handle(
    handle: sys::TVMFFIObjectHandle,
) -> Result<ObjectRef<TensorObj>> {
    let ptr = NonNull::new(handle as *mut TVMFFIObject)
        .ok_or_else(|| Error::runtime_error("the runtime returned a null tensor"))?;
    // SAFETY: the caller's contract.
    Ok(unsafe { ObjectRef::from_raw(ptr) })
}

// ---------------------------------------------------------------------------------------------
// TensorMut
// ---------------------------------------------------------------------------------------------

/// A new tensor whose memory nothing else can reach yet, so Rust writes it safely through
/// `&mut self`; [`freeze`](Self::freeze) (or returning it from a function) shares it.
///
/// ```
/// use tvm_ffi::{DataType, Device, Tensor, TensorMut};
/// let mut out = TensorMut::empty(&[2, 2], DataType::float(32), Device::cpu()).unwrap();
/// assert_eq!(out.as_slice::<f32>().unwrap(), &[0.0; 4]); // zero-filled
/// out.as_mut_slice::<f32>().unwrap().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
/// let shared: Tensor = out.freeze();
/// assert_eq!(shared.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
/// ```
pub struct TensorMut(
    /// Invariant: the only reference to the object, whose memory no one else can reach.
    ObjectRef<TensorObj>,
);

impl TensorMut {
    /// Allocates a compact row-major tensor.
    ///
    /// Uses the environment's DLPack allocator when one is set (tvm_ffi sets PyTorch's when
    /// PyTorch is in use), otherwise
    /// the Rust heap, which only serves CPU tensors (64-byte aligned). Host memory is
    /// zero-filled: unlike `torch.empty`, because Rust must not read uninitialised memory.
    ///
    /// ```
    /// use tvm_ffi::{DataType, Device, TensorMut};
    /// let err = TensorMut::empty(&[4], DataType::float(32), Device::cuda(0)).unwrap_err();
    /// assert!(err.message().contains("only allocate CPU memory"));
    /// let err = TensorMut::empty(&[-1], DataType::float(32), Device::cpu()).unwrap_err();
    /// assert_eq!(err.message(), "TensorMut::empty: invalid shape [-1]");
    /// ```
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<TensorMut> {
        let numel = checked_numel(shape).ok_or_else(|| {
            Error::value_error(format!("TensorMut::empty: invalid shape {shape:?}"))
        })?;
        let bytes = data_size(numel, dtype).ok_or_else(|| {
            Error::value_error(format!(
                "TensorMut::empty: {shape:?} elements of {dtype} exceed the address space"
            ))
        })?;
        let ndim = i32::try_from(shape.len()).map_err(|_| {
            Error::value_error("TensorMut::empty: too many dimensions for a DLTensor")
        })?;
        let obj = match env_alloc(shape, ndim, dtype, device)? {
            Some(obj) => obj,
            None if device.device_type() == sys::kDLCPU => rust_alloc_zeroed(shape, dtype, bytes)?,
            None => {
                return Err(Error::runtime_error(format!(
                    "TensorMut::empty: no DLPack tensor allocator is set in the environment \
                     (TVMFFIEnvSetDLPackManagedTensorAllocator), and Rust can only allocate CPU \
                     memory itself; asked for {device}"
                )))
            }
        };
        Ok(TensorMut(obj))
    }

    /// [`empty`](Self::empty) with the shape, dtype and device of `like`.
    pub fn empty_like(like: &TensorView<'_>) -> Result<TensorMut> {
        TensorMut::empty(like.shape(), like.dtype(), like.device())
    }

    /// A tensor that takes ownership of `data` (no copy), with the given row-major `shape`.
    pub fn from_vec<T: Element>(mut data: Vec<T>, shape: &[i64]) -> Result<TensorMut> {
        match checked_numel(shape) {
            Some(n) if n == data.len() => {}
            Some(n) => {
                return Err(Error::value_error(format!(
                    "Tensor::from_vec: shape {shape:?} has {n} elements, the data has {}",
                    data.len()
                )))
            }
            None => {
                return Err(Error::value_error(format!(
                    "Tensor::from_vec: invalid shape {shape:?}"
                )))
            }
        }
        let first = data.as_mut_ptr() as *mut c_void;
        // Moving the Vec into the box keeps its heap buffer, and `first`, where they are.
        rust_managed_tensor(first, Box::new(data), shape, T::DTYPE).map(TensorMut)
    }

    /// A view for reading, or for passing to functions as a `DLTensor*` (it cannot be turned
    /// into a shared [`Tensor`], which would end the exclusivity).
    #[inline]
    pub fn view(&self) -> TensorView<'_> {
        TensorView {
            dl: &self.0.dl_tensor,
            owner: None,
        }
    }

    owned_tensor_accessors!();

    /// The elements for writing, when the tensor is a host tensor of element type `T`.
    #[inline]
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let (first, len) = slice_parts::<T>(&self.0.dl_tensor, None)?;
        // SAFETY: layout checked by `slice_parts`; exclusive because `self` is the only
        // reference to a tensor whose memory nothing else reaches, borrowed mutably here.
        Ok(unsafe { std::slice::from_raw_parts_mut(first.as_ptr(), len) })
    }

    /// Shares the tensor: from now on its memory is read through [`Tensor`]s.
    #[inline]
    pub fn freeze(self) -> Tensor {
        Tensor(self.0)
    }
}

impl fmt::Debug for TensorMut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "TensorMut", &self.view())
    }
}

/// Allocates through the environment's DLPack allocator, if one is set.
fn env_alloc(
    shape: &[i64],
    ndim: i32,
    dtype: DataType,
    device: Device,
) -> Result<Option<ObjectRef<TensorObj>>> {
    // SAFETY: a plain query of the runtime's environment.
    if unsafe { sys::TVMFFIEnvGetDLPackManagedTensorAllocator() }.is_none() {
        return Ok(None);
    }
    // The prototype's `shape` is a mutable pointer in C; give it a copy to be independent of
    // what the allocator does with it.
    let mut shape_copy = shape.to_vec();
    let mut prototype = DLTensor {
        data: std::ptr::null_mut(),
        device: device.0,
        ndim,
        dtype: dtype.0,
        shape: shape_copy.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: a valid prototype (data null, as the API requires) and output slot.
    let rc = unsafe { sys::TVMFFIEnvTensorAlloc(&mut prototype, &mut out) };
    if rc != 0 {
        return Err(Error::from_return_code(rc));
    }
    // SAFETY: on success `out` is a new tensor object with one reference, now ours.
    let obj = unsafe { tensor_object_from_handle(out)? };
    let dl = &obj.dl_tensor;
    if shape_of(dl) != shape || dl.dtype != dtype.0 || dl.device != device.0 || !is_contiguous(dl) {
        return Err(Error::runtime_error(format!(
            "the environment's DLPack tensor allocator returned {:?} for a compact {shape:?} \
             {dtype} tensor on {device}",
            TensorView::of_object(&obj)
        )));
    }
    if host_accessible(device) {
        let bytes = data_size(checked_numel(shape).unwrap_or(0), dtype).unwrap_or(0);
        if bytes > 0 {
            if dl.data.is_null() {
                return Err(Error::runtime_error(
                    "the environment's DLPack tensor allocator returned a null data pointer",
                ));
            }
            // SAFETY: a fresh compact host allocation of `bytes` bytes at data + byte_offset,
            // reachable only through `obj`.
            unsafe {
                std::ptr::write_bytes((dl.data as *mut u8).add(dl.byte_offset as usize), 0, bytes)
            };
        }
    }
    Ok(Some(obj))
}

// ---------------------------------------------------------------------------------------------
// Tensors over Rust memory
// ---------------------------------------------------------------------------------------------

/// How many tensor buffers allocated by this copy of the crate ([`Tensor::from_vec`],
/// [`TensorMut::empty`] without an environment allocator, ...) are alive, in any language.
/// Each buffer is freed when the last holder of its tensor drops it; tests use this to see
/// that tensors handed to other languages come back and are freed.
pub fn live_rust_buffers() -> usize {
    LIVE_RUST_BUFFERS.load(Ordering::Acquire)
}

static LIVE_RUST_BUFFERS: AtomicUsize = AtomicUsize::new(0);

/// The DLPack context of a Rust buffer: the managed tensor first (the deleter receives a
/// pointer to it), then everything its `DLTensor` points into.
#[repr(C)]
struct RustManaged {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    _storage: Box<dyn Send>,
}

unsafe extern "C" fn rust_managed_deleter(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: `managed` is the first field of a RustManaged leaked by `rust_managed_tensor`,
    // and DLPack calls the deleter once. Dropping boxes and plain buffers cannot unwind.
    drop(unsafe { Box::from_raw(managed as *mut RustManaged) });
    LIVE_RUST_BUFFERS.fetch_sub(1, Ordering::Release);
}

/// A tensor object over Rust-owned memory: `first` points into `storage`, which is dropped
/// (with the shape and strides) when the runtime releases the tensor.
fn rust_managed_tensor(
    first: *mut c_void,
    storage: Box<dyn Send>,
    shape: &[i64],
    dtype: DataType,
) -> Result<ObjectRef<TensorObj>> {
    let ndim = i32::try_from(shape.len())
        .map_err(|_| Error::value_error("too many dimensions for a DLTensor"))?;
    let shape: Box<[i64]> = shape.into();
    let strides: Box<[i64]> = compact_strides(&shape).into();
    let context = Box::new(RustManaged {
        managed: DLManagedTensorVersioned {
            version: sys::DLPackVersion {
                major: sys::DLPACK_MAJOR_VERSION,
                minor: sys::DLPACK_MINOR_VERSION,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(rust_managed_deleter),
            flags: 0,
            dl_tensor: DLTensor {
                data: first,
                device: Device::cpu().0,
                ndim,
                dtype: dtype.0,
                // The boxed slices keep their heap addresses when moved into the context.
                shape: shape.as_ptr() as *mut i64,
                strides: strides.as_ptr() as *mut i64,
                byte_offset: 0,
            },
        },
        shape,
        strides,
        _storage: storage,
    });
    LIVE_RUST_BUFFERS.fetch_add(1, Ordering::AcqRel);
    let raw = Box::into_raw(context);
    // SAFETY: `raw` is a valid, uniquely owned context.
    unsafe { (*raw).managed.manager_ctx = raw as *mut c_void };
    // SAFETY: `raw` starts with a valid managed tensor (explicit strides, so the runtime uses
    // our shape and strides arrays).
    let managed = unsafe { DLPackTensor::from_raw(NonNull::new_unchecked(raw).cast()) };
    Tensor::from_dlpack(managed).map(Tensor::into_object_ref)
}

/// A zero-filled, 64-byte aligned heap buffer (TVM's allocation alignment; enough for every
/// element type and for AVX-512 loads).
struct AlignedBuffer {
    ptr: NonNull<u8>,
    layout: std::alloc::Layout,
}

// SAFETY: a plain owned heap allocation.
unsafe impl Send for AlignedBuffer {}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `rust_alloc_zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

const ALLOC_ALIGNMENT: usize = 64;

fn rust_alloc_zeroed(shape: &[i64], dtype: DataType, bytes: usize) -> Result<ObjectRef<TensorObj>> {
    if bytes == 0 {
        // No element to store: an aligned dangling address, never dereferenced.
        let first = ALLOC_ALIGNMENT as *mut c_void;
        return rust_managed_tensor(first, Box::new(()), shape, dtype);
    }
    let layout = std::alloc::Layout::from_size_align(bytes, ALLOC_ALIGNMENT)
        .map_err(|_| Error::value_error(format!("cannot allocate {bytes} bytes")))?;
    // SAFETY: a non-zero size.
    let ptr = NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })
        .ok_or_else(|| Error::new("MemoryError", format!("cannot allocate {bytes} bytes")))?;
    let buffer = AlignedBuffer { ptr, layout };
    rust_managed_tensor(ptr.as_ptr() as *mut c_void, Box::new(buffer), shape, dtype)
}

// ---------------------------------------------------------------------------------------------
// DLPack exchange
// ---------------------------------------------------------------------------------------------

/// An owned `DLManagedTensorVersioned*`, the DLPack (1.x) exchange form of a tensor: dropping
/// it calls its deleter. [`Tensor::to_dlpack`] makes one, [`Tensor::from_dlpack`] takes one,
/// [`into_raw`](Self::into_raw) hands it to a C consumer.
pub struct DLPackTensor {
    ptr: NonNull<DLManagedTensorVersioned>,
}

// SAFETY: DLPack allows the deleter to run on any thread; the tensor's fields are plain data.
unsafe impl Send for DLPackTensor {}

impl DLPackTensor {
    /// Takes ownership of a managed tensor.
    ///
    /// # Safety
    /// `ptr` must be a valid `DLManagedTensorVersioned` that the caller owns (its deleter has
    /// not run and no one else will call it), describing memory valid until the deleter runs.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<DLManagedTensorVersioned>) -> DLPackTensor {
        DLPackTensor { ptr }
    }

    /// Gives up ownership: the receiver must call the deleter.
    #[inline]
    pub fn into_raw(self) -> NonNull<DLManagedTensorVersioned> {
        std::mem::ManuallyDrop::new(self).ptr
    }

    /// The managed tensor, still owned by `self`.
    #[inline]
    pub fn as_ptr(&self) -> *mut DLManagedTensorVersioned {
        self.ptr.as_ptr()
    }

    fn managed(&self) -> &DLManagedTensorVersioned {
        // SAFETY: valid while owned (`from_raw`'s contract).
        unsafe { self.ptr.as_ref() }
    }

    /// The DLPack version of the producer, `(major, minor)`.
    pub fn version(&self) -> (u32, u32) {
        let v = self.managed().version;
        (v.major, v.minor)
    }

    /// The DLPack flags (`DLPACK_FLAG_BITMASK_READ_ONLY`, ...).
    pub fn flags(&self) -> u64 {
        self.managed().flags
    }

    /// A view of the tensor.
    pub fn view(&self) -> TensorView<'_> {
        // SAFETY: the managed tensor's DLTensor is valid until its deleter runs, which cannot
        // happen while `self` is borrowed.
        unsafe { TensorView::from_dltensor(&self.managed().dl_tensor) }
    }
}

impl Drop for DLPackTensor {
    fn drop(&mut self) {
        if let Some(deleter) = self.managed().deleter {
            // SAFETY: we own the managed tensor; DLPack's deleter releases it exactly once.
            unsafe { deleter(self.ptr.as_ptr()) }
        }
    }
}

impl fmt::Debug for DLPackTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_tensor(f, "DLPackTensor", &self.view())
    }
}

// ---------------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------------

impl TypeSchema for Tensor {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
crate::any::object_wrapper_conversions!(Tensor, TensorObj);

impl TypeSchema for &Tensor {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
impl<'a> FromAny<'a> for &'a Tensor {
    #[inline]
    fn try_cast(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&'a ObjectRef<TensorObj>>::try_cast(view)?;
        // SAFETY: Tensor is repr(transparent) over ObjectRef<TensorObj>.
        Some(unsafe { &*(obj as *const ObjectRef<TensorObj> as *const Tensor) })
    }
}

impl TypeSchema for TensorMut {
    fn type_str() -> String {
        "ffi.Tensor".into()
    }
}
impl IntoAny for TensorMut {
    /// Shares the tensor ([`TensorMut::freeze`]), so a kernel may return a `TensorMut`.
    fn into_any(self) -> Any {
        self.freeze().into_any()
    }
}

impl TypeSchema for TensorView<'_> {
    /// `DLTensor*`, as C++ names `TensorView` in signatures (Python shows both as `Tensor`).
    fn type_str() -> String {
        "DLTensor*".into()
    }
}
impl<'a> FromAny<'a> for TensorView<'a> {
    /// Accepts an `ffi.Tensor` or a non-null `DLTensor*`, as C++ `TensorView` does.
    #[inline]
    fn try_cast(view: &'a AnyView<'a>) -> Option<Self> {
        let raw = view.as_raw();
        match raw.type_index {
            ti::kTVMFFITensor => {
                let obj = <&'a ObjectRef<TensorObj>>::try_cast(view)?;
                Some(TensorView::of_object(obj))
            }
            ti::kTVMFFIDLTensorPtr => {
                // SAFETY: index 7 stores a DLTensor pointer borrowed for the call ('a).
                let ptr = unsafe { raw.value.v_ptr } as *const DLTensor;
                // SAFETY: the caller passes a valid DLTensor for the call, as C++ assumes.
                unsafe { ptr.as_ref() }.map(|dl| TensorView { dl, owner: None })
            }
            _ => None,
        }
    }
}
