//! [`BigInt`]: integers of any size, as C++ `ffi::BigInt` and Python `int`: an `int` (stored
//! inline) whenever the value fits 64 bits, an immutable `ffi.BigInt` object beyond.
use std::cmp::Ordering;
use std::fmt;
use std::ptr::NonNull;

use super::any::{pod, Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIAnyValue};
use crate::abi::AllocFailure;
use crate::base::error::Error;
use crate::base::object;

/// Offset of the word count in a `BigIntObj` (after the 24-byte header).
const SIZE_OFFSET: usize = 24;
/// Offset of the first word in a `BigIntObj`.
const WORDS_OFFSET: usize = 32;

/// An integer of any size (C++ `ffi::BigInt`, `{"type":"ffi.BigInt"}`): what Python passes
/// for an `int` beyond 64 bits.
///
/// Stored as the runtime stores it, a 16-byte `Any`: an `int` when the value fits `i64`, else
/// an immutable `ffi.BigInt` object holding the minimal two's-complement words (least
/// significant first). It converts from `int`, `bool` and `ffi.BigInt` values, and to Python
/// as a plain `int`.
///
/// ```
/// use tvm_ffi::BigInt;
/// let big = BigInt::from(u128::MAX);
/// assert_eq!(big.to_string(), "340282366920938463463374607431768211455");
/// assert_eq!(big.to_u128(), Some(u128::MAX));
/// assert_eq!(big.to_i64(), None);
/// assert_eq!(BigInt::from(-5i64).words(), &[-5]);
/// assert_eq!("-18446744073709551616".parse::<BigInt>().unwrap().words(), &[0, -1]);
/// ```
#[repr(transparent)]
pub struct BigInt {
    raw: TVMFFIAny,
}

// SAFETY: an inline integer or a strong reference to an immutable object.
unsafe impl Send for BigInt {}
// SAFETY: as above.
unsafe impl Sync for BigInt {}

/// The words of an integer value (`int` or `ffi.BigInt`), least significant first, borrowed
/// from the view's storage; `None` for other types.
pub(crate) fn words_of<'a>(view: &'a AnyView<'a>) -> Option<&'a [i64]> {
    let raw = view.as_raw();
    match raw.type_index {
        ti::kTVMFFIInt => {
            // SAFETY: an int stores v_int64, which lives inside `*view` for 'a.
            Some(std::slice::from_ref(unsafe { &raw.value.v_int64 }))
        }
        ti::kTVMFFIBigInt if layout_verified() => {
            // SAFETY: a BigInt object is the header, the word count at SIZE_OFFSET and that
            // many words at WORDS_OFFSET (verified against the runtime's accessor); it is
            // immutable and outlives the view ('a).
            unsafe {
                let obj = raw.value.v_obj as *const u8;
                let len = (obj.add(SIZE_OFFSET) as *const usize).read();
                Some(std::slice::from_raw_parts(
                    obj.add(WORDS_OFFSET) as *const i64,
                    len,
                ))
            }
        }
        ti::kTVMFFIBigInt => runtime_words(view),
        _ => None,
    }
}

/// The words through the runtime's accessor (`TVMFFIBigIntGetContentByteArray`): what
/// [`words_of`] reads when the in-place layout did not verify.
#[cold]
fn runtime_words<'a>(view: &'a AnyView<'a>) -> Option<&'a [i64]> {
    // SAFETY: a valid BigInt value; the result borrows the immutable object, alive for 'a.
    let bytes = unsafe { sys::TVMFFIBigIntGetContentByteArray(view.as_raw()) };
    let data = bytes.data as *const i64;
    if bytes.size % 8 != 0 || (bytes.size > 0 && (data.is_null() || !data.is_aligned())) {
        return None;
    }
    if bytes.size == 0 {
        return Some(&[]);
    }
    // SAFETY: `size / 8` aligned native words owned by the object, alive for 'a.
    Some(unsafe { std::slice::from_raw_parts(data, bytes.size / 8) })
}

/// Whether `ffi.BigInt` objects keep their word count at `SIZE_OFFSET` and the words at
/// `WORDS_OFFSET` (a private C++ layout, only guarded by the version check), checked once
/// against the runtime's own accessor on objects it made. When they disagree, [`words_of`]
/// goes through the accessor; when they agree, the cost is one cached flag.
#[inline]
pub(crate) fn layout_verified() -> bool {
    static VERIFIED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VERIFIED.get_or_init(|| {
        [&[1_i64, 2][..], &[0, -1], &[5, -6, 7, i64::MIN, 9]]
            .iter()
            .all(|words| {
                let big = BigInt::from_words(words);
                let raw = big.as_raw();
                if raw.type_index != ti::kTVMFFIBigInt {
                    return false;
                }
                // SAFETY: a live BigInt value (`big` holds it).
                let content = unsafe { sys::TVMFFIBigIntGetContentByteArray(raw) };
                // SAFETY: an object index stores the object pointer; only its address is used
                // before the runtime confirmed it, then the count it says is there.
                let obj = unsafe { raw.value.v_obj } as *const u8 as usize;
                content.data as usize == obj + WORDS_OFFSET
                    && content.size == std::mem::size_of_val(*words)
                    // SAFETY: the runtime's accessor located the words at WORDS_OFFSET, so
                    // the object extends past SIZE_OFFSET.
                    && unsafe { ((obj + SIZE_OFFSET) as *const usize).read() } == words.len()
            })
    })
}

