//! The validated model of a `#[derive(Variant)]` enum: its alternatives in order.
use proc_macro2::TokenStream;

use crate::attr::Attr;

pub struct VariantModel {
    pub krate: TokenStream,
    pub ident: syn::Ident,
    /// Each alternative: the variant's name and the one value type it holds.
    pub alternatives: Vec<(syn::Ident, syn::Type)>,
}

pub fn build(
    item: &syn::DeriveInput,
    krate: Attr<TokenStream>,
    alternatives: Vec<(syn::Ident, syn::Type)>,
) -> VariantModel {
    VariantModel {
        krate: krate
            .into_inner()
            .unwrap_or_else(crate::crate_path::default_crate),
        ident: item.ident.clone(),
        alternatives,
    }
}
