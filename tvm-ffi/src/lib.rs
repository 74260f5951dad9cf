//! Author TVM-FFI types and functions in Rust.
//!
//! This crate binds the stable C ABI of `libtvm_ffi` (the PyPI wheel `apache-tvm-ffi`,
//! pinned to 0.1.15.post2) and lets Rust code define objects and functions that Python, C++
//! and Rust use alike.
//!
//! - [`ObjectRef<T>`]: reference-counted objects with the runtime's 24-byte header;
//! - [`Any`] / [`AnyView`]: the 16-byte tagged union, with `cast`, `try_cast`, `as_exact`;
//! - [`String`], [`Bytes`], [`Array`], [`Map`], [`DataType`], [`Device`];
//! - [`Tensor`] / [`TensorView`] / [`TensorMut`]: DLPack tensors shared with NumPy, PyTorch
//!   and C++ without copying;
//! - [`Function`]: closures as FFI functions, typed calls, the global registry;
//! - [`export`]: module exports (`#[ffi_func(export = "...")]`) for `tvm_ffi.load_module`;
//! - [`Error`] / [`Result`]: errors with kind, message and backtrace; panics never cross
//!   the ABI.
//!
//! ```
//! use tvm_ffi::{Function, String};
//! let echo = Function::get_global("testing.echo");
//! let add = Function::from_typed(|a: i64, b: i64| a + b);
//! add.register_global("doc_example.add", true).unwrap();
//! let again = Function::get_global("doc_example.add").unwrap();
//! assert_eq!(again.call_as::<i64, _>((2, 3)).unwrap(), 5);
//! let s = String::from("hello, world");
//! assert_eq!(&*s, "hello, world");
//! # let _ = echo;
//! ```
//!
//! Object types are plain `#[repr(C)]` structs; the derive registers them (key, parent,
//! reflected fields, constructor) when the library or executable loads:
//!
//! ```
//! use tvm_ffi::{ffi_methods, Any, Object, ObjectRef, Rw};
//!
//! /// A counter.
//! #[derive(Object, Clone)]
//! #[ffi_type(key = "doc_example.Counter")]
//! #[repr(C)]
//! pub struct Counter {
//!     #[ffi(rw)]
//!     pub count: Rw<i64>,
//!     #[ffi(default = "c")]
//!     pub name: tvm_ffi::String,
//! }
//!
//! #[ffi_methods]
//! impl Counter {
//!     pub fn next(&self) -> i64 {
//!         let n = self.count.get() + 1;
//!         self.count.set(n);
//!         n
//!     }
//! }
//!
//! let c = ObjectRef::new(Counter { count: 1.into(), name: "c".into() });
//! assert_eq!(c.next(), 2);
//! assert_eq!(Counter::type_key(), "doc_example.Counter");
//! let any = Any::new(c.clone());
//! assert!(any.cast::<ObjectRef<Counter>>().unwrap().ptr_eq(&c));
//! assert_eq!(format!("{c:?}"), r#"doc_example.Counter(count=2, name="c")"#);
//! ```
#![warn(missing_docs)]

pub mod any;
pub mod array;
pub mod boundary;
pub mod builtin;
pub mod dtype;
pub mod error;
pub mod export;
pub mod function;
pub mod map;
pub mod metadata;
pub mod object;
pub mod reflection;
pub mod registry;
pub mod rw;
pub mod string;
pub mod sys;
pub mod tensor;
pub mod type_info;
pub mod version;

pub use any::{Any, AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};
pub use array::Array;
pub use dtype::{DataType, Device};
pub use error::{Error, Result};
pub use function::{Function, IntoArg, IntoArgs};
pub use map::Map;
pub use object::{IsA, ObjectRef, ObjectType, WeakRef};
pub use rw::Rw;
pub use string::{Bytes, String};
pub use tensor::{DLPackTensor, Element, Tensor, TensorCheck, TensorMut, TensorView};
pub use tvm_ffi_macros::{ffi_func, ffi_methods, Object};

/// Where the build found libtvm_ffi (the wheel's `lib` and `include` directories).
pub mod build_info {
    /// Directory holding `libtvm_ffi.so` (and `libtvm_ffi_testing.so`).
    pub const LIBDIR: &str = env!("TVM_FFI_LIBDIR");
    /// Directory holding the wheel's C/C++ headers (`tvm/ffi/c_api.h`).
    pub const INCLUDEDIR: &str = env!("TVM_FFI_INCLUDEDIR");
}

/// Re-exports used by generated code. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use linkme;
}
