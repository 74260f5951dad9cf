//! Arithmetic on [`BigInt`], as C++ `ffi::BigInt` and Python `int` compute it: `+ - * / %`
//! (truncating, as Rust and C++ divide), `floor_div`/`floor_mod` (Python's `//` and `%`),
//! two's-complement `& | ^ !` and shifts (`>>` rounds toward negative infinity), conversions
//! to and from `f64`. Every result is normalised: a value that fits 64 bits is an inline `int`.
//!
//! The operators take `BigInt`s, references to them and `i64`s on either side. Like Rust's
//! integer operators they panic where there is no result (division by zero, a negative shift
//! count, a shift beyond memory); the `try_` methods return those as errors instead, in
//! Python's words: `ZeroDivisionError`, `ValueError`, `OverflowError`.
use std::cmp::Ordering;
use std::ops;

use super::bigint::BigInt;
use crate::base::error::{Error, Result};

/// Little-endian magnitude limbs, without trailing zero limbs (zero is empty).
type Limbs = Vec<u64>;

fn trim(mut limbs: Limbs) -> Limbs {
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    limbs
}

fn cmp_mag(a: &[u64], b: &[u64]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

fn add_mag(a: &[u64], b: &[u64]) -> Limbs {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = false;
    for (i, &x) in long.iter().enumerate() {
        let (s, c1) = x.overflowing_add(short.get(i).copied().unwrap_or(0));
        let (s, c2) = s.overflowing_add(u64::from(carry));
        out.push(s);
        carry = c1 || c2;
    }
    if carry {
        out.push(1);
    }
    out
}

/// `a - b` for `a >= b`.
fn sub_mag(a: &[u64], b: &[u64]) -> Limbs {
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = false;
    for (i, &x) in a.iter().enumerate() {
        let (d, b1) = x.overflowing_sub(b.get(i).copied().unwrap_or(0));
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        out.push(d);
        borrow = b1 || b2;
    }
    debug_assert!(!borrow, "sub_mag: a < b");
    trim(out)
}

fn mul_mag(a: &[u64], b: &[u64]) -> Limbs {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        let mut carry: u128 = 0;
        for (j, &y) in b.iter().enumerate() {
            let cur = u128::from(x) * u128::from(y) + u128::from(out[i + j]) + carry;
            out[i + j] = cur as u64;
            carry = cur >> 64;
        }
        out[i + b.len()] = carry as u64;
    }
    trim(out)
}

