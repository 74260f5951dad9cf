//! Layer 2, calling across the ABI: [`Function`] (closures as FFI functions, typed calls, the
//! global registry, the `extern "C"` boundary, module exports, the metadata JSON of
//! signatures) and `env` (the current stream of each device, the DLPack allocator, signal
//! checks).
//!
//! [`Function`]: function::Function
pub mod env;
pub mod function;
