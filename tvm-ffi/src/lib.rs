#![doc = include_str!("../README.md")]
//!
//! # The crate at a glance
//!
//! This crate binds the stable C ABI of `libtvm_ffi` (the PyPI wheel `apache-tvm-ffi`,
//! pinned to 0.1.15.post2) and lets Rust code define objects and functions that Python, C++
//! and Rust use alike.
//!
//! - [`ObjectRef<T>`]: reference-counted objects with the runtime's 24-byte header;
//! - [`Any`] / [`AnyView`]: the 16-byte tagged union, with `cast`, `checked_cast`, `as_exact`;
//! - [`String`], [`Bytes`], [`BigInt`], [`DataType`], [`Device`];
//! - containers read in place: [`Array`], [`Map`], [`Shape`] (immutable) and [`List`],
//!   [`Dict`] (mutable, shared with every language that holds them);
//! - [`Tensor`] / [`TensorView`] / [`TensorMut`]: DLPack tensors shared with NumPy, PyTorch
//!   and C++ without copying (`f16`/`bf16` through [`half`], fp8 and sub-byte types as bytes,
//!   checked strided views);
//! - [`env`](mod@env): the current stream of each device, the DLPack allocator, Ctrl-C in long loops;
//! - [`match_any!`]: typed arms over any value, with a per-call-site table keyed by runtime
//!   type index; [`ObjectRef::try_cast`] / [`ObjectRef::checked_cast`] between object types;
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
//! # Where to read on
//!
//! The guide is the book under `docs/book/src/` in the repository (one chapter per task, listed
//! above); `ARCHITECTURE.md` there describes the layers of this crate and the stages of its
//! macros.
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

// The layers, lowest first (see ARCHITECTURE.md); each uses only the layers before it.
mod abi;
mod base;
mod call;
mod data;
// Traversal sits below `reflect`, whose public `structural` module re-exports it.
mod traverse;

mod reflect;
pub mod registry;

// The public modules, re-exported from their layers under the paths users write.
pub use base::{error, object, value};
pub use call::{env, function};
pub use data::{container, module, tensor};
pub use reflect::{enums, matching, reflection, serialization, structural};

/// The `half` crate, re-exported: [`half::f16`] (`float16`) and [`half::bf16`] (`bfloat16`) are
/// tensor element types ([`Element`]), so `tensor.as_slice::<tvm_ffi::half::f16>()` needs no
/// dependency of your own.
pub use half;
/// The raw C ABI of libtvm_ffi (the `tvm-ffi-sys` crate).
pub use tvm_ffi_sys as sys;
/// Where the build found libtvm_ffi (the wheel's `lib` and `include` directories).
pub use tvm_ffi_sys::build_info;

pub use abi::AllocFailure;
pub use container::{Array, Dict, List, Map, Shape};
pub use enums::EnumRef;
pub use error::{Error, ErrorKind, Result, ResultExt};
pub use function::{Function, IntoArg, IntoArgs, Moved};
pub use module::Module;
pub use object::builtin;
pub use object::{ExternalType, IsA, ObjectRef, ObjectType, WeakRef};
pub use reflection::Rw;
pub use registry::version::runtime_version;
pub use tensor::{DLPackTensor, Element, Tensor, TensorCheck, TensorMut, TensorView};
pub use tvm_ffi_macros::{dispatch, ffi_func, ffi_methods, Enum, Object, Variant};
pub use value::{
    Any, AnyView, BigInt, Bytes, DataType, Device, FromAny, IntoAny, Optional, String, TryIntoAny,
    TypeSchema, VariantField,
};

/// Support for code generated by `#[derive(Object)]`, `#[ffi_methods]` and `#[ffi_func]`:
/// descriptors, link-time slices, field accessors, creators, probes, signatures, export
/// trampolines and layout checks.
///
/// **No semver guarantee**: this module changes with the macros, which is why `tvm-ffi` pins
/// `tvm-ffi-macros` to the exact same version. Do not use it from hand-written code.
///
/// **Soundness** (see `docs/book/src/soundness.md`): nothing here hands safe code a value
/// that `unsafe` code, the runtime or Python later trusts.
/// - Every function that makes what the registry registers for a type or function is an
///   `unsafe fn` whose `# Safety` says what it belongs to (`new_function`, `convert_function`,
///   the hooks `eq_hook` .. `repr_hook`, `init_into_any`, `default_value`, `default_factory`,
///   `function_from_invoke`, `function_from_packed_invoke`, `enum_into_any`, `enum_try_cast`,
///   `allocate_type_index`, `create_object`, `seal`, `seal_check`, `drop_payload`, the
///   export trampolines); generated code calls them in `unsafe` blocks (at the call site's
///   span, so that `#![forbid(unsafe_code)]` crates compile) whose `// SAFETY:` says why the
///   contract holds, never with a user's expression inside the block, or stores them in a
///   descriptor whose `Trusted` the registry calls them under (a type's `__ffi_new__`,
///   `__ffi_convert__` and hooks, a method's `invoke`).
/// - The descriptors the registry trusts (`TypeEntry`, `MethodEntry`, `EnumEntry`) carry a
///   `Trusted`, which only an `unsafe` call makes; the `const fn`s that build their parts
///   (`field`, `base_part`, `skipped_part`, `Param`, `TypeDesc`) are trusted only through it.
///   `FunctionEntry` carries none: it registers no more than the safe
///   `Function::register_global_with_info` does.
/// - Traits that unsafe code trusts are `unsafe` (`Reflected`, `FieldValue`,
///   `NullablePointer`, `EnumType`, `InitByDefault`, `InitByFields`, and `IntoArgSealed`, the
///   seal of `IntoArg` that the derives implement) or sealed by a trait outside `__private`
///   (`InitResult`, whose result becomes an instance of the type).
/// - What stays safe hands out nothing trusted: compile-time checks (`assert_*`,
///   `enum_value_is_unique`, `default_check`), the traversal links of `#[dispatch]` (they call public traits),
///   `packed_metadata` (a JSON string), `enclosing_function` and `attach_context` (an error's
///   frame text), `force_runtime_reads` (a test switch between two
///   sound read paths) and diagnostics-only marker traits (`WritableField`, `ForeignField`,
///   `Member`, `EqHook` ..).
#[doc(hidden)]
pub mod __private {
    // Generated code names `core` and `std` (field offsets, sizes, pointer projections)
    // through here: a crate may re-point its own `::core` (`extern crate x as core;`).
    pub use ::core;
    pub use ::std;
    pub use linkme;

