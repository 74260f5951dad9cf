//! Layer 4, what the type registry knows about types: reflected fields (`Rw<T>`, construction
//! state, accessors, creators), Rust enums as TVM-FFI enums, structural equality and hashing, structural walk, visit, map and mutate,
//! JSON graph serialization, and matching values against typed arms (`match_any!`).
pub mod enums;
pub mod matching;
pub(crate) mod mutate;
pub(crate) mod mutate_callbacks;
pub(crate) mod mutate_policy;
pub mod reflection;
pub mod serialization;
pub mod structural;
pub(crate) mod visit;
pub(crate) mod visit_callbacks;
pub(crate) mod visit_error_context;
pub(crate) mod visit_hook;
pub(crate) mod visit_policy;
