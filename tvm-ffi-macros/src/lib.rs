//! Procedural macros of `tvm-ffi`; use them through the `tvm_ffi` re-exports.
//!
//! Each macro (`object`, `methods`, `func`) runs the same stages, one file each:
//! `parse` reads the attributes through the shared attribute layer (`attr`, which reports a
//! repeated option), `model` builds the validated model, `check` reports what no single option
//! can (every error is collected, none stops the others), and `codegen` emits code that names
//! the runtime only through `::tvm_ffi::__private` (no semver guarantee; `tvm-ffi` pins this
//! crate exactly) and the public value types, with helper items inside `const _: () = { .. };`.
//! ABI constants (field flags, structural kinds) are named, never copied: the generated code
//! refers to the runtime's own constants. On error the user's item is re-emitted unchanged
//! next to the errors, so one mistake does not cascade.
use proc_macro::TokenStream;

mod attr;
mod callable;
mod crate_path;
mod diagnostics;
mod docs;
mod enums;
mod func;
mod methods;
mod object;
mod variant;

/// Makes a Rust function a TVM-FFI function: a global registered when the library loads
/// (`name = "pkg.func"`, like C++ `refl::GlobalDef().def`), a module export
/// (`export = "func"`, like C++ `TVM_FFI_DLL_EXPORT_TYPED_FUNC`), or both.
///
/// ```ignore
/// /// Adds two integers.
/// #[tvm_ffi::ffi_func(name = "my_ext.add")]
/// pub fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// `tvm_ffi.load_module(lib).add_one(1) == 2`
/// #[tvm_ffi::ffi_func(export = "add_one")]
/// pub fn add_one(x: i64) -> i64 { x + 1 }
///
/// /// A packed (variadic) function: every argument, unconverted.
/// #[tvm_ffi::ffi_func(name = "my_ext.count_args")]
/// pub fn count_args(args: &[tvm_ffi::AnyView]) -> i64 { args.len() as i64 }
/// ```
///
/// Arguments are converted with the runtime's rules (borrowed forms such as `&str`, `&[u8]`,
/// `AnyView` and `&ObjectRef<T>` avoid copies and reference counting); the result may be any
/// convertible value, `()` or a `Result` whose error converts into `tvm_ffi::Error`. The
/// `///` doc and the `type_schema` metadata are registered with the global.
///
/// An export `NAME` (a C identifier not starting with `_`) defines the `TVMFFISafeCallType`
/// symbols `__tvm_ffi_NAME`, `__tvm_ffi__metadata_NAME` and, for a documented function,
/// `__tvm_ffi__doc_NAME`; errors raised through it name `NAME`, as C++ does. A function taking
/// `&[AnyView]` as its only parameter is packed: its `type_schema` is `{"type":"ffi.Function"}`,
/// as for C++ `def_packed`.
///
/// Guide: the introduction of the [`tvm_ffi` crate docs](../tvm_ffi/index.html) (globals, `Result`,
/// callbacks), [Module exports and packed functions](../tvm_ffi/index.html#module-exports-and-packed-functions),
/// [Renaming the dependency, and mistakes the compiler
/// catches](../tvm_ffi/index.html#renaming-the-dependency-and-mistakes-the-compiler-catches) (`crate = ".."`), and
/// [Shipping a Python package](../tvm_ffi/index.html#shipping-a-python-package) (the functions become attributes of
/// the package).
#[proc_macro_attribute]
pub fn ffi_func(attr: TokenStream, item: TokenStream) -> TokenStream {
    func::expand(attr.into(), item.into()).into()
}

