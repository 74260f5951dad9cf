//! Layer 4, what the type registry knows about types: reflected fields (`Rw<T>`, construction
//! state, accessors, creators), Rust enums as TVM-FFI enums, structural equality and hashing,
//! and JSON graph serialization.
pub mod enums;
pub mod reflection;
pub mod serialization;
pub mod structural;
