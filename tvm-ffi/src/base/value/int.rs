//! Rust integers as values: `int` (and `bool`, which converts to an integer), with the
//! values beyond `i64` (`u64`, `usize`) carried as an `ffi.BigInt`, as Python does.
use super::any::{int_value, pod, Any, AnyView, FromAny, IntoAny, TypeSchema};
use super::bigint::{words_of, words_to_i128, BigInt};
use crate::abi::sys::{type_index as ti, TVMFFIAnyValue};

/// The value of an `ffi.BigInt` of at most two words: Python passes `2**63 .. 2**64-1` (a
/// `u64`) as one.
#[cold]
fn wide_int_value(view: &AnyView<'_>) -> Option<i128> {
    if view.raw.type_index != ti::kTVMFFIBigInt {
        return None;
    }
    words_of(view).and_then(words_to_i128)
}

macro_rules! impl_int {
    ($($t:ty),*) => {$(
        impl TypeSchema for $t {
            fn type_str() -> String { "int".into() }
        }
        impl<'a> FromAny<'a> for $t {
            // Every `int` converts to the types that hold every `i64`.
            const CONVERTS_FROM_EVERY: Option<i32> =
                if <$t>::MIN as i128 <= i64::MIN as i128 && <$t>::MAX as i128 >= i64::MAX as i128 {
                    Some(ti::kTVMFFIInt)
                } else {
                    None
                };
            #[inline]
            fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
                match int_value(view, true) {
                    Some(v) => <$t>::try_from(v).ok(),
                    None => wide_int_value(view).and_then(|v| <$t>::try_from(v).ok()),
                }
            }
            #[inline]
            fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
                match int_value(view, false) {
                    Some(v) => <$t>::try_from(v).ok(),
                    None => wide_int_value(view).and_then(|v| <$t>::try_from(v).ok()),
                }
            }
            /// An `int` (a `bool` converts), or an `ffi.BigInt` beyond `i64` (`u64`, `usize`).
            fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
                Self::from_any(view).map(IntoAny::into_any)
            }
            fn describe_mismatch(view: &AnyView<'_>) -> String {
                match int_value(view, true) {
                    Some(v) => format!("`int` (value {v} is out of range for `{}`)", stringify!($t)),
                    None => format!("`{}`", view.type_key()),
                }
            }
            #[inline(always)]
            fn from_checked(view: &'a AnyView<'a>) -> Option<Self> {
                from_checked_int(view).map(|v| v as $t)
            }
            #[inline]
            fn match_type_index(index: i32) -> bool {
                index == ti::kTVMFFIInt || index == ti::kTVMFFIBigInt
            }
        }
    )*};
}
impl_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// An integer known to convert: an `int` or a `bool` in range (both store `v_int64`), except
/// that `u64`/`usize` also take an `ffi.BigInt`, read through the checked path.
#[inline(always)]
fn from_checked_int(view: &AnyView<'_>) -> Option<i64> {
    if view.raw.type_index == ti::kTVMFFIBigInt {
        return wide_int_value(view).map(|v| v as i64);
    }
    // SAFETY: every value has 8 initialised value bytes; for the int and bool a checked value
    // is, they are its `v_int64`.
    Some(unsafe { view.raw.value.v_int64 })
}

macro_rules! impl_int_into_any {
    ($($t:ty),*) => {$(
        impl IntoAny for $t {
            #[inline]
            fn into_any(self) -> Any {
                Any { raw: pod(ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: self as i64 }) }
            }
        }
    )*};
}
impl_int_into_any!(i8, i16, i32, i64, isize, u8, u16, u32);

macro_rules! impl_wide_unsigned_into_any {
    ($($t:ty),*) => {$(
        impl IntoAny for $t {
            /// An `int`, or an `ffi.BigInt` above `i64::MAX` (Python receives the same `int`).
            #[inline]
            fn into_any(self) -> Any {
                match i64::try_from(self) {
                    Ok(v) => v.into_any(),
                    Err(_) => BigInt::from(self).into_any(),
                }
            }
        }
    )*};
}
impl_wide_unsigned_into_any!(u64, usize);
