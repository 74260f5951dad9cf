//! The validated model of an `#[ffi_func]`.
use proc_macro2::TokenStream;

use super::parse::FuncAttrs;
use crate::callable::Params;
use crate::diagnostics::Diagnostics;

pub struct FuncModel {
    /// Path of the runtime crate (`crate = "..."`, default `::tvm_ffi`).
    pub krate: TokenStream,
    /// Global name (`name = "..."`), if registered globally.
    pub name: Option<syn::LitStr>,
    /// Export name (`export = "..."`), if exported as a module symbol.
    pub export: Option<syn::LitStr>,
    pub doc: String,
    pub ident: syn::Ident,
    pub params: Params,
    pub ret: Option<syn::Type>,
    /// User metadata keys.
    pub metadata: Vec<(String, syn::Lit)>,
}

/// The model of `func` with its options; a receiver and a misplaced packed parameter are
/// reported (see `super::check`).
pub fn func(attrs: FuncAttrs, func: &syn::ItemFn, diag: &mut Diagnostics) -> FuncModel {
    let sig = &func.sig;
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => super::check::receiver(r, diag),
            syn::FnArg::Typed(pat) => params.push((*pat.ty).clone()),
        }
    }
    let params = super::check::packed_params(params, diag);
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    FuncModel {
        krate: attrs
            .krate
            .into_inner()
            .unwrap_or_else(crate::crate_path::default_crate),
        name: attrs.name.into_inner(),
        export: attrs.export.into_inner(),
        doc: crate::docs::collect(&func.attrs),
        ident: sig.ident.clone(),
        params,
        ret,
        metadata: attrs.metadata.into_inner().unwrap_or_default(),
    }
}