/// Makes a `#[repr(C)]` struct a TVM-FFI object type, registered with the runtime (key,
/// parent, reflected fields, creator, constructor) when the library loads.
///
/// ```ignore
/// /// A point in the plane.
/// #[derive(tvm_ffi::Object, Clone)]
/// #[ffi_type(key = "my_ext.Point", structural = "tree")]
/// #[repr(C)]
/// pub struct Point {
///     #[ffi(rw)]
///     pub x: tvm_ffi::Rw<i64>,
///     #[ffi(default = 7)]
///     pub y: i64,
/// }
/// ```
///
/// Type options (`#[ffi_type(..)]`): `key`, `final`, `structural`, `external` (declares a type
/// defined elsewhere, checked against the runtime's reflection at load; requires
/// `unsafe impl tvm_ffi::ExternalType` for it). Field options
/// (`#[ffi(..)]`): `base`, `skip`, `rw`, `name`, `default`, `default_factory`, `kw_only`,
/// `init = false`, `repr = false`, `compare = false`, `hash = false`, `structural`,
/// `metadata(..)`.
///
/// Reserved: names starting with `__tvm_ffi` in the item (the generated items next to it are
/// named so), type attribute names starting with `__ffi` or `__tvm_ffi` (the runtime's and the
/// SDK's own), and `Rw<Rw<T>>` fields; each is a compile error.
///
/// Guide: [Object types](../tvm_ffi/index.html#object-types) in the `tvm_ffi` crate docs (every type and field
/// option, writable fields, constructors, methods, parents defined elsewhere, loading), and
/// [Stubs](../tvm_ffi/index.html#stubs) (the Python class tvm-ffi-stubgen writes for the type).
#[proc_macro_derive(Object, attributes(ffi_type, ffi))]
pub fn derive_object(input: TokenStream) -> TokenStream {
    object::expand(input.into()).into()
}

/// Makes a Rust enum of unit variants a TVM-FFI enum (C++ `refl::EnumDef`): a final child of
/// `ffi.Enum` (or `ffi.IntEnum` with `int`, `ffi.StrEnum` with `str`) with one singleton object
/// per variant, registered with its integer and string index and attributes when the library
/// loads. The enum then converts to and from `Any` as those singletons; a field holding one is
/// a `tvm_ffi::EnumRef<E>`.
///
/// ```ignore
/// #[derive(tvm_ffi::Enum, Clone, Copy, PartialEq, Eq, Debug)]
/// #[ffi_type(key = "my_ext.Op", str)]
/// pub enum Op {
///     #[ffi(value = "+", attr(precedence = 1))]
///     Add,
///     #[ffi(value = "*", attr(precedence = 2))]
///     Mul,
/// }
/// ```
///
/// Type options: `key`, `int`, `str`, `crate`. Variant options (`#[ffi(..)]`): `name` (the
/// string index of a plain or `int` enum; default the variant's name), `value` (the integer of
/// an `int` enum, default its discriminant or ordinal; the string of a `str` enum, default its
/// name), `attr(key = literal, ..)`.
#[proc_macro_derive(Enum, attributes(ffi_type, ffi))]
pub fn derive_enum(input: TokenStream) -> TokenStream {
    enums::expand(input.into()).into()
}

/// Makes a Rust enum of alternatives a TVM-FFI `Variant` (C++ `ffi::Variant<A, B, ..>`): each
/// variant holds one value type; a value converts to the first alternative that matches it
/// exactly, else to the first that converts (an int for a float), as C++ casts. Use the enum
/// as an argument or result; a field holding one is a `tvm_ffi::Variant<E>`.
///
/// ```ignore
/// #[derive(tvm_ffi::Variant, Clone, Debug)]
/// pub enum IntOrStr {
///     Int(i64),
///     Str(tvm_ffi::String),
/// }
/// ```
#[proc_macro_derive(Variant, attributes(ffi))]
pub fn derive_variant(input: TokenStream) -> TokenStream {
    variant::expand(input.into()).into()
}

/// Registers the functions of an inherent impl block as methods of a `#[derive(Object)]`
/// type: `&self` methods (or `this: &ObjectRef<Self>` as first parameter) are instance methods,
/// functions without receiver are static methods, and `#[ffi(init)]` marks the constructor.
///
/// ```ignore
/// #[tvm_ffi::ffi_methods]
/// impl Point {
///     pub fn norm2(&self) -> i64 { self.x.get() * self.x.get() + self.y * self.y }
/// }
/// ```
///
/// Guide: [Object types](../tvm_ffi/index.html#object-types) in the `tvm_ffi` crate docs, the paragraphs
/// **Methods** and **Constructors**.
#[proc_macro_attribute]
pub fn ffi_methods(attr: TokenStream, item: TokenStream) -> TokenStream {
    methods::expand(attr.into(), item.into()).into()
}