/// The value of at most two words as an `i128` (`None` beyond).
pub(crate) fn words_to_i128(words: &[i64]) -> Option<i128> {
    match *words {
        [] => Some(0),
        [w] => Some(i128::from(w)),
        [lo, hi] => Some((i128::from(hi) << 64) | i128::from(lo as u64)),
        _ => None,
    }
}

impl BigInt {
    /// The integer whose two's-complement words (least significant first) are `words`;
    /// redundant sign words are dropped, an empty slice is zero.
    pub fn from_words(words: &[i64]) -> BigInt {
        if let [w] = *words {
            return BigInt::from(w);
        }
        // Whole words in native byte order, as the runtime reads them.
        let bytes = sys::TVMFFIByteArray {
            data: words.as_ptr() as *const std::ffi::c_char,
            size: std::mem::size_of_val(words),
        };
        let mut out = TVMFFIAny::NONE;
        // SAFETY: valid input of whole words and an output slot; the runtime copies them.
        let rc = unsafe { sys::TVMFFIBigIntFromByteArray(&bytes, &mut out) };
        if rc != 0 {
            // The input is always whole words, so only the allocation can fail.
            drop(Error::from_return_code(rc));
            AllocFailure::raise(bytes.size);
        }
        BigInt { raw: out }
    }

    /// The minimal two's-complement words, least significant first (one word for a value
    /// that fits `i64`).
    pub fn words(&self) -> &[i64] {
        // All-zero storage (a field no one has set) reads as zero.
        words_of(self.view_ref()).unwrap_or(&[0])
    }

    /// Whether the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.words().last().is_some_and(|w| *w < 0)
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match *self.words() {
            [w] => Some(w),
            _ => None,
        }
    }

    /// The value as an `i128`, if it fits.
    pub fn to_i128(&self) -> Option<i128> {
        words_to_i128(self.words())
    }

    /// The value as a `u64`, if it fits.
    pub fn to_u64(&self) -> Option<u64> {
        self.to_i128().and_then(|v| u64::try_from(v).ok())
    }

    /// The value as a `u128`, if it fits.
    pub fn to_u128(&self) -> Option<u128> {
        match *self.words() {
            [lo, hi, 0] if hi < 0 => Some(((hi as u64 as u128) << 64) | lo as u64 as u128),
            _ => self.to_i128().and_then(|v| u128::try_from(v).ok()),
        }
    }

    /// The raw 16-byte value (an `int` or an `ffi.BigInt` object).
    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.raw
    }

    fn view_ref(&self) -> &AnyView<'_> {
        // SAFETY: AnyView is repr(transparent) over TVMFFIAny; `self` owns what it refers to.
        unsafe { &*(&self.raw as *const TVMFFIAny as *const AnyView<'_>) }
    }

    /// A borrowed view of the value (no reference count change).
    pub fn as_view(&self) -> AnyView<'_> {
        // SAFETY: `self` owns the value its raw form describes, for as long as borrowed.
        unsafe { AnyView::of_owned_raw(&self.raw) }
    }

    /// The magnitude as little-endian `u64` limbs (no trailing zero limbs).
    pub(super) fn magnitude(&self) -> Vec<u64> {
        let words = self.words();
        let mut limbs: Vec<u64> = words.iter().map(|w| *w as u64).collect();
        if self.is_negative() {
            // Two's-complement negation: invert, add one.
            let mut carry = true;
            for limb in &mut limbs {
                let (v, c) = (!*limb).overflowing_add(carry as u64);
                *limb = v;
                carry = c;
            }
        }
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
        limbs
    }

    /// The integer `sign * magnitude` (little-endian limbs).
    pub(super) fn from_magnitude(negative: bool, mut limbs: Vec<u64>) -> BigInt {
        // A zero top word keeps the value positive before any negation.
        limbs.push(0);
        if negative {
            let mut carry = true;
            for limb in &mut limbs {
                let (v, c) = (!*limb).overflowing_add(carry as u64);
                *limb = v;
                carry = c;
            }
        }
        let words: Vec<i64> = limbs.into_iter().map(|l| l as i64).collect();
        BigInt::from_words(&words)
    }
}

