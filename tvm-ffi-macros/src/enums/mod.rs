//! `#[derive(Enum)]`: attributes (`parse`) → validated model (`model`) → checks (`check`) →
//! the enum's conversions and its registration descriptor (`codegen`).
use proc_macro2::TokenStream;

use crate::diagnostics::Diagnostics;

mod check;
mod codegen;
mod model;
mod parse;

pub fn expand(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(item) => item,
        Err(err) => return err.to_compile_error(),
    };
    let mut diag = Diagnostics::default();
    crate::diagnostics::reserved_prefix(crate::diagnostics::repeated_tokens(&item), &mut diag);
    let variants = check::item_shape(&item, &mut diag);
    let attrs = parse::enum_attrs(&item.attrs, &mut diag);
    check::enum_attrs(&attrs, &item, &mut diag);
    let parsed: Vec<_> = variants
        .iter()
        .map(|v| (*v, parse::variant_attrs(v, &mut diag)))
        .collect();
    let model = model::build(&item, attrs, parsed, &mut diag);
    check::values(&model, &mut diag);
    match diag.finish(model) {
        Ok(model) => codegen::generate(&model),
        Err(err) => err.to_compile_error(),
    }
}
