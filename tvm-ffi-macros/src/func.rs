//! `#[ffi_func]`: parse → [`FuncModel`] → generated registration.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;

use crate::diagnostics::{with_original, Diagnostics};

/// A validated `#[ffi_func]`.
struct FuncModel {
    /// Global name (`name = "..."`), if registered globally.
    name: Option<syn::LitStr>,
    doc: String,
    ident: syn::Ident,
    params: Vec<syn::Type>,
    ret: Option<syn::Type>,
}

const OPTIONS: &str = "`name = \"pkg.func\"`";

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
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
    match build_model(attr, &func) {
        Ok(model) => {
            let registration = generate(&model);
            quote! { #func #registration }
        }
        Err(err) => with_original(err, item),
    }
}

fn build_model(attr: TokenStream, func: &syn::ItemFn) -> syn::Result<FuncModel> {
    let mut diag = Diagnostics::default();
    let mut name: Option<syn::LitStr> = None;
    let mut name_given = false;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            name_given = true;
            let lit: syn::LitStr = meta.value()?.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "`name` takes a string literal, e.g. `name = \"my_ext.add\"`",
                )
            })?;
            if name.is_some() {
                return Err(meta.error("duplicate `name` option"));
            }
            name = Some(lit);
            Ok(())
        } else {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            Err(meta.error(format!(
                "unknown #[ffi_func] option `{key}`; valid options: {OPTIONS}"
            )))
        }
    });
    if let Err(err) = parser.parse2(attr) {
        diag.push(err);
    }
    match &name {
        Some(lit) => {
            let value = lit.value();
            if !valid_global_name(&value) {
                diag.error(lit, format!("invalid global function name `{value}`: use dot-separated identifiers such as `my_ext.add`"));
            }
        }
        None if name_given => {}
        None => diag.push(syn::Error::new(
            Span::call_site(),
            "#[ffi_func] needs a global name: `#[ffi_func(name = \"my_ext.add\")]`",
        )),
    }
    let sig = &func.sig;
    if let Some(a) = &sig.asyncness {
        diag.error(a, "an `async fn` cannot be an FFI function: callers expect the result on return; make it synchronous");
    }
    if !sig.generics.params.is_empty() {
        diag.error(&sig.generics, "an FFI function cannot be generic: the runtime needs one concrete signature; write a wrapper per type");
    }
    if let Some(v) = &sig.variadic {
        diag.error(
            v,
            "C variadics are not supported; take `&[AnyView]` for a variadic function",
        );
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => diag.error(r, "#[ffi_func] is for free functions; use #[ffi_methods] on an impl block for methods"),
            syn::FnArg::Typed(pat) => params.push((*pat.ty).clone()),
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    diag.finish(FuncModel {
        name,
        doc: crate::docs::collect(&func.attrs),
        ident: sig.ident.clone(),
        params,
        ret,
    })
}

fn valid_global_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

fn generate(model: &FuncModel) -> TokenStream {
    let ident = &model.ident;
    let name = model.name.as_ref().map(|n| n.value()).unwrap_or_default();
    let doc = &model.doc;
    let unit: syn::Type = syn::parse_quote!(());
    let ret = model.ret.as_ref().unwrap_or(&unit);
    let param_descs = model.params.iter().map(|ty| {
        quote_spanned! {ty.span()=> ::tvm_ffi::function::TypeDesc::of::<#ty>() }
    });
    let arg_idents: Vec<_> = (0..model.params.len())
        .map(|i| format_ident!("__arg{}", i))
        .collect();
    let conversions = model.params.iter().enumerate().map(|(i, ty)| {
        let a = &arg_idents[i];
        quote_spanned! {ty.span()=> let #a = __SIGNATURE.arg::<#ty>(__args, #i)?; }
    });
    let ret_check = quote_spanned! {ret.span()=> <#ret as ::tvm_ffi::function::FfiReturn>::DESC };
    let ret_convert =
        quote_spanned! {ret.span()=> <#ret as ::tvm_ffi::function::FfiReturn>::into_ffi_result };
    quote! {
        const _: () = {
            static __SIGNATURE: ::tvm_ffi::function::FnSignature = ::tvm_ffi::function::FnSignature {
                name: ::std::borrow::Cow::Borrowed(#name),
                params: ::std::borrow::Cow::Borrowed(&[#(#param_descs),*]),
                ret: #ret_check,
            };
            fn __make() -> ::tvm_ffi::Function {
                ::tvm_ffi::Function::from_packed_named(#name, |__args| {
                    __SIGNATURE.check_arity(__args)?;
                    #(#conversions)*
                    #ret_convert(#ident(#(#arg_idents),*))
                })
            }
            fn __metadata() -> ::std::string::String {
                ::tvm_ffi::metadata::metadata_json(&__SIGNATURE.type_schema(), &[])
            }
            #[::tvm_ffi::__private::linkme::distributed_slice(::tvm_ffi::registry::FUNCTIONS)]
            #[linkme(crate = ::tvm_ffi::__private::linkme)]
            static __ENTRY: ::tvm_ffi::registry::FunctionEntry = ::tvm_ffi::registry::FunctionEntry {
                name: #name,
                doc: #doc,
                make: __make,
                metadata: __metadata,
            };
        };
    }
}
