//! `#[derive(Object)]`: attributes (`parse`) → validated model (`model`) → checks (`check`) →
//! the type's object-trait impls and its registration descriptor (`codegen`).
use proc_macro2::TokenStream;

use crate::diagnostics::Diagnostics;

mod check;
mod codegen;
mod model;
mod parse;

pub use codegen::metadata_values;

pub fn expand(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(item) => item,
        Err(err) => return err.to_compile_error(),
    };
    let mut diag = Diagnostics::default();
    crate::diagnostics::reserved_prefix(crate::diagnostics::repeated_tokens(&item), &mut diag);
    let fields = check::item_shape(&item, &mut diag);
    let type_attrs = parse::type_attrs(&item.attrs, &mut diag);
    check::type_attrs(&type_attrs, &item, &mut diag);
    let parsed: Vec<_> = fields
        .map(|named| named.named.iter().collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|field| (field, parse::field_attrs(field, &mut diag)))
        .collect();
    let roles: Vec<_> = parsed
        .into_iter()
        .map(|(field, attrs)| (field, model::field(field, attrs, &mut diag)))
        .collect();
    check::field_roles(&roles, &mut diag);
    let model = model::object(&item, type_attrs, roles);
    check::object(&model, &mut diag);
    match diag.finish(model) {
        Ok(model) => codegen::generate(&model),
        Err(err) => err.to_compile_error(),
    }
}
