//! The model of an `#[ffi_func]`.
use proc_macro2::TokenStream;

use crate::ast::{ParamInfo, Params};
use crate::attr::func::FuncAttrs;

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
    /// The typed parameters' names and defaults.
    pub names: Vec<ParamInfo>,
    pub ret: Option<syn::Type>,
    /// User metadata keys.
    pub metadata: Vec<(String, syn::Lit)>,
    /// The signature, for the checks.
    pub sig: syn::Signature,
}

/// The model of `func` with its options. A function whose only parameter is `&[AnyView]` is
/// packed; every other parameter list is typed (a receiver or a misplaced `&[AnyView]` is
/// reported by the checks).
pub fn func(
    attrs: FuncAttrs,
    param_attrs: Vec<crate::attr::params::ParamAttrs>,
    func: &syn::ItemFn,
) -> FuncModel {
    let sig = &func.sig;
    let params: Vec<syn::Type> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Receiver(_) => None,
            syn::FnArg::Typed(pat) => Some((*pat.ty).clone()),
        })
        .collect();
    let names = param_attrs
        .into_iter()
        .zip(&params)
        .map(|(attrs, ty)| ParamInfo::new(attrs, ty.clone()))
        .collect();
    let params = if params.len() == 1 && crate::ast::is_packed_args(&params[0]) {
        Params::Packed
    } else {
        Params::Typed(params)
    };
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
        doc: crate::attr::docs::collect(&func.attrs),
        ident: sig.ident.clone(),
        params,
        names,
        ret,
        metadata: attrs.metadata.into_inner().unwrap_or_default(),
        sig: sig.clone(),
    }
}
