//! Layer 2, calling across the ABI: [`Function`] (closures as FFI functions, typed calls, the
//! global registry, the `extern "C"` boundary, module exports, the metadata JSON of
//! signatures), `env` (the current stream of each device, the DLPack allocator, signal
//! checks) and `python` (the C-level callables of a shipped package: its classes' `__call__`, its keyword-taking functions).
//!
//! [`Function`]: function::Function
pub mod env;
pub mod function;
mod python;
