//! Checks of a `#[derive(Variant)]` enum: not generic, each variant holds exactly one value.
use crate::diagnostics::Diagnostics;

/// The alternatives, if the item is an enum whose variants each hold one unnamed value.
pub fn item_shape(item: &syn::DeriveInput, diag: &mut Diagnostics) -> Vec<(syn::Ident, syn::Type)> {
    if !item.generics.params.is_empty() {
        diag.error(
            &item.generics,
            "a TVM-FFI variant cannot be generic: write one enum per set of alternatives",
        );
    }
    let syn::Data::Enum(e) = &item.data else {
        diag.error(
            &item.ident,
            "#[derive(Variant)] applies to an enum of alternatives: `enum IntOrStr { Int(i64), Str(tvm_ffi::String) }`",
        );
        return Vec::new();
    };
    if e.variants.is_empty() {
        diag.error(
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
            _ => diag.error(v, "each alternative holds exactly one value: `Name(Type)`"),
        }
    }
    out
}
