//! The checks stage: what the finished models must satisfy, reported into the shared
//! [`Ctxt`] after parsing and model building, before any code is generated. One module per
//! item kind; here the rules several kinds share (reserved names, callable signatures).
use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

pub mod enums;
pub mod func;
pub mod methods;
pub mod object;
pub mod variant;

/// Reports every identifier in `tokens` that starts with `__tvm_ffi`: the generated items next
/// to the user's code are all named so (`__tvm_ffi_FIELDS`, `__tvm_ffi_invoke_0`, ...), and a
/// user's item of such a name would be shadowed by them wherever the generated code names it
/// (a field type, a default, the function a registration calls). `tokens` are what the
/// generated code repeats: the item's signature, types and attributes, not function bodies.
pub fn reserved_prefix(tokens: TokenStream, cx: &Ctxt) {
    for token in tokens {
        match token {
            proc_macro2::TokenTree::Ident(ident)
                if ident
                    .to_string()
                    .trim_start_matches("r#")
                    .starts_with("__tvm_ffi") =>
            {
                cx.error(
                    &ident,
                    format!("`{ident}`: names starting with `__tvm_ffi` are reserved for the code the tvm-ffi macros generate next to this item; rename it"),
                );
            }
            proc_macro2::TokenTree::Group(group) => reserved_prefix(group.stream(), cx),
            _ => {}
        }
    }
}

/// What the generated code of a derive repeats of the item: everything but the
/// `#[ffi_type(..)]` attribute (whose names become strings).
pub fn repeated_tokens(item: &syn::DeriveInput) -> TokenStream {
    let mut item = item.clone();
    item.attrs.retain(|a| !a.path().is_ident("ffi_type"));
    quote::ToTokens::to_token_stream(&item)
}

/// The signature rules shared by functions and methods: synchronous, not generic, not C
/// variadic. `what` is "function" or "method"; `generic_hint` says how to get around it.
pub fn signature(sig: &syn::Signature, what: &str, generic_hint: &str, cx: &Ctxt) {
    if let Some(a) = &sig.asyncness {
        cx.error(a, format!("an `async fn` cannot be an FFI {what}: callers expect the result on return; make it synchronous"));
    }
    if !sig.generics.params.is_empty() {
        cx.error(
            &sig.generics,
            format!("an FFI {what} cannot be generic: the runtime needs one concrete signature; {generic_hint}"),
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error(
            v,
            format!("C variadics are not supported; take `&[AnyView]` for a variadic {what}"),
        );
    }
    for input in &sig.inputs {
        if let syn::FnArg::Typed(pat) = input {
            check_param_type(&pat.ty, what, cx);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        check_result_type(ty, what, cx);
    }
}

/// What a new user writes for a callback or a list argument, reported with what to write
/// instead (the trait errors these would otherwise produce name no alternative).
fn check_param_type(ty: &syn::Type, what: &str, cx: &Ctxt) {
    if let Some(callable) = closure_type(ty) {
        cx.error(
            ty,
            format!(
                "an FFI {what} cannot take {callable}: take a `tvm_ffi::Function` (a Python \
                 callable or a C++ function arrives as one) and call it with \
                 `f.call_as::<R, _>((arg,))?`"
            ),
        );
    } else if let Some(elem) = vec_of_non_bytes(ty) {
        let elem = quote::ToTokens::to_token_stream(elem);
        cx.error(
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
fn check_result_type(ty: &syn::Type, what: &str, cx: &Ctxt) {
    let ty = result_ok_type(ty).unwrap_or(ty);
    if let Some(elem) = vec_of_non_bytes(ty) {
        let elem = quote::ToTokens::to_token_stream(elem);
        cx.error(
            ty,
            format!(
                "an FFI {what} returns a list as `tvm_ffi::Array<{elem}>`, not `Vec<{elem}>`: \
                 `tvm_ffi::Array::new(vec)?` converts it (Python and C++ receive an `ffi.Array`)"
            ),
        );
    } else if let syn::Type::Tuple(tuple) = strip_groups(ty) {
        if !tuple.elems.is_empty() {
            cx.error(
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

/// Parameter defaults: once a parameter has a default, every later one has one (a caller
/// omits trailing arguments only).
pub fn param_defaults(params: &[crate::ast::ParamInfo], cx: &Ctxt) {
    let mut first_default: Option<&crate::ast::ParamInfo> = None;
    for param in params {
        match (&param.default, first_default) {
            (Some(_), None) => first_default = Some(param),
            (None, Some(earlier)) => cx.push(syn::Error::new(
                param.span,
                format!(
                    "parameter `{}` has no default but follows `{}`, which has one: a caller could not omit `{}` alone; give `{}` a default too (`#[ffi(default = ..)]`), or move it before `{}`",
                    param.name, earlier.name, earlier.name, param.name, earlier.name
                ),
            )),
            _ => {}
        }
    }
}
