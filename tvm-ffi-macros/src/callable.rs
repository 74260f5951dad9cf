//! The one implementation of a callable shared by `#[ffi_func]` and `#[ffi_methods]`: the
//! parameters' descriptions, and an invoke function that checks and converts the arguments
//! with the runtime's generic helpers, calls the user's function and converts its result.
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// How the arguments reach the user's function.
pub enum Params {
    /// Converted one by one (`FnSignature::arg`), after an arity check.
    Typed(Vec<syn::Type>),
    /// `&[AnyView]`: all arguments as they came (a packed, variadic function).
    Packed,
}

/// One callable to generate.
pub struct Callable {
    /// Path of the runtime crate (`::tvm_ffi` unless renamed).
    pub krate: TokenStream,
    /// The parameters, in argument order (after `Self` substitution).
    pub params: Params,
    /// The call: uses `__tvm_ffi_arg0`, `__tvm_ffi_arg1`, ... (typed) or `__tvm_ffi_args` (packed).
    pub call: TokenStream,
    /// The result's `TypeDesc` (`FfiReturn::DESC`).
    pub ret_desc: TokenStream,
    /// A function path `fn(value) -> tvm_ffi::Result<Any>` applied to the call's value.
    pub convert: TokenStream,
}

/// The names of the argument variables used in [`Callable::call`].
pub fn arg_idents(count: usize) -> Vec<syn::Ident> {
    (0..count)
        .map(|i| format_ident!("__tvm_ffi_arg{}", i))
        .collect()
}

/// `&[TypeDesc::of::<P0>(), ..]`: the parameters' descriptions (none for a packed function).
pub fn param_descs(callable: &Callable) -> TokenStream {
    let krate = &callable.krate;
    match &callable.params {
        Params::Typed(params) => {
            let descs = params.iter().map(|ty| {
                quote_spanned! {ty.span()=> #krate::__private::TypeDesc::of::<#ty>() }
            });
            quote!(&[#(#descs),*])
        }
        Params::Packed => quote!(&[]),
    }
}

/// `fn <name>(sig, args)`: checks and converts the arguments with the runtime's generic
/// helpers, calls the user's function and converts its result.
pub fn invoke_fn(callable: &Callable, name: &syn::Ident) -> TokenStream {
    let Callable {
        krate,
        params,
        call,
        convert,
        ..
    } = callable;
    let body = match params {
        Params::Typed(params) => {
            let args = arg_idents(params.len());
            // Last argument first, as the C++ runtime (built with GCC, which evaluates call
            // arguments right to left) converts them: with several wrong arguments, the error
            // names the same one C++ names.
            let conversions = params.iter().enumerate().rev().map(|(i, ty)| {
                let a = &args[i];
                quote_spanned! {ty.span()=> let #a = __tvm_ffi_sig.arg::<#ty>(__tvm_ffi_args, #i)?; }
            });
            quote! {
                __tvm_ffi_sig.check_arity(__tvm_ffi_args)?;
                #(#conversions)*
                #convert(#call)
            }
        }
        Params::Packed => quote! {
            let _ = __tvm_ffi_sig;
            #convert(#call)
        },
    };
    quote! {
        fn #name<'a>(
            __tvm_ffi_sig: &#krate::__private::FnSignature,
            __tvm_ffi_args: &'a [#krate::AnyView<'a>],
        ) -> #krate::Result<#krate::Any> {
            #body
        }
    }
}

/// The signature rules shared by functions and methods: synchronous, not generic, not C
/// variadic. `what` is "function" or "method"; `generic_hint` says how to get around it.
pub fn check_signature(
    sig: &syn::Signature,
    what: &str,
    generic_hint: &str,
    diag: &mut crate::diagnostics::Diagnostics,
) {
    if let Some(a) = &sig.asyncness {
        diag.error(a, format!("an `async fn` cannot be an FFI {what}: callers expect the result on return; make it synchronous"));
    }
    if !sig.generics.params.is_empty() {
        diag.error(
            &sig.generics,
            format!("an FFI {what} cannot be generic: the runtime needs one concrete signature; {generic_hint}"),
        );
    }
    if let Some(v) = &sig.variadic {
        diag.error(
            v,
            format!("C variadics are not supported; take `&[AnyView]` for a variadic {what}"),
        );
    }
    for input in &sig.inputs {
        if let syn::FnArg::Typed(pat) = input {
            check_param_type(&pat.ty, what, diag);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        check_result_type(ty, what, diag);
    }
}

/// What a new user writes for a callback or a list argument, reported with what to write
/// instead (the trait errors these would otherwise produce name no alternative).
fn check_param_type(ty: &syn::Type, what: &str, diag: &mut crate::diagnostics::Diagnostics) {
    if let Some(callable) = closure_type(ty) {
        diag.error(
            ty,
            format!(
                "an FFI {what} cannot take {callable}: take a `tvm_ffi::Function` (a Python \
                 callable or a C++ function arrives as one) and call it with \
                 `f.call_as::<R, _>((arg,))?`"
            ),
        );
    } else if let Some(elem) = vec_of_non_bytes(ty) {
        let elem = quote::ToTokens::to_token_stream(elem);
        diag.error(
            ty,
            format!(
                "an FFI {what} takes a list as `tvm_ffi::Array<{elem}>` (Python lists and \
                 tuples convert to it; read it with `.iter()`), not `Vec<{elem}>`"
            ),
        );
    }
}

/// Results that cannot cross the boundary but have an equivalent that can (inside `Result`
/// too).
fn check_result_type(ty: &syn::Type, what: &str, diag: &mut crate::diagnostics::Diagnostics) {
    let ty = result_ok_type(ty).unwrap_or(ty);
    if let Some(elem) = vec_of_non_bytes(ty) {
        let elem = quote::ToTokens::to_token_stream(elem);
        diag.error(
            ty,
            format!(
                "an FFI {what} returns a list as `tvm_ffi::Array<{elem}>`, not `Vec<{elem}>`: \
                 `tvm_ffi::Array::new(vec)?` converts it (Python and C++ receive an `ffi.Array`)"
            ),
        );
    } else if let syn::Type::Tuple(tuple) = strip_groups(ty) {
        if !tuple.elems.is_empty() {
            diag.error(
                ty,
                format!(
                    "a tuple cannot cross the TVM-FFI boundary: an FFI {what} returns \
                     `tvm_ffi::Array<T>` for values of one type, `tvm_ffi::Array<tvm_ffi::Any>` \
                     for mixed ones (`Array::new([Any::new(a), Any::new(b)])?`), or an object \
                     type with named fields"
                ),
            );
        }
    }
}

fn strip_groups(mut ty: &syn::Type) -> &syn::Type {
    loop {
        match ty {
            syn::Type::Paren(p) => ty = &p.elem,
            syn::Type::Group(g) => ty = &g.elem,
            _ => return ty,
        }
    }
}

/// The generic arguments of the last path segment of `ty`, when it is named `name`.
fn generic_args<'a>(ty: &'a syn::Type, name: &str) -> Option<Vec<&'a syn::Type>> {
    let syn::Type::Path(p) = strip_groups(ty) else {
        return None;
    };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || last.ident != name {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Some(Vec::new());
    };
    Some(
        args.args
            .iter()
            .filter_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
    )
}