/// `(a / b, a % b)` of magnitudes, `b` non-zero.
fn divrem_mag(a: &[u64], b: &[u64]) -> (Limbs, Limbs) {
    if cmp_mag(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if let [d] = *b {
        // One limb: schoolbook with 128-bit steps.
        let d = u128::from(d);
        let mut q = vec![0u64; a.len()];
        let mut rem: u128 = 0;
        for (i, &x) in a.iter().enumerate().rev() {
            let cur = (rem << 64) | u128::from(x);
            q[i] = (cur / d) as u64;
            rem = cur % d;
        }
        return (trim(q), trim(vec![rem as u64]));
    }
    // Bit by bit (restoring division): the remainder stays below `2 * b`.
    let bits = a.len() * 64;
    let mut q = vec![0u64; a.len()];
    let mut r: Limbs = Vec::with_capacity(b.len() + 1);
    for bit in (0..bits).rev() {
        // r = 2r + bit
        let mut carry = (a[bit / 64] >> (bit % 64)) & 1;
        for limb in r.iter_mut() {
            let next = *limb >> 63;
            *limb = (*limb << 1) | carry;
            carry = next;
        }
        if carry != 0 {
            r.push(carry);
        }
        if cmp_mag(&r, b) != Ordering::Less {
            r = sub_mag(&r, b);
            q[bit / 64] |= 1 << (bit % 64);
        }
    }
    (trim(q), trim(r))
}

/// The two's-complement words of `value`, sign-extended to `len` words.
fn words_to(value: &BigInt, len: usize) -> Vec<i64> {
    let mut words = value.words().to_vec();
    let sign = if value.is_negative() { -1 } else { 0 };
    words.resize(len.max(words.len()), sign);
    words
}

fn bitwise(a: &BigInt, b: &BigInt, op: impl Fn(i64, i64) -> i64) -> BigInt {
    let len = a.words().len().max(b.words().len());
    let (x, y) = (words_to(a, len), words_to(b, len));
    let words: Vec<i64> = x.iter().zip(&y).map(|(&p, &q)| op(p, q)).collect();
    BigInt::from_words(&words)
}

fn zero_division() -> Error {
    Error::new("ZeroDivisionError", "Division by zero")
}

fn negative_shift() -> Error {
    Error::value_error("Negative BigInt shift count")
}

fn too_large_allocation() -> Error {
    Error::new("OverflowError", "BigInt allocation is too large")
}

/// A vector of `len` zero words, or the `OverflowError` of an allocation that cannot be made.
fn zeroed_words(len: usize) -> Result<Vec<i64>> {
    let mut words = Vec::new();
    words
        .try_reserve_exact(len)
        .map_err(|_| too_large_allocation())?;
    words.resize(len, 0);
    Ok(words)
}

/// The result of an operator: its value, or a panic with the error's message (as Rust's own
/// integer operators panic on division by zero).
#[track_caller]
fn or_panic(result: Result<BigInt>) -> BigInt {
    result.unwrap_or_else(|err| panic!("{}", err.message()))
}

impl BigInt {
    /// Whether the value is zero.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert!(BigInt::default().is_zero() && !BigInt::from(u128::MAX).is_zero());
    /// ```
    pub fn is_zero(&self) -> bool {
        self.words() == [0]
    }

    fn sign_magnitude(&self) -> (bool, Limbs) {
        (self.is_negative(), self.magnitude())
    }

    fn add_ref(&self, other: &BigInt) -> BigInt {
        if let (Some(a), Some(b)) = (self.to_i64(), other.to_i64()) {
            return BigInt::from(i128::from(a) + i128::from(b));
        }
        let (na, a) = self.sign_magnitude();
        let (nb, b) = other.sign_magnitude();
        if na == nb {
            return BigInt::from_magnitude(na, add_mag(&a, &b));
        }
        match cmp_mag(&a, &b) {
            Ordering::Equal => BigInt::default(),
            Ordering::Greater => BigInt::from_magnitude(na, sub_mag(&a, &b)),
            Ordering::Less => BigInt::from_magnitude(nb, sub_mag(&b, &a)),
        }
    }

    fn neg_ref(&self) -> BigInt {
        if let Some(v) = self.to_i64() {
            return BigInt::from(-i128::from(v));
        }
        let (negative, limbs) = self.sign_magnitude();
        BigInt::from_magnitude(!negative, limbs)
    }

    fn sub_ref(&self, other: &BigInt) -> BigInt {
        if let (Some(a), Some(b)) = (self.to_i64(), other.to_i64()) {
            return BigInt::from(i128::from(a) - i128::from(b));
        }
        self.add_ref(&other.neg_ref())
    }

    fn mul_ref(&self, other: &BigInt) -> BigInt {
        if let (Some(a), Some(b)) = (self.to_i64(), other.to_i64()) {
            return BigInt::from(i128::from(a) * i128::from(b));
        }
        let (na, a) = self.sign_magnitude();
        let (nb, b) = other.sign_magnitude();
        BigInt::from_magnitude(na != nb, mul_mag(&a, &b))
    }

    /// The truncating quotient and remainder (`a == q * b + r`, `r` has `a`'s sign), as Rust's
    /// and C++'s `/` and `%`; a zero divisor is a `ZeroDivisionError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// let (q, r) = BigInt::from(-7i64).div_rem(&BigInt::from(2i64)).unwrap();
    /// assert_eq!((q.to_i64(), r.to_i64()), (Some(-3), Some(-1)));
    /// let err = BigInt::from(1i64).div_rem(&BigInt::default()).unwrap_err();
    /// assert_eq!(err.to_string(), "ZeroDivisionError: Division by zero");
    /// ```
    pub fn div_rem(&self, divisor: &BigInt) -> Result<(BigInt, BigInt)> {
        if divisor.is_zero() {
            return Err(zero_division());
        }
        if let (Some(a), Some(b)) = (self.to_i64(), divisor.to_i64()) {
            let (a, b) = (i128::from(a), i128::from(b));
            return Ok((BigInt::from(a / b), BigInt::from(a % b)));
        }
        let (na, a) = self.sign_magnitude();
        let (nb, b) = divisor.sign_magnitude();
        let (q, r) = divrem_mag(&a, &b);
        Ok((
            BigInt::from_magnitude(na != nb, q),
            BigInt::from_magnitude(na, r),
        ))
    }

    /// The truncating quotient (Rust's and C++'s `/`); a zero divisor is a
    /// `ZeroDivisionError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(-7i64).try_div(&BigInt::from(2i64)).unwrap(), BigInt::from(-3i64));
    /// ```
    pub fn try_div(&self, divisor: &BigInt) -> Result<BigInt> {
        self.div_rem(divisor).map(|(q, _)| q)
    }

    /// The truncating remainder, of the dividend's sign (Rust's and C++'s `%`); a zero divisor
    /// is a `ZeroDivisionError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(-7i64).try_rem(&BigInt::from(2i64)).unwrap(), BigInt::from(-1i64));
    /// ```
    pub fn try_rem(&self, divisor: &BigInt) -> Result<BigInt> {
        self.div_rem(divisor).map(|(_, r)| r)
    }

    /// The quotient rounded toward negative infinity (Python's `//`); a zero divisor is a
    /// `ZeroDivisionError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// let quotient = BigInt::from(-7i64).floor_div(&BigInt::from(2i64)).unwrap();
    /// assert_eq!(quotient, BigInt::from(-4i64));
    /// ```
    pub fn floor_div(&self, divisor: &BigInt) -> Result<BigInt> {
        self.floor_div_mod(divisor).map(|(q, _)| q)
    }

    /// The remainder of [`floor_div`](Self::floor_div), of the divisor's sign (Python's `%`); a
    /// zero divisor is a `ZeroDivisionError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(-7i64).floor_mod(&BigInt::from(2i64)).unwrap(), BigInt::from(1i64));
    /// ```
    pub fn floor_mod(&self, divisor: &BigInt) -> Result<BigInt> {
        self.floor_div_mod(divisor).map(|(_, r)| r)
    }

    fn floor_div_mod(&self, divisor: &BigInt) -> Result<(BigInt, BigInt)> {
        let (q, r) = self.div_rem(divisor)?;
        if !r.is_zero() && r.is_negative() != divisor.is_negative() {
            Ok((q.sub_ref(&BigInt::from(1i64)), r.add_ref(divisor)))
        } else {
            Ok((q, r))
        }
    }

    /// `self * 2^count`; a negative count is a `ValueError`, a result beyond memory an
    /// `OverflowError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(3i64).try_shl(64).unwrap().to_string(), "55340232221128654848");
    /// assert_eq!(BigInt::from(1i64).try_shl(-1).unwrap_err().kind(), "ValueError");
    /// assert_eq!(BigInt::from(1i64).try_shl(i64::MAX).unwrap_err().kind(), "OverflowError");
    /// ```
    pub fn try_shl(&self, count: impl Into<BigInt>) -> Result<BigInt> {
        let count = count.into();
        if count.is_negative() {
            return Err(negative_shift());
        }
        if self.is_zero() {
            return Ok(BigInt::default());
        }
        let Some(count) = count.to_u64().and_then(|c| usize::try_from(c).ok()) else {
            return Err(Error::new(
                "OverflowError",
                "BigInt shift count is too large",
            ));
        };
        let (word_shift, bit_shift) = (count / 64, count % 64);
        let source = self.words();
        let len = word_shift
            .checked_add(source.len() + 1)
            .filter(|len| len.checked_mul(8).is_some_and(|b| b <= isize::MAX as usize))
            .ok_or_else(too_large_allocation)?;
        let mut words = zeroed_words(len)?;
        let sign = if self.is_negative() { -1i64 } else { 0 };
        let extended = source.iter().copied().chain(std::iter::once(sign));
        let mut carry: u64 = 0;
        for (slot, word) in words[word_shift..].iter_mut().zip(extended) {
            let word = word as u64;
            *slot = if bit_shift == 0 {
                word as i64
            } else {
                ((word << bit_shift) | carry) as i64
            };
            carry = if bit_shift == 0 {
                0
            } else {
                word >> (64 - bit_shift)
            };
        }
        Ok(BigInt::from_words(&words))
    }

    /// `self / 2^count` rounded toward negative infinity (an arithmetic shift); a negative
    /// count is a `ValueError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(-5i64).try_shr(1).unwrap(), BigInt::from(-3i64));
    /// assert_eq!(BigInt::from(u128::MAX).try_shr(1000).unwrap(), BigInt::default());
    /// ```
    pub fn try_shr(&self, count: impl Into<BigInt>) -> Result<BigInt> {
        let count = count.into();
        if count.is_negative() {
            return Err(negative_shift());
        }
        let source = self.words();
        let sign = if self.is_negative() { -1i64 } else { 0 };
        let Some(count) = count
            .to_u64()
            .and_then(|c| usize::try_from(c).ok())
            .filter(|c| c / 64 < source.len())
        else {
            // Every bit shifted out: the sign remains.
            return Ok(BigInt::from(sign));
        };
        let (word_shift, bit_shift) = (count / 64, count % 64);
        let kept = &source[word_shift..];
        let words: Vec<i64> = (0..kept.len())
            .map(|i| {
                let low = kept[i] as u64;
                let high = kept.get(i + 1).copied().unwrap_or(sign) as u64;
                if bit_shift == 0 {
                    low as i64
                } else {
                    ((low >> bit_shift) | (high << (64 - bit_shift))) as i64
                }
            })
            .collect();
        Ok(BigInt::from_words(&words))
    }

    /// The nearest `f64` (ties to even); beyond `f64::MAX` an `OverflowError`.
    ///
    /// ```
    /// use tvm_ffi::BigInt;
    /// assert_eq!(BigInt::from(u128::MAX).to_f64().unwrap(), 2f64.powi(128));
    /// let huge = BigInt::from(1i64).try_shl(1024).unwrap();
    /// assert_eq!(huge.to_f64().unwrap_err().kind(), "OverflowError");
    /// ```
    pub fn to_f64(&self) -> Result<f64> {
        if let Some(v) = self.to_i64() {
            return Ok(v as f64);
        }
        let (negative, limbs) = self.sign_magnitude();
        let bits = limbs.len() * 64 - limbs[limbs.len() - 1].leading_zeros() as usize;
        // The top 64 bits, with every bit below them folded into the lowest (sticky) bit, round
        // to the same double as the whole magnitude.
        let shift = bits - 64;
        let shifted = BigInt::from_magnitude(false, limbs.clone())
            .try_shr(shift as u64)?
            .to_u64()
            .unwrap_or(u64::MAX);
        let below = (0..shift).any(|bit| (limbs[bit / 64] >> (bit % 64)) & 1 != 0);
        let top = (shifted | u64::from(below)) as f64;
        let too_large = || {
            Error::new(
                "OverflowError",
                "BigInt too large to convert to a finite double",
            )
        };
        if shift > 1023 {
            return Err(too_large());
        }
        let scale = f64::from_bits(((shift as u64) + 1023) << 52);
        let magnitude = top * scale;
        if !magnitude.is_finite() {
            return Err(too_large());
        }
        Ok(if negative { -magnitude } else { magnitude })
    }
}

/// The integer part of a finite `f64` (truncated toward zero, as Python's `int(x)`); NaN is a
/// `ValueError` and an infinity an `OverflowError`.
///
/// ```
/// use tvm_ffi::BigInt;
/// assert_eq!(BigInt::try_from(-1.9).unwrap(), BigInt::from(-1i64));
/// assert_eq!(BigInt::try_from(1e30).unwrap().to_string(), "1000000000000000019884624838656");
/// assert_eq!(BigInt::try_from(f64::NAN).unwrap_err().kind(), "ValueError");
/// assert_eq!(BigInt::try_from(f64::INFINITY).unwrap_err().kind(), "OverflowError");
/// ```
impl TryFrom<f64> for BigInt {
    type Error = Error;
    fn try_from(value: f64) -> Result<BigInt> {
        if value.is_nan() {
            return Err(Error::value_error("cannot convert float NaN to BigInt"));
        }
        if value.is_infinite() {
            return Err(Error::new(
                "OverflowError",
                "cannot convert float infinity to BigInt",
            ));
        }
        let bits = value.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        if exponent < 1023 {
            // |value| < 1 (zeros and subnormals included).
            return Ok(BigInt::default());
        }
        let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        // |value| = mantissa * 2^(exponent - 1075)
        let shift = exponent - 1075;
        let magnitude = if shift >= 0 {
            BigInt::from(mantissa).try_shl(shift)?
        } else {
            BigInt::from(mantissa >> (-shift))
        };
        Ok(if value < 0.0 {
            magnitude.neg_ref()
        } else {
            magnitude
        })
    }
}

/// Binary operators on every pairing of `BigInt`, `&BigInt` and `i64`, through `$method`.
macro_rules! binary_ops {
    ($($trait:ident $fn:ident => $method:ident;)*) => {$(
        impl ops::$trait<&BigInt> for &BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: &BigInt) -> BigInt {
                $method(self, rhs)
            }
        }
        impl ops::$trait<BigInt> for &BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: BigInt) -> BigInt {
                $method(self, &rhs)
            }
        }
        impl ops::$trait<&BigInt> for BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: &BigInt) -> BigInt {
                $method(&self, rhs)
            }
        }
        impl ops::$trait<BigInt> for BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: BigInt) -> BigInt {
                $method(&self, &rhs)
            }
        }
        impl ops::$trait<i64> for &BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: i64) -> BigInt {
                $method(self, &BigInt::from(rhs))
            }
        }
        impl ops::$trait<i64> for BigInt {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: i64) -> BigInt {
                $method(&self, &BigInt::from(rhs))
            }
        }
        impl ops::$trait<&BigInt> for i64 {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: &BigInt) -> BigInt {
                $method(&BigInt::from(self), rhs)
            }
        }
        impl ops::$trait<BigInt> for i64 {
            type Output = BigInt;
            #[track_caller]
            fn $fn(self, rhs: BigInt) -> BigInt {
                $method(&BigInt::from(self), &rhs)
            }
        }
    )*};
}

