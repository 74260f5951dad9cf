//! Layer 3, data shared with other languages in place: the containers (`Array`, `List`,
//! `Map`, `Dict`, `Shape`), DLPack tensors, and loaded modules (libraries of functions, listed
//! as arrays).
pub mod container;
pub mod module;
pub mod tensor;
