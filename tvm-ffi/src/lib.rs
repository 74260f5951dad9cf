#![doc = include_str!("../README.md")]
//!
//! # The crate at a glance
//!
//! This crate binds the stable C ABI of `libtvm_ffi` (the PyPI wheel `apache-tvm-ffi`,
//! pinned to 0.1.15.post2) and lets Rust code define objects and functions that Python, C++
//! and Rust use alike.
//!
//! - [`ObjectRef<T>`]: reference-counted objects with the runtime's 24-byte header;
//! - [`Any`] / [`AnyView`]: the 16-byte tagged union, with `cast`, `try_cast`, `as_exact`;
//! - [`String`], [`Bytes`], [`BigInt`], [`DataType`], [`Device`];
//! - containers read in place: [`Array`], [`Map`], [`Shape`] (immutable) and [`List`],
//!   [`Dict`] (mutable, shared with every language that holds them);
//! - [`Tensor`] / [`TensorView`] / [`TensorMut`]: DLPack tensors shared with NumPy, PyTorch
//!   and C++ without copying (`f16`/`bf16` through [`half`], fp8 and sub-byte types as bytes,
//!   checked strided views);
//! - [`env`](mod@env): the current stream of each device, the DLPack allocator, Ctrl-C in long loops;
//! - [`Function`]: closures as FFI functions, typed calls, the global registry;
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
//! use tvm_ffi::{ffi_methods, Any, Object, ObjectRef, ObjectType, Rw};
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
//!
//! # Layers
//!
//! The runtime is built in layers; a module only uses modules of lower layers (checked by
//! `tests/layers.rs`, which reads the sources):
//!
//! ```text
//!  registry     load-time registration of types, fields, methods, globals  (8)
//!      |
//!  enums        Rust enums as TVM-FFI enums, EnumRef<E> fields             (7)
//!      |
//!  reflection   Rw<T>, construction state, field accessors, creators,     (6)
//!      |        queries of the type registry;
//!      |        structural (equal/hash/mismatch, deep copy), serialization (JSON graphs)
//!  container    Array, Map, Shape,    tensor   Tensor, TensorView, ...     (5)
//!      |        List, Dict; AnyHash
//!      |                                 |
//!  function     Function, closures, typed calls, globals, the extern "C"  (4)
//!      |        boundary, module exports, printing through ffi.ReprPrint;
//!      |        env: current streams, DLPack allocator, signal checks
//!  value        Any, AnyView, conversions,    version   the runtime's    (3)
//!      |        String, Bytes, BigInt,                   version check
//!      |        DataType, Device
//!  error        Error, panics as errors                                    (2)
//!      |
//!  object       header, refcounts, ObjectRef, WeakRef, object traits,      (1)
//!      |        built-in payloads, type registry queries
//!  diagnostic, memory, metadata   stderr lines; allocation failure as a    (0)
//!               MemoryError; metadata JSON
//!      |
//!  sys          the raw C ABI (the `tvm-ffi-sys` crate)
//! ```
//!
//! Generated code names only `tvm_ffi::__private` (no semver guarantee) and the public value
//! types ([`Any`], [`AnyView`], [`Result`], [`Function`], [`ObjectRef`]).
#![warn(missing_docs)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

// Errors and panics cross the ABI as raised errors: a panic inside a Rust function (a failed
// allocation behind `ObjectRef::new` or `String::new`, a broken invariant the SDK checks) is
// caught at the `extern "C"` boundary and becomes an error for the caller. Under
// `panic = "abort"` nothing can be caught, and each of those designed panic paths would abort
// the host process (the Python interpreter, the C++ application) instead.
#[cfg(panic = "abort")]
compile_error!(
    "tvm-ffi requires `panic = \"unwind\"`: with `panic = \"abort\"`, a panic inside a function \
     called through TVM-FFI (out of memory in `ObjectRef::new`, `String::new`, ...) would abort \
     the host process (Python, C++) instead of raising an error in the caller; remove \
     `panic = \"abort\"` from the Cargo profile (or `-C panic=abort` from RUSTFLAGS)"
);

mod diagnostic;
pub(crate) mod memory;
pub(crate) mod metadata;

pub mod container;
pub mod enums;
pub mod env;
pub mod error;
pub mod function;
pub mod module;
pub mod object;
pub mod reflection;
pub mod registry;
pub mod serialization;
pub mod structural;
pub mod tensor;
pub mod value;
pub(crate) mod version;

