//! Procedural macros of `tvm-ffi`; use them through the `tvm_ffi` re-exports.
//!
//! One front end serves every macro, in stages that run one way, one folder each:
//! `attr` parses the attributes (one parser per item kind on a shared layer that reports a
//! repeated option), `ast` builds the item's model with its attributes attached, `check`
//! reports what the finished model must satisfy, and `codegen` emits code per item kind
//! (`object`, `methods`, `func`, `enums`, `variant`, with the helpers they share in
//! `codegen::shared`); the function-like `match_any!` (`match_any`) and the attribute
//! `#[dispatch(..)]` (`dispatch`) each parse and expand in one module of their own. Every stage reports into one error context (`ctxt::Ctxt`), which must
//! be checked before code is generated: every error is reported at once, none is lost. A
//! stage only uses earlier ones. Generated code names the runtime only through
//! `::tvm_ffi::__private` (no semver guarantee; `tvm-ffi` pins this crate exactly) and the
//! public value types, with helper items inside `const _: () = { .. };`.
//! ABI constants (field flags, structural kinds) are named, never copied: the generated code
//! refers to the runtime's own constants. On error the user's item is re-emitted unchanged
//! next to the errors, so one mistake does not cascade.
use proc_macro::TokenStream;

use proc_macro2::Span;
use quote::quote;

use ctxt::Ctxt;