fn add(a: &BigInt, b: &BigInt) -> BigInt {
    a.add_ref(b)
}
fn sub(a: &BigInt, b: &BigInt) -> BigInt {
    a.sub_ref(b)
}
fn mul(a: &BigInt, b: &BigInt) -> BigInt {
    a.mul_ref(b)
}
#[track_caller]
fn div(a: &BigInt, b: &BigInt) -> BigInt {
    or_panic(a.try_div(b))
}
#[track_caller]
fn rem(a: &BigInt, b: &BigInt) -> BigInt {
    or_panic(a.try_rem(b))
}
fn and(a: &BigInt, b: &BigInt) -> BigInt {
    bitwise(a, b, |x, y| x & y)
}
fn or(a: &BigInt, b: &BigInt) -> BigInt {
    bitwise(a, b, |x, y| x | y)
}
fn xor(a: &BigInt, b: &BigInt) -> BigInt {
    bitwise(a, b, |x, y| x ^ y)
}
#[track_caller]
fn shl(a: &BigInt, b: &BigInt) -> BigInt {
    or_panic(a.try_shl(b.clone()))
}
#[track_caller]
fn shr(a: &BigInt, b: &BigInt) -> BigInt {
    or_panic(a.try_shr(b.clone()))
}

binary_ops! {
    Add add => add;
    Sub sub => sub;
    Mul mul => mul;
    Div div => div;
    Rem rem => rem;
    BitAnd bitand => and;
    BitOr bitor => or;
    BitXor bitxor => xor;
    Shl shl => shl;
    Shr shr => shr;
}