impl Clone for BigInt {
    fn clone(&self) -> Self {
        if self.raw.type_index == ti::kTVMFFIBigInt {
            // SAFETY: we hold a strong reference to the object.
            unsafe { object::inc_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
        }
        BigInt { raw: self.raw }
    }
}

impl Drop for BigInt {
    fn drop(&mut self) {
        if self.raw.type_index == ti::kTVMFFIBigInt {
            // SAFETY: we own one strong reference to the object.
            unsafe { object::dec_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
        }
    }
}

impl Default for BigInt {
    fn default() -> Self {
        BigInt::from(0i64)
    }
}

macro_rules! from_small_int {
    ($($t:ty),*) => {$(
        impl From<$t> for BigInt {
            #[inline]
            fn from(value: $t) -> Self {
                BigInt { raw: pod(ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: value as i64 }) }
            }
        }
    )*};
}
from_small_int!(i8, i16, i32, i64, isize, u8, u16, u32);

/// `0` or `1`, as C++ converts a `bool` to an integer.
///
/// ```
/// use tvm_ffi::BigInt;
/// assert_eq!(BigInt::from(true), BigInt::from(1i64));
/// assert_eq!(BigInt::from(false).to_i64(), Some(0));
/// ```
impl From<bool> for BigInt {
    #[inline]
    fn from(value: bool) -> Self {
        BigInt::from(i64::from(value))
    }
}

impl From<u64> for BigInt {
    fn from(value: u64) -> Self {
        BigInt::from(i128::from(value))
    }
}
impl From<usize> for BigInt {
    fn from(value: usize) -> Self {
        BigInt::from(value as u64)
    }
}
impl From<i128> for BigInt {
    fn from(value: i128) -> Self {
        match i64::try_from(value) {
            Ok(v) => BigInt::from(v),
            Err(_) => BigInt::from_words(&[value as i64, (value >> 64) as i64]),
        }
    }
}
impl From<u128> for BigInt {
    fn from(value: u128) -> Self {
        match i128::try_from(value) {
            Ok(v) => BigInt::from(v),
            Err(_) => BigInt::from_words(&[value as i64, (value >> 64) as i64, 0]),
        }
    }
}

impl PartialEq for BigInt {
    fn eq(&self, other: &Self) -> bool {
        // Canonical words: equal values have equal words.
        self.words() == other.words()
    }
}
impl Eq for BigInt {}

impl std::hash::Hash for BigInt {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words().hash(state)
    }
}

impl Ord for BigInt {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.words(), other.words());
        match (self.is_negative(), other.is_negative()) {
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {}
        }
        // Same sign, minimal words: more words means a larger magnitude.
        let by_len = a.len().cmp(&b.len());
        let by_len = if self.is_negative() {
            by_len.reverse()
        } else {
            by_len
        };
        if by_len != Ordering::Equal {
            return by_len;
        }
        // Same length: the top words compare signed, the lower ones unsigned.
        let (top_a, top_b) = (a[a.len() - 1], b[b.len() - 1]);
        top_a.cmp(&top_b).then_with(|| {
            a.iter()
                .rev()
                .skip(1)
                .zip(b.iter().rev().skip(1))
                .map(|(x, y)| (*x as u64).cmp(&(*y as u64)))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        })
    }
}
impl PartialOrd for BigInt {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// 10^19, the largest power of ten in a `u64`.
const TEN_POW_19: u64 = 10_000_000_000_000_000_000;

impl fmt::Display for BigInt {
    /// Decimal, as Python prints an `int`; the integer flags apply (`{:>22}`, `{:+}`, `{:08}`).
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// let big = BigInt::from(u64::MAX);
    /// assert_eq!(format!("{big}"), "18446744073709551615");
    /// assert_eq!(format!("{big:>22}"), "  18446744073709551615");
    /// assert_eq!(format!("{:+}", BigInt::from(7i64)), "+7");
    /// assert_eq!(format!("{:05}", BigInt::from(-7i64)), "-0007");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.decimal_magnitude();
        f.pad_integral(!self.is_negative(), "", &digits)
    }
}

impl BigInt {
    /// The decimal digits of the magnitude.
    fn decimal_magnitude(&self) -> std::string::String {
        if let Some(v) = self.to_i128() {
            return v.unsigned_abs().to_string();
        }
        let mut limbs = self.magnitude();
        // Chunks of 19 digits, least significant first.
        let mut chunks = Vec::new();
        while !limbs.is_empty() {
            let mut rem: u128 = 0;
            for limb in limbs.iter_mut().rev() {
                let cur = (rem << 64) | u128::from(*limb);
                *limb = (cur / u128::from(TEN_POW_19)) as u64;
                rem = cur % u128::from(TEN_POW_19);
            }
            chunks.push(rem as u64);
            while limbs.last() == Some(&0) {
                limbs.pop();
            }
        }
        let mut out = std::string::String::new();
        let mut rest = chunks.iter().rev();
        if let Some(first) = rest.next() {
            out.push_str(&first.to_string());
        }
        for chunk in rest {
            out.push_str(&format!("{chunk:019}"));
        }
        out
    }
}