mod ast;
mod attr;
mod check;
mod codegen;
mod crate_path;
mod ctxt;
mod dispatch;
mod match_any;

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
/// `///` doc and the metadata (`type_schema`, the parameters' names `arg_names` and defaults
/// `arg_defaults`) are registered with the global.
///
/// A parameter may have a default, a literal checked against its type at compile time
/// (`#[ffi(default = 1)]`, `= 0.5`, `= true`, `= "x"`, `= None` for an `Option<T>`); the
/// parameters after it need one too. A caller may omit such arguments, and may pass any
/// argument by name in the runtime's `KWARGS` convention (what Python's `__init__` does for
/// `#[ffi(init)]` constructors):
///
/// ```ignore
/// /// `shift(1) == 2`, `shift(1, 5) == 6`, `shift(1, KWARGS, "by", 5) == 6`
/// #[tvm_ffi::ffi_func(name = "my_ext.shift")]
/// pub fn shift(x: i64, #[ffi(default = 1)] by: i64) -> i64 { x + by }
/// ```
///
/// An export `NAME` (a C identifier not starting with `_`) defines the `TVMFFISafeCallType`
/// symbols `__tvm_ffi_NAME`, `__tvm_ffi__metadata_NAME` and, for a documented function,
/// `__tvm_ffi__doc_NAME`; errors raised through it name `NAME`, as C++ does. A function taking
/// `&[AnyView]` as its only parameter is packed: its `type_schema` is `{"type":"ffi.Function"}`,
/// as for C++ `def_packed`.
///
/// Guide, the book in the repository: `docs/book/src/getting-started.md` (globals, `Result`,
/// callbacks),
/// `docs/book/src/getting-started.md#renaming-the-dependency-and-mistakes-the-compiler-catches`
/// (`crate = ".."`), `docs/book/src/functions.md#parameters-defaults-and-keyword-arguments`,
/// `docs/book/src/functions.md#module-exports-and-packed-functions`, and
/// `docs/book/src/packaging.md#shipping-a-python-package` (the functions become attributes of
/// the package).
#[proc_macro_attribute]
pub fn ffi_func(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_func(attr.into(), item.into()).into()
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
/// Type options (`#[ffi_type(..)]`): `key`, `final`, `structural`, `init = false`,
/// `creator = false`, `convert`, `eq`, `hash`, `ord`, `str` (the runtime's `==`, hash, order
/// and repr hooks from the struct's `PartialEq`, `Hash`, `PartialOrd`, `Display`; `hash` and
/// `ord` need `eq`), `frozen` (no field writable from any language: no `#[ffi(rw)]`, no
/// `Rw<T>`), `type_attr(..)`, `child_slots = N` (type indices reserved for subtypes, as C++'s
/// `_type_child_slots`), `external` (declares a type
/// defined elsewhere, checked against the runtime's reflection at load; requires
/// `unsafe impl tvm_ffi::ExternalType` for it), `opaque` (with `external`: a typed handle
/// that declares only its `#[ffi(base)]` parent, not the type's own fields, for a type whose
/// layout Rust cannot mirror; only the parent is checked at load). Field options
/// (`#[ffi(..)]`): `base`, `skip`, `rw`, `name`, `default`, `default_factory`, `kw_only`,
/// `init = false`, `repr = false`, `compare = false`, `hash = false`, `structural`,
/// `metadata(..)`.
///
/// Reserved: names starting with `__tvm_ffi` in the item (the generated items next to it are
/// named so), type attribute names starting with `__ffi` or `__tvm_ffi` (the runtime's and the
/// SDK's own), and `Rw<Rw<T>>` fields; each is a compile error.
///
/// Guide, the book in the repository: `docs/book/src/object-types.md` (every type and field
/// option, writable fields, constructors, methods, parents defined elsewhere, loading),
/// `docs/book/src/object-types.md#value-types-eq-hash-ord-str-frozen` (`eq`, `hash`, `ord`,
/// `str`, `frozen`), and `docs/book/src/packaging.md#stubs` (the Python class tvm-ffi-stubgen
/// writes for the type).
#[proc_macro_derive(Object, attributes(ffi_type, ffi))]
pub fn derive_object(input: TokenStream) -> TokenStream {
    let input = proc_macro2::TokenStream::from(input);
    let expanded = expand_derive(input.clone(), |item, cx| {
        let model = ast::object::from_ast(item, cx);
        if let Some(model) = &model {
            check::object::check(model, cx);
        }
        move || codegen::object::generate(&model.expect("checked"))
    });
    match expanded {
        Ok(tokens) => tokens,
        Err(errors) => {
            let fallback = syn::parse2(input)
                .map(|item| codegen::object::error_fallback(&item))
                .unwrap_or_default();
            quote::quote!(#errors #fallback)
        }
    }
    .into()
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
    expand_derive(input.into(), |item, cx| {
        let model = ast::enums::from_ast(item, cx);
        check::enums::check(&model, cx);
        move || codegen::enums::generate(&model)
    })
    .unwrap_or_else(|errors| errors)
    .into()
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
    expand_derive(input.into(), |item, cx| {
        let model = ast::variant::from_ast(item, cx);
        check::variant::check(&model, cx);
        move || codegen::variant::generate(&model)
    })
    .unwrap_or_else(|errors| errors)
    .into()
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
/// Parameters take defaults (`#[ffi(default = ..)]`) and register their names as for
/// `#[ffi_func]` (a method's receiver is `self`); Python's `Point(x=1, y=2)` binds by name to an
/// `#[ffi(init)]` constructor's parameters.
///
/// Guide, the book in the repository: `docs/book/src/object-types.md`, the paragraphs
/// **Methods** and **Constructors**, and
/// `docs/book/src/functions.md#parameters-defaults-and-keyword-arguments`.
#[proc_macro_attribute]
pub fn ffi_methods(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_methods(attr.into(), item.into()).into()
}

/// A derive: parse and model (`front`, which also runs the checks and returns the code
/// generation to run), then code generation once the context is checked. Names reserved for
/// generated items are refused in what the generated code repeats of the item.
/// The derive's expansion, or its errors (as `compile_error!`s).
fn expand_derive<G: FnOnce() -> proc_macro2::TokenStream>(
    input: proc_macro2::TokenStream,
    front: impl FnOnce(&syn::DeriveInput, &Ctxt) -> G,
) -> Result<proc_macro2::TokenStream, proc_macro2::TokenStream> {
    let item: syn::DeriveInput = syn::parse2(input).map_err(|err| err.to_compile_error())?;
    let cx = Ctxt::new();
    check::reserved_prefix(check::repeated_tokens(&item), &cx);
    let generate = front(&item, &cx);
    match cx.check() {
        Ok(()) => Ok(generate()),
        Err(err) => Err(err.to_compile_error()),
    }
}

/// `#[ffi_func]`: the function is emitted unchanged, followed by its registration.
fn expand_func(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[ffi_func] applies to a free function: `fn name(args) -> R { ... }`",
            );
            return with_original(err, item);
        }
    };
    let cx = Ctxt::new();
    let attrs = attr::func::func_attrs(attr, &cx);
    // The signature: the generated code calls the function by name and names its types.
    let sig = &func.sig;
    check::reserved_prefix(quote!(#sig), &cx);
    let params = attr::params::fn_params(&func.sig, &cx);
    let model = ast::func::func(attrs, params, &func);
    check::func::check(&model, &cx);
    let mut func = func;
    attr::params::strip(&mut func.sig);
    match cx.check() {
        Ok(()) => {
            let generated = codegen::func::generate(&model);
            quote! { #func #generated }
        }
        Err(err) => with_original(err, quote!(#func)),
    }
}

/// `#[ffi_methods]`: the impl is emitted unchanged (minus the `#[ffi(..)]` attributes),
/// followed by the registrations of its methods.
fn expand_methods(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let mut imp: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(imp) => imp,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[ffi_methods] applies to an inherent impl block: `impl Point { .. }`",
            );
            return with_original(err, item);
        }
    };
    let cx = Ctxt::new();
    let krate = attr::methods::block_attrs(attr, &cx)
        .into_inner()
        .unwrap_or_else(crate_path::default_crate);
    let self_ty = &*imp.self_ty;
    check::reserved_prefix(quote!(#self_ty), &cx);
    let mut methods = Vec::new();
    for item in &imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        let attrs = attr::methods::method_attrs(f, &cx);
        if attrs.skip.is_set() {
            continue;
        }
        // The signature: the generated code names the parameter and result types.
        let sig = &f.sig;
        check::reserved_prefix(quote!(#sig), &cx);
        methods.extend(ast::methods::method(f, attrs, self_ty));
    }
    check::methods::check(&imp, &methods, &cx);
    let result = cx.check();
    for item in &mut imp.items {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !a.path().is_ident("ffi"));
            attr::params::strip(&mut f.sig);
        }
    }
    match result {
        Ok(()) => {
            let registrations = codegen::methods::generate(&krate, &imp.self_ty, &methods);
            quote! { #imp #registrations }
        }
        Err(err) => with_original(err, quote!(#imp)),
    }
}

/// The errors followed by the user's item unchanged, so that the item itself still exists and
/// its other uses do not produce follow-on errors.
fn with_original(err: syn::Error, original: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
    let errors = err.to_compile_error();
    quote! { #errors #original }
}

/// Makes an inherent `impl` block a structural walk handler (`#[dispatch(walk)]`: its
/// `walk_*` methods), a user-driven structural visitor (`#[dispatch(visit)]`: its `visit_*`
/// methods), a structural mapper (`#[dispatch(map)]`: its `map_*` methods) or a user-driven
/// structural mutator (`#[dispatch(mutate)]`: its `mutate_*` methods), tried in source order: the
/// first method whose value argument matches the value runs.
///
/// ```ignore
/// #[derive(Default)]
/// struct Count { ints: usize }
/// #[tvm_ffi::dispatch(walk)]
/// impl Count {
///     fn walk_int(&mut self, _value: i64) -> WalkResult {
///         self.ints += 1;
///         WalkResult::Advance
///     }
/// }
/// structural::walk(&root, &mut Count::default(), WalkOrder::PreOrder)?;
/// ```
///
/// A handler takes `&mut self`, the value (any type a walk callback takes: `i64`,
/// `Array<i64>`, `ObjectRef<T>`, `&NodeObj`, `&VisitValue`, ...) and optionally a trailing
/// `DefRegionKind`; it returns a `WalkResult` (`walk`), `()` or an `Option<VisitInterrupt>`
/// (`visit`: the handler owns the recursion below its value; values no handler takes have their
/// default children visited) or the replacement (`map`, `mutate`: an `Any`, `Unchanged`, an
/// `UnchangedOr<T>` or any value convertible into an `Any`; a `mutate` handler owns the recursion
/// below its value), or a `Result` of one. A `mutate` handler may take a `MutateValue<'_, T>`
/// (the value with its in-place permission) instead of the value, and
/// `#[dispatch(mutate, policy = <expr>)]` runs the `MutContextPolicy` `<expr>` (evaluated at each
/// use; it may read `self`) around every default descent. Other methods of the
/// block are left alone. Documented with examples on `tvm_ffi::structural::VisitDispatch`,
/// `Visitor`, `MapDispatch`, `Mutator` and `MutContextPolicy`.
///
/// `#[dispatch(visit, policy = expr)]` runs the visitor's default descent (of the values no
/// handler takes, and `self.default_visit_children`) through the context policy `expr` (a
/// `tvm_ffi::structural::ContextPolicy<Self>`, evaluated at each descent), as
/// `VisitCallbacks::with_policy` does for callbacks; an example is on `ContextPolicy`.
#[proc_macro_attribute]
pub fn dispatch(attr: TokenStream, item: TokenStream) -> TokenStream {
    dispatch::expand(attr.into(), item.into()).into()
}

/// The expansion of `tvm_ffi::match_any!`, which prepends its own crate path and a `;`; use
/// `tvm_ffi::match_any!`, documented there.
#[doc(hidden)]
#[proc_macro]
pub fn match_any_impl(input: TokenStream) -> TokenStream {
    match_any::expand(input.into()).into()
}
