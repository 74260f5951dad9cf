//! Values: [`Any`] and [`AnyView`] (the 16-byte tagged union of the ABI) with the conversion
//! traits through which Rust values enter and leave them, and the value types stored inline in
//! it or in it and a heap object: [`String`], [`Bytes`], [`BigInt`], [`DataType`], [`Device`], and
//! [`Optional<T>`] and [`VariantField<E>`], an optional value and one of several alternatives stored
//! as an `Any`.
pub(crate) mod any;
mod bigint;
mod bigint_ops;
mod dtype;
mod int;
pub(crate) mod moved;
mod object_cast;
mod optional;
mod string;
mod variant;

pub(crate) use any::{borrowed_tensor_error, object_wrapper_conversions, pod, PlainValue};
pub use any::{Any, AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};
pub(crate) use bigint::words_of;
pub use bigint::BigInt;
pub use dtype::{DataType, Device};
pub use optional::Optional;
pub use string::{Bytes, String, SMALL_CAPACITY};
pub use variant::VariantField;
