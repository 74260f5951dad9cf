//! Layer 5, what the type registry knows about types: reflected fields (`Rw<T>`, construction
//! state, accessors, creators), Rust enums as TVM-FFI enums, structural equality and hashing
//! (and `structural`, the public module that also carries the traversal of layer 4), JSON graph
//! serialization, and matching values against typed arms (`match_any!`).
pub mod enums;
pub mod matching;
pub mod reflection;
pub mod serialization;
pub mod structural;