/// `T` of `Result<T, ..>` (std's or `tvm_ffi::Result<T>`).
fn result_ok_type(ty: &syn::Type) -> Option<&syn::Type> {
    generic_args(ty, "Result")?.first().copied()
}

/// `T` of `Vec<T>` when `T` is not `u8` (`Vec<u8>` is bytes, which cross the boundary).
fn vec_of_non_bytes(ty: &syn::Type) -> Option<&syn::Type> {
    let elem = *generic_args(ty, "Vec")?.first()?;
    let is_u8 = matches!(strip_groups(elem), syn::Type::Path(p) if p.path.is_ident("u8"));
    (!is_u8).then_some(elem)
}

/// How a closure or function-pointer parameter is described, if `ty` is one: `impl Fn..`,
/// `dyn Fn..` behind a reference or a smart pointer, or `fn(..)`.
fn closure_type(ty: &syn::Type) -> Option<&'static str> {
    let is_fn_bound =
        |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
            bounds.iter().any(|b| {
                matches!(b, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| {
                    s.ident == "Fn" || s.ident == "FnMut" || s.ident == "FnOnce"
                }))
            })
        };
    match strip_groups(ty) {
        syn::Type::ImplTrait(t) if is_fn_bound(&t.bounds) => Some("a closure (`impl Fn(..)`)"),
        syn::Type::TraitObject(t) if is_fn_bound(&t.bounds) => Some("a closure (`dyn Fn(..)`)"),
        syn::Type::BareFn(_) => Some("a function pointer (`fn(..)`)"),
        syn::Type::Reference(r) => closure_type(&r.elem),
        other => ["Box", "Arc", "Rc"]
            .iter()
            .find_map(|name| generic_args(other, name))
            .and_then(|args| args.first().and_then(|t| closure_type(t))),
    }
}

/// `&[AnyView]` (any lifetimes, any path to `AnyView`): the packed form.
pub fn is_packed_args(ty: &syn::Type) -> bool {
    let syn::Type::Reference(r) = ty else {
        return false;
    };
    if r.mutability.is_some() {
        return false;
    }
    let syn::Type::Slice(slice) = &*r.elem else {
        return false;
    };
    match &*slice.elem {
        syn::Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "AnyView")
        }
        _ => false,
    }
}

/// Replaces `Self` in a type by the impl's self type (generated code lives outside the impl).
pub struct ReplaceSelf<'a>(pub &'a syn::Type);

impl syn::visit_mut::VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.is_ident("Self") {
                *ty = self.0.clone();
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// `ty` with `Self` replaced by `self_ty`.
pub fn replace_self(ty: &syn::Type, self_ty: &syn::Type) -> syn::Type {
    let mut ty = ty.clone();
    syn::visit_mut::VisitMut::visit_type_mut(&mut ReplaceSelf(self_ty), &mut ty);
    ty
}
