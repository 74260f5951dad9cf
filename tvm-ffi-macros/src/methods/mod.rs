//! `#[ffi_methods]`: attributes (`parse`) → one validated [`model::MethodModel`] per method
//! (`model`) → checks (`check`) → one registration descriptor per method (`codegen`). The impl
//! itself is emitted unchanged, minus the `#[ffi(..)]` attributes.
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::diagnostics::{with_original, Diagnostics};

mod check;
mod codegen;
mod model;
mod parse;

pub use codegen::member_impl;
pub use model::HOOKS;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
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
    let mut diag = Diagnostics::default();
    let krate = parse::block_attrs(attr, &mut diag)
        .into_inner()
        .unwrap_or_else(crate::crate_path::default_crate);
    check::block(&imp, &mut diag);
    let self_ty = &*imp.self_ty;
    crate::diagnostics::reserved_prefix(quote!(#self_ty), &mut diag);
    let mut methods = Vec::new();
    for item in &imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        let attrs = parse::method_attrs(f, &mut diag);
        if attrs.skip.is_set() {
            continue;
        }
        check::signature(f, &mut diag);
        // The signature: the generated code names the parameter and result types.
        let sig = &f.sig;
        crate::diagnostics::reserved_prefix(quote!(#sig), &mut diag);
        if let Some(model) = model::method(f, attrs, self_ty, &mut diag) {
            methods.push((f, model));
        }
    }
    check::names(&methods, &mut diag);
    let models: Vec<_> = methods.into_iter().map(|(_, m)| m).collect();
    let result = diag.finish(models);
    strip_ffi_attrs(&mut imp);
    match result {
        Ok(methods) => {
            let registrations = codegen::generate(&krate, &imp.self_ty, &methods);
            quote! { #imp #registrations }
        }
        Err(err) => with_original(err, quote!(#imp)),
    }
}

fn strip_ffi_attrs(imp: &mut syn::ItemImpl) {
    for item in &mut imp.items {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !a.path().is_ident("ffi"));
        }
    }
}
