//! Code generation every item kind shares: the callable of `#[ffi_func]` and `#[ffi_methods]`
//! (the parameters' descriptions, and an invoke function that checks and converts the
//! arguments with the runtime's generic helpers, calls the user's function and converts its
//! result), metadata literals, and the `Member` impl of a reflected name.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::Params;

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
    /// Whether `convert` is instead the call of an `unsafe fn` on the call's value
    /// `__tvm_ffi_value` (`__private::init_into_any`, whose contract the caller states): it is
    /// then made in an `unsafe` block of its own, after the call (the user's code never runs
    /// inside the block).
    pub convert_is_unsafe: bool,
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

/// `fn <name>(sig, args)`: converts the arguments with the runtime's generic helpers, calls
/// the user's function and converts its result.
pub fn invoke_fn(callable: &Callable, name: &syn::Ident) -> TokenStream {
    let krate = &callable.krate;
    let body = invoke_body(callable);
    quote! {
        fn #name<'a>(
            __tvm_ffi_sig: &#krate::__private::FnSignature,
            __tvm_ffi_args: &'a [#krate::AnyView<'a>],
        ) -> #krate::Result<#krate::Any> {
            #body
        }
    }
}

/// The body of an invoke function: the conversions, the call, the result's conversion.
fn invoke_body(callable: &Callable) -> TokenStream {
    let Callable {
        params,
        call,
        convert,
        convert_is_unsafe,
        ..
    } = callable;
    // The user's call first, outside any `unsafe` block; then its conversion. (An `unsafe`
    // block here is spanned at the macro's call site, so `#![forbid(unsafe_code)]` accepts it.)
    let convert_value = if *convert_is_unsafe {
        // SAFETY (of the generated block): `convert` is `init_into_any::<Self, R>` of this
        // `#[ffi(init)]` constructor, whose function is registered as `Self`'s `__ffi_init__`
        // only (the registry's `finish_type`).
        quote! { unsafe { #convert } }
    } else {
        quote! { #convert(__tvm_ffi_value) }
    };
    match params {
        Params::Typed(params) => {
            let args = arg_idents(params.len());
            // Last argument first, as the C++ runtime (built with GCC, which evaluates call
            // arguments right to left) converts them: with several wrong arguments, the error
            // names the same one C++ names.
            let conversions = params.iter().enumerate().rev().map(|(i, ty)| {
                let a = &args[i];
                quote_spanned! {ty.span()=> let #a = __tvm_ffi_sig.arg::<#ty>(__tvm_ffi_args, #i)?; }
            });
            // The runtime binds the arguments to the parameters first (arity, keywords,
            // defaults: `FnSignature::with_args`), so there is one argument per parameter.
            quote! {
                #(#conversions)*
                let __tvm_ffi_value = #call;
                #convert_value
            }
        }
        Params::Packed => quote! {
            let _ = __tvm_ffi_sig;
            let __tvm_ffi_value = #call;
            #convert_value
        },
    }
}

/// `&[Param::new("a"), Param::with_default("b", DefaultValue::Int(1))]`: the parameters'
/// names and defaults, `self` first for a method with a receiver; and the compile-time checks
/// that each default fits its parameter's type, spanned at the default.
pub fn param_names(
    krate: &TokenStream,
    receiver: bool,
    params: &[crate::ast::ParamInfo],
) -> (TokenStream, TokenStream) {
    use crate::attr::params::DefaultLit;
    let p = quote!(#krate::__private);
    let receiver = receiver.then(|| quote!(#p::Param::new("self"),));
    let mut checks = Vec::new();
    let names = params
        .iter()
        .map(|param| {
            let name = &param.name;
            let Some(default) = &param.default else {
                return quote!(#p::Param::new(#name));
            };
            // The parameter's type spanned at the default: a mismatch is reported there.
            let span = default.span;
            let ty_of = &param.ty;
            let ty = respan(quote!(#ty_of), span);
            let check = |f: &str| {
                let f = syn::Ident::new(f, span);
                quote_spanned!(span=> #p::default_check::#f::<#ty>())
            };
            let dv = quote!(#p::DefaultValue);
            let (value, check) = match &default.value {
                DefaultLit::None => (quote!(#dv::None), check("none")),
                DefaultLit::Bool(v) => (quote!(#dv::Bool(#v)), check("bool")),
                DefaultLit::Int(v) => {
                    let wide = *v as i128;
                    let message = format!(
                        "the default {v} of `{}` does not fit its type `{}`; give a value in the type's range",
                        param.name,
                        quote!(#ty_of)
                    );
                    // Spanned at the default, the runtime's path included: the failed
                    // evaluation is reported there.
                    let p = respan(p.clone(), span);
                    let check = quote_spanned! {span=>
                        match #p::default_check::int::<#ty>(#wide) {
                            true => (),
                            false => #p::core::panic!(#message),
                        }
                    };
                    (quote!(#dv::Int(#v)), check)
                }
                DefaultLit::Float(v) => (quote!(#dv::Float(#v)), check("float")),
                DefaultLit::Str(v) => {
                    let message = format!(
                        "the default {v:?} of `{}` is not a value of its type `{}`; give one of the enum's values",
                        param.name,
                        quote!(#ty_of)
                    );
                    let p = respan(p.clone(), span);
                    let check = quote_spanned! {span=>
                        match #p::default_check::str::<#ty>(#v) {
                            true => (),
                            false => #p::core::panic!(#message),
                        }
                    };
                    (quote!(#dv::Str(#v)), check)
                }
                // The variant's value, by a const fn `#[derive(Enum)]` generates on the
                // parameter's enum (so a variant of another type is refused), spanned at the
                // default.
                DefaultLit::Variant(path) => {
                    let p = respan(p.clone(), span);
                    let check = quote!(());
                    let value = quote_spanned! {span=>
                        <<#ty as #p::default_check::VariantDefault>::Enum>::__tvm_ffi_default(#path)
                    };
                    (value, check)
                }
            };
            checks.push(quote_spanned! {span=> const _: () = #check; });
            quote!(#p::Param::with_default(#name, #value))
        })
        .collect::<Vec<_>>();
    let names = quote!(&[#receiver #(#names),*]);
    (names, quote!(#(#checks)*))
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = proc_macro2::TokenTree::Group(inner);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

/// A metadata literal as the runtime's `MetadataValue`.
pub fn metadata_value(krate: &TokenStream, lit: &syn::Lit) -> TokenStream {
    match lit {
        syn::Lit::Int(v) => quote!(#krate::__private::MetadataValue::Int(#v)),
        syn::Lit::Bool(v) => quote!(#krate::__private::MetadataValue::Bool(#v)),
        other => quote!(#krate::__private::MetadataValue::Str(#other)),
    }
}

/// `key = literal` pairs as `(key, MetadataValue)` tokens.
pub fn metadata_values(krate: &TokenStream, entries: &[(String, syn::Lit)]) -> Vec<TokenStream> {
    entries
        .iter()
        .map(|(k, lit)| {
            let value = metadata_value(krate, lit);
            quote!((#k, #value))
        })
        .collect()
}

/// `impl Member<'n', 'a', 'm', 'e'> for Type {}`, emitted for every reflected field and
/// method: a second member of that name is a conflicting-implementations error spanned on the
/// second one. The runtime's `Member` spells 24 characters; a longer name's rest is hashed.
pub fn member_impl(
    krate: &TokenStream,
    self_ty: &TokenStream,
    name: &str,
    span: Span,
) -> TokenStream {
    const SPELLED: usize = 24;
    let chars: Vec<char> = name.chars().collect();
    let spelled = chars.iter().take(SPELLED);
    let rest = (chars.len() > SPELLED).then(|| {
        // 64-bit FNV-1a.
        let hash = chars[SPELLED..]
            .iter()
            .collect::<String>()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
            });
        quote!(, #hash)
    });
    quote_spanned! {span=>
        impl #krate::__private::Member<#(#spelled),* #rest> for #self_ty {}
    }
}

/// One claim per type key, so that two types with one key are a compile error instead of two
/// layouts fighting over one registry entry at load: in this crate, a hidden crate-root macro
/// named after the key, spanned at the key literal (the compiler points at both definitions,
/// "the name `__tvm_ffi_type_key_my__ext_dot_Point` is defined multiple times"); across the
/// crates of one library, a linker symbol (`tvm_ffi_type_key.<key>`), spanned at the derive
/// (call site) so that `#![forbid(unsafe_code)]` crates compile.
pub fn key_claim(key: &str, key_span: Span) -> TokenStream {
    let symbol = format!("tvm_ffi_type_key.{key}");
    // Injective: letters and digits kept, `_` doubled, `.` as `_dot_`, others `_x<hex>_`.
    let mut name = String::from("__tvm_ffi_type_key_");
    for c in key.chars() {
        match c {
            c if c.is_ascii_alphanumeric() => name.push(c),
            '_' => name.push_str("__"),
            '.' => name.push_str("_dot_"),
            c => name.push_str(&format!("_x{:x}_", c as u32)),
        }
    }
    let name = syn::Ident::new(&name, key_span);
    let claim = quote_spanned! {key_span=>
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #name { () => {}; }
    };
    quote! {
        #[export_name = #symbol]
        #[used]
        static __tvm_ffi_TYPE_KEY_CLAIM: u8 = 0;
        #claim
    }
}
