//! `#[derive(Variant)]`: a Rust enum of alternatives (`Int(i64)`, `Str(String)`, ...) as a
//! TVM-FFI `Variant`: attributes (`parse`) → validated model (`model`) → checks (`check`) →
//! conversions (`codegen`).
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
    let alternatives = check::item_shape(&item, &mut diag);
    let krate = parse::crate_attr(&item.attrs, &mut diag);
    let model = model::build(&item, krate, alternatives);
    match diag.finish(model) {
        Ok(model) => codegen::generate(&model),
        Err(err) => err.to_compile_error(),
    }
}
