//! Layer 1, the values everything else is made of: the object header and [`ObjectRef`]
//! (`object`), errors and panics as errors (`error`, which uses `object`), and the tagged union
//! [`Any`] with its value types (`value`, which uses both).
//!
//! [`ObjectRef`]: object::ObjectRef
//! [`Any`]: value::Any
pub mod error;
pub mod object;
pub mod value;
