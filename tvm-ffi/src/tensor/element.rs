//! Element types of typed tensor access.
use crate::value::DataType;

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