macro_rules! assign_ops {
    ($($trait:ident $fn:ident => $method:ident;)*) => {$(
        impl ops::$trait<&BigInt> for BigInt {
            #[track_caller]
            fn $fn(&mut self, rhs: &BigInt) {
                *self = $method(self, rhs);
            }
        }
        impl ops::$trait<BigInt> for BigInt {
            #[track_caller]
            fn $fn(&mut self, rhs: BigInt) {
                *self = $method(self, &rhs);
            }
        }
        impl ops::$trait<i64> for BigInt {
            #[track_caller]
            fn $fn(&mut self, rhs: i64) {
                *self = $method(self, &BigInt::from(rhs));
            }
        }
    )*};
}

assign_ops! {
    AddAssign add_assign => add;
    SubAssign sub_assign => sub;
    MulAssign mul_assign => mul;
    DivAssign div_assign => div;
    RemAssign rem_assign => rem;
    BitAndAssign bitand_assign => and;
    BitOrAssign bitor_assign => or;
    BitXorAssign bitxor_assign => xor;
    ShlAssign shl_assign => shl;
    ShrAssign shr_assign => shr;
}

impl ops::Neg for &BigInt {
    type Output = BigInt;
    fn neg(self) -> BigInt {
        self.neg_ref()
    }
}
impl ops::Neg for BigInt {
    type Output = BigInt;
    fn neg(self) -> BigInt {
        self.neg_ref()
    }
}
impl ops::Not for &BigInt {
    type Output = BigInt;
    fn not(self) -> BigInt {
        let words: Vec<i64> = self.words().iter().map(|w| !w).collect();
        BigInt::from_words(&words)
    }
}
impl ops::Not for BigInt {
    type Output = BigInt;
    fn not(self) -> BigInt {
        !&self
    }
}