/// The `half` crate, re-exported: [`half::f16`] (`float16`) and [`half::bf16`] (`bfloat16`) are
/// tensor element types ([`Element`]), so `tensor.as_slice::<tvm_ffi::half::f16>()` needs no
/// dependency of your own.
pub use half;
/// The raw C ABI of libtvm_ffi (the `tvm-ffi-sys` crate).
pub use tvm_ffi_sys as sys;
/// Where the build found libtvm_ffi (the wheel's `lib` and `include` directories).
pub use tvm_ffi_sys::build_info;

pub use container::{Array, Dict, List, Map, Shape};
pub use enums::EnumRef;
pub use error::{Error, Result, ResultExt};
pub use function::{Function, IntoArg, IntoArgs};
pub use memory::AllocFailure;
pub use module::Module;
pub use object::builtin;
pub use object::{ExternalType, IsA, ObjectRef, ObjectType, WeakRef};
pub use reflection::Rw;
pub use tensor::{DLPackTensor, Element, Tensor, TensorCheck, TensorMut, TensorView};
pub use tvm_ffi_macros::{ffi_func, ffi_methods, Enum, Object, Variant};
pub use value::{
    Any, AnyView, BigInt, Bytes, DataType, Device, FromAny, IntoAny, Optional, String, TryIntoAny,
    TypeSchema, Variant,
};
pub use version::runtime_version;

/// Support for code generated by `#[derive(Object)]`, `#[ffi_methods]` and `#[ffi_func]`:
/// descriptors, link-time slices, field accessors, creators, probes, signatures, export
/// trampolines and layout checks.
///
/// **No semver guarantee**: this module changes with the macros, which is why `tvm-ffi` pins
/// `tvm-ffi-macros` to the exact same version. Do not use it from hand-written code.
#[doc(hidden)]
pub mod __private {
    // Generated code names `core` and `std` (field offsets, sizes, pointer projections)
    // through here: a crate may re-point its own `::core` (`extern crate x as core;`).
    pub use ::core;
    pub use ::std;
    pub use linkme;

    pub use crate::sys;
    pub use crate::sys::field_flags;

    pub use crate::object::builtin::Object;
    pub use crate::object::header::ObjectCell;
    pub use crate::object::{
        assert_external_type, DerivedObject, ObjectType, RuntimeType, RustObject,
    };

    pub use crate::reflection::construction::{drop_payload, seal, seal_check, SEALED};
    pub use crate::reflection::create::{
        convert_function, create_object, default_factory, default_value, init_into_any,
        new_function, InitByDefault, InitByFields, InitProbe, InitResult, IntoDefault, Reflected,
        ShallowCopyByClone, ShallowCopyProbe, ShallowCopyUnsupported,
    };
    pub use crate::reflection::field::{
        assert_foreign_field, assert_writable, FieldValue, ForeignField, NullablePointer,
        WritableField,
    };
    pub use crate::reflection::field_table::{base_part, field, skipped_part, PayloadPart};
    pub use crate::reflection::member::Member;

    pub use crate::metadata::MetadataValue;
    pub use crate::registry::entry::{
        structural, EnumEntry, FieldEntry, FunctionEntry, MethodEntry, MethodKind, Trusted,
        TypeEntry, TypeOrigin, TypeSlot, ENUMS, FUNCTIONS, METHODS, TYPES,
    };
    pub use crate::registry::layout::allocate_type_index;

    pub use crate::enums::support::{
        create_enum_object, enum_into_any, enum_try_cast, enum_value_is_unique, EnumKind,
    };
    pub use crate::enums::{EnumTable, EnumVariant, FfiEnum};
    pub use crate::function::args::Sealed as IntoArgSealed;
    pub use crate::function::IntoArg;
    pub use crate::value::TypeSchema;

    pub use crate::function::export::{call as export_call, string as export_string};
    pub use crate::function::signature::{packed_metadata, FfiReturn, FnSignature, TypeDesc};
    pub use crate::version::{check_version, ensure_compatible};

    /// The function object of a typed function whose argument and result conversion is
    /// `invoke` (what `#[ffi_func(name = ...)]` and `#[ffi_methods]` register).
    pub fn function_from_invoke<F>(
        signature: &'static FnSignature,
        invoke: F,
    ) -> crate::function::Function
    where
        F: for<'a> Fn(
                &FnSignature,
                &'a [crate::value::AnyView<'a>],
            ) -> crate::error::Result<crate::value::Any>
            + Send
            + Sync
            + 'static,
    {
        crate::function::Function::from_invoke(signature, invoke)
    }
}
