//! Element types of typed tensor access.
use crate::base::value::DataType;

/// A Rust type that typed tensor access can read and write: `f32`, `f64`, `i8`..`i64`,
/// `u8`..`u64`, [`half::f16`] (`float16`) and [`half::bf16`] (`bfloat16`).
///
/// Types without a Rust element type (fp8 such as `float8_e4m3fn`, the packed sub-byte types
/// `int4`, `float4_e2m1fn`, ..., and `bool`) are read and written as bytes
/// ([`TensorView::as_bytes`](super::TensorView::as_bytes)).
///
/// # Safety
/// `DTYPE` must describe `Self` exactly (`bits * lanes` is `8 * size_of::<Self>()`; checked at
/// compile time where the type is used), `Self` must have no padding, and every bit pattern of
/// that size must be a valid `Self` (foreign code may have written anything). That last rule is
/// why `bool` is not an element type.
///
/// ```
/// use tvm_ffi::{half::f16, DataType, Element, Tensor};
/// assert_eq!(f32::DTYPE, DataType::FLOAT32);
/// assert_eq!(f16::DTYPE, DataType::FLOAT16);
/// // Typed access checks the tensor's dtype against `T::DTYPE`.
/// let tensor = Tensor::from_slice(&[1i32, 2], &[2]).unwrap();
/// assert_eq!(tensor.dtype(), i32::DTYPE);
/// assert!(tensor.as_slice::<f32>().is_err());
/// ```
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The DLPack data type of one element.
    const DTYPE: DataType;
}

/// Fails to compile (when instantiated) for an `Element` impl whose `DTYPE` has another size
/// than the type, such as a byte-sized type claiming a packed 4-bit dtype: typed slices would
/// then address more memory than the tensor has.
#[inline(always)]
pub(super) fn assert_element_size<T: Element>() {
    const {
        assert!(
            T::DTYPE.bits() as usize * T::DTYPE.lanes() as usize == 8 * std::mem::size_of::<T>(),
            "Element::DTYPE must have the size of the element type"
        )
    }
}

macro_rules! element {
    ($($t:ty => $dtype:expr),* $(,)?) => {$(
        // SAFETY: a plain number type whose DLPack type has the same size and no padding;
        // every bit pattern is a valid value.
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
    // `#[repr(transparent)]` over `u16`: every bit pattern is a (possibly NaN) value.
    half::f16 => DataType::FLOAT16,
    half::bf16 => DataType::BFLOAT16,
);
