//! The types of the wheel's C++ testing library (`libtvm_ffi_testing`, `src/ffi/testing/testing.cc`)
//! written with this SDK, under the key prefix `testing.rs.` (the C++ keys are taken: `import
//! tvm_ffi` loads the C++ library). Same fields, flags, defaults, creator values, methods,
//! constructors, hooks and enums; `tests/python/test_testing_twins.py` runs the same Python calls
//! on each twin and on its C++ original and compares the results.
//!
//! Deliberate differences (each asserted by the tests):
//! - `testing.TestFrozenCxx` has no twin: C++ declares it but never registers it (no metadata,
//!   no fields), so its only behaviours are a null handle and crashes.
//! - A C++ `ObjectRef` field is nullable yet reports the schema `ffi.Object`; its Rust twin is
//!   `Option<ObjectRef<AnyObject>>`, whose schema says what it holds (`Optional<ffi.Object>`).
//! - C++ reports its pointer-sized `Optional<Array<T>>` field as "any" (static type index -1),
//!   which the runtime and Python subclasses take for a 16-byte `Any`; the Rust twin
//!   (`Option<Array<T>>`, 8 bytes) reports an object pointer (64).
//! - An out-of-range value for an `int32_t` field: C++ truncates (`2**40` stores 0), Rust raises
//!   `TypeError`, as it does for arguments.
//! - Enum entries the C++ library leaves to Python (`TestCxxIntEnum`, `TestCxxStrEnum`) are Rust
//!   variants, registered when the library loads; the Python classes find and bind them.
//! - Functions, methods and constructors register their parameter names (metadata `arg_names`),
//!   which argument errors show where C++ numbers the parameters (`a: int` for `0: int`); and an
//!   explicit constructor (`refl::init` in C++, `#[ffi(init)]` here) binds keyword arguments by
//!   name, where C++ refuses them with its arity error. The tests number the names and take the
//!   C++ constructor called with the arguments bound by name as the oracle of a keyword call.
#![deny(unsafe_code)]

mod compare;
mod enums;
mod init;
mod objects;
mod schema;
mod visit;
