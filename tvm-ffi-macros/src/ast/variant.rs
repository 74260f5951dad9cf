//! The model of a `#[derive(Variant)]` enum: its alternatives in order.
use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

pub struct VariantModel {
    pub krate: TokenStream,
    pub ident: syn::Ident,
    /// Each alternative: the variant's name and the one value type it holds.
    pub alternatives: Vec<(syn::Ident, syn::Type)>,
    /// The enum's generics (none are allowed).
    pub generics: syn::Generics,
}

/// The model of `item`, with its attributes parsed; the alternatives of the wrong shape are
/// reported and left out.
pub fn from_ast(item: &syn::DeriveInput, cx: &Ctxt) -> VariantModel {
    let alternatives = item_shape(item, cx);
    let krate = crate::attr::variant::crate_attr(&item.attrs, cx);
    VariantModel {
        krate: krate
            .into_inner()
            .unwrap_or_else(crate::crate_path::default_crate),
        ident: item.ident.clone(),
        alternatives,
        generics: item.generics.clone(),
    }
}

/// The alternatives, if the item is an enum whose variants each hold one unnamed value.
pub fn item_shape(item: &syn::DeriveInput, cx: &Ctxt) -> Vec<(syn::Ident, syn::Type)> {
    let syn::Data::Enum(e) = &item.data else {
        cx.error(
            &item.ident,
            "#[derive(Variant)] applies to an enum of alternatives: `enum IntOrStr { Int(i64), Str(tvm_ffi::String) }`",
        );
        return Vec::new();
    };
    if e.variants.is_empty() {
        cx.error(
            &item.ident,
            "a TVM-FFI variant needs at least one alternative",
        );
    }
    let mut out = Vec::new();
    for v in &e.variants {
        match &v.fields {
            syn::Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                out.push((v.ident.clone(), f.unnamed[0].ty.clone()));
            }
            _ => cx.error(v, "each alternative holds exactly one value: `Name(Type)`"),
        }
    }
    out
}