    pub use crate::abi::sys;
    pub use crate::abi::sys::field_flags;

    pub use crate::base::object::builtin::AnyObject;
    pub use crate::base::object::header::ObjectCell;
    pub use crate::base::object::{
        assert_external_type, DerivedObject, ObjectType, RuntimeType, RustObject,
    };

    pub use crate::reflect::reflection::construction::{drop_payload, seal, seal_check, SEALED};
    pub use crate::reflect::reflection::create::{
        convert_function, create_object, default_factory, default_value, init_into_any,
        new_function, InitByDefault, InitByFields, InitProbe, InitResult, IntoDefault,
        ShallowCopyByClone, ShallowCopyProbe, ShallowCopyUnsupported,
    };
    pub use crate::reflect::reflection::dunder::{
        assert_frozen_field, compare_hook, eq_hook, hash_hook, repr_hook, EqHook, HashHook,
        OrdHook, StrHook,
    };
    pub use crate::reflect::reflection::field::{
        assert_foreign_field, assert_writable, FieldValue, ForeignField, NullablePointer,
        WritableField,
    };
    pub use crate::reflect::reflection::field_table::{base_part, field, skipped_part};
    pub use crate::reflect::reflection::member::Member;
    pub use crate::reflect::reflection::reflected::PayloadPart;
    pub use crate::reflect::reflection::reflected::Reflected;

    pub use crate::call::function::metadata::MetadataValue;
    pub use crate::registry::entry::{
        structural, EnumEntry, FieldEntry, FunctionEntry, MethodEntry, MethodKind, Trusted,
        TypeEntry, TypeOrigin, TypeSlot, ENUMS, FUNCTIONS, METHODS, TYPES,
    };
    pub use crate::registry::layout::allocate_type_index;

    pub use crate::base::error::call_site::{attach_context, enclosing_function};
    pub use crate::base::value::TypeSchema;
    pub use crate::call::function::args::Sealed as IntoArgSealed;
    pub use crate::call::function::IntoArg;
    pub use crate::reflect::enums::support::{
        create_enum_object, enum_from_int_payload, enum_from_str_payload, enum_into_any,
        enum_try_cast, enum_value_is_unique, EnumKind,
    };
    pub use crate::reflect::enums::{EnumTable, EnumType, EnumVariant};

    pub use crate::call::function::export::{
        call as export_call, call_packed as export_call_packed, string as export_string,
    };
    pub use crate::call::function::params::{check as default_check, DefaultValue, Param};
    pub use crate::call::function::signature::{packed_metadata, FfiReturn, FnSignature, TypeDesc};

    pub use crate::call::function::export::{function_from_invoke, function_from_packed_invoke};

    /// Tests of the runtime-read fallback of `Map` / `Dict` (see the crate's
    /// `data::container::table`).
    pub use crate::data::container::table::force_runtime_reads;
    /// What `match_any!`'s expansion names (the module itself is public as `tvm_ffi::matching`).
    pub mod matching {
        pub use crate::reflect::matching::{settled, ArmTable, MatchSource};
    }
    pub use crate::traverse::dispatch::{
        try_map_link, try_mutate_link, try_visit_link, try_visitor_link, visit_outcome_as_walk,
    };
    pub use crate::traverse::mutate_callbacks::mutate_with_policy;
    pub use crate::traverse::visit_policy::{
        default_visit_with_policy, enter_policy_visit, PolicyVisitRegion,
    };
    pub use tvm_ffi_macros::match_any_impl;
}

/// The book's chapters (`docs/book/src` in the repository), so that `cargo test --doc` compiles
/// and runs their examples as it does the crate docs'. Only rustdoc's doctest collection sees
/// them (`cfg(doctest)`): the packaged crate, which does not carry the book, builds without.
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../../docs/book/src/getting-started.md")]
    mod getting_started {}
    #[doc = include_str!("../../docs/book/src/object-types.md")]
    mod object_types {}
    #[doc = include_str!("../../docs/book/src/functions.md")]
    mod functions {}
    #[doc = include_str!("../../docs/book/src/containers-and-tensors.md")]
    mod containers_and_tensors {}
    #[doc = include_str!("../../docs/book/src/ir-traversal.md")]
    mod ir_traversal {}
    #[doc = include_str!("../../docs/book/src/packaging.md")]
    mod packaging {}
    #[doc = include_str!("../../docs/book/src/errors.md")]
    mod errors {}
    #[doc = include_str!("../../docs/book/src/soundness.md")]
    mod soundness {}
    #[doc = include_str!("../../docs/book/src/reliability.md")]
    mod reliability {}
    #[doc = include_str!("../../docs/book/src/performance.md")]
    mod performance {}
    #[doc = include_str!("../../docs/book/src/faq.md")]
    mod faq {}
    #[doc = include_str!("../../docs/book/src/migrating-from-cpp.md")]
    mod migrating_from_cpp {}
}
