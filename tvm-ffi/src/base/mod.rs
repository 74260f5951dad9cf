//! Layer 1, the values everything else is made of: the object header and [`ObjectRef`]
//! (`object`), errors and panics as errors (`error`, which uses `object`), the tagged union
//! [`Any`] with its value types (`value`, which uses both), and the process-wide locks that
//! every Rust library of a process shares (`lock`: containers, `Rw` fields and the runtime's
//! global function table; it uses `object` and `error`).
//!
//! [`ObjectRef`]: object::ObjectRef
//! [`Any`]: value::Any
pub mod error;
pub(crate) mod lock;
pub mod object;
pub mod value;
