//! [`VariantField<E>`]: a field holding one of several value types, stored as the 16-byte `Any`, as
//! C++ stores `ffi::Variant<A, B, ..>`. `E` is a Rust enum of the alternatives with
//! `#[derive(tvm_ffi::Variant)]`.
use std::fmt;
use std::marker::PhantomData;

use super::any::{Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::abi::sys::TVMFFIAny;

/// A field of variant type `E` (an enum with `#[derive(tvm_ffi::Variant)]`), stored as the
/// runtime's 16-byte `Any` holding the current alternative, the layout of C++
/// `ffi::Variant<..>`.
///
/// ```
/// use tvm_ffi::{Any, Variant, VariantField};
///
/// #[derive(Variant, Clone, Debug, PartialEq)]
/// pub enum IntOrStr {
///     Int(i64),
///     Str(tvm_ffi::String),
/// }
///
/// let v: VariantField<IntOrStr> = IntOrStr::Int(3).into();
/// assert_eq!(v.get(), IntOrStr::Int(3));
/// // As arguments and results the enum converts to whichever alternative matches first.
/// assert_eq!(Any::new("text").cast::<IntOrStr>().unwrap(), IntOrStr::Str("text".into()));
/// assert!(Any::new(1.5).cast::<IntOrStr>().is_err());
/// ```
#[repr(transparent)]
pub struct VariantField<E> {
    /// Invariant: a value that converts to `E` (or `None` while an object is under
    /// construction: the field is unset).
    value: Any,
    _value: PhantomData<fn() -> E>,
}

impl<E: IntoAny> VariantField<E> {
    /// Stores `value`.
    pub fn new(value: E) -> Self {
        VariantField {
            value: value.into_any(),
            _value: PhantomData,
        }
    }
}

impl<E: for<'a> FromAny<'a>> VariantField<E> {
    /// The current alternative.
    pub fn get(&self) -> E {
        self.value
            .checked_cast::<E>()
            .expect("a Variant holds one of its alternatives")
    }
}

impl<E> VariantField<E> {
    /// The stored value as an `Any`.
    pub fn as_any(&self) -> &Any {
        &self.value
    }

    /// The raw 16-byte value.
    pub fn as_raw(&self) -> &TVMFFIAny {
        self.value.as_raw()
    }
}

impl<E> Clone for VariantField<E> {
    fn clone(&self) -> Self {
        VariantField {
            value: self.value.clone(),
            _value: PhantomData,
        }
    }
}

impl<E: IntoAny> From<E> for VariantField<E> {
    fn from(value: E) -> Self {
        VariantField::new(value)
    }
}

impl<E: for<'a> FromAny<'a> + PartialEq> PartialEq for VariantField<E> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<E: for<'a> FromAny<'a> + fmt::Debug> fmt::Debug for VariantField<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl<E: TypeSchema> TypeSchema for VariantField<E> {
    fn type_str() -> String {
        E::type_str()
    }
    fn type_schema() -> String {
        E::type_schema()
    }
}

impl<E> IntoAny for VariantField<E> {
    fn into_any(self) -> Any {
        self.value
    }
}

impl<'a, E: for<'b> FromAny<'b> + IntoAny + TypeSchema> FromAny<'a> for VariantField<E> {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        E::from_any(view).map(VariantField::new)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        E::describe_mismatch(view)
    }
}