impl fmt::Debug for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for BigInt {
    type Err = Error;
    /// Parses a decimal integer with an optional sign (`ValueError` otherwise).
    fn from_str(text: &str) -> Result<Self, Error> {
        let invalid = || Error::value_error(format!("invalid literal for BigInt: {text:?}"));
        let (negative, digits) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let mut limbs: Vec<u64> = Vec::new();
        for chunk in digits.as_bytes().chunks(19) {
            let scale = 10u128.pow(chunk.len() as u32);
            let mut carry: u128 = chunk
                .iter()
                .fold(0u128, |acc, d| acc * 10 + u128::from(d - b'0'));
            for limb in &mut limbs {
                let cur = u128::from(*limb) * scale + carry;
                *limb = cur as u64;
                carry = cur >> 64;
            }
            if carry != 0 {
                limbs.push(carry as u64);
            }
        }
        Ok(BigInt::from_magnitude(negative, limbs))
    }
}

impl TypeSchema for BigInt {
    fn type_str() -> std::string::String {
        "BigInt".into()
    }
    fn type_schema() -> std::string::String {
        r#"{"type":"ffi.BigInt"}"#.into()
    }
}

impl IntoAny for BigInt {
    fn into_any(self) -> Any {
        let raw = self.raw;
        std::mem::forget(self);
        // SAFETY: the reference (if any) moves from `self` into the Any.
        unsafe { Any::from_raw(raw) }
    }
}
impl IntoAny for &BigInt {
    fn into_any(self) -> Any {
        self.clone().into_any()
    }
}

impl BigInt {
    /// The integer in `view`: `int` and `ffi.BigInt`, and `bool` when `allow_bool`.
    fn from_view(view: &AnyView<'_>, allow_bool: bool) -> Option<BigInt> {
        let raw = *view.as_raw();
        match raw.type_index {
            // SAFETY: int and bool store v_int64.
            ti::kTVMFFIInt => Some(BigInt::from(unsafe { raw.value.v_int64 })),
            // SAFETY: as above.
            ti::kTVMFFIBool if allow_bool => Some(BigInt::from(unsafe { raw.value.v_int64 })),
            ti::kTVMFFIBigInt => {
                // SAFETY: a live BigInt object borrowed by the view; we take a reference.
                unsafe { object::inc_ref(NonNull::new_unchecked(raw.value.v_obj)) };
                Some(BigInt { raw })
            }
            _ => None,
        }
    }
}

impl<'a> FromAny<'a> for BigInt {
    /// `int`, `ffi.BigInt` and `bool`, as C++ `BigInt` accepts.
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        BigInt::from_view(view, true)
    }
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        BigInt::from_view(view, false)
    }
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
}

// ---- 128-bit integers: `int` values, `ffi.BigInt` beyond 64 bits ----
macro_rules! impl_wide_int {
    ($($t:ty => $to:ident),*) => {$(
        impl TypeSchema for $t {
            fn type_str() -> std::string::String { "int".into() }
        }
        impl IntoAny for $t {
            /// An `int`, or an `ffi.BigInt` when the value does not fit 64 bits.
            fn into_any(self) -> Any {
                BigInt::from(self).into_any()
            }
        }
        impl<'a> FromAny<'a> for $t {
            fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
                BigInt::from_view(view, true).and_then(|v| v.$to())
            }
            fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
                BigInt::from_view(view, false).and_then(|v| v.$to())
            }
            fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
                Self::from_any(view).map(IntoAny::into_any)
            }
            fn describe_mismatch(view: &AnyView<'_>) -> std::string::String {
                match BigInt::from_view(view, true) {
                    Some(v) => format!("`int` (value {v} is out of range for `{}`)", stringify!($t)),
                    None => format!("`{}`", view.type_key()),
                }
            }
        }
    )*};
}
impl_wide_int!(i128 => to_i128, u128 => to_u128);

#[cfg(test)]
mod layout_tests {
    use super::*;

    /// The in-place words are the runtime accessor's, which is what `words_of` falls back to.
    #[test]
    fn in_place_words_match_the_runtime_accessor() {
        assert!(layout_verified());
        for words in [
            &[3_i64, 4][..],
            &[0, i64::MIN],
            &[-1, 0],
            &[1, 2, 3, 4, 5, 6, 7],
        ] {
            let big = BigInt::from_words(words);
            let view = big.view_ref();
            assert_eq!(words_of(view), Some(words));
            assert_eq!(runtime_words(view), Some(words));
        }
    }
}
