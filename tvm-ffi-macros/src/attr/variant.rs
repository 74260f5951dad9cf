//! Attribute parsing of `#[derive(Variant)]`: only `#[ffi(crate = "..")]`.
use proc_macro2::TokenStream;

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

/// `#[ffi(crate = "..")]` on the enum.
pub fn crate_attr(attrs: &[syn::Attribute], cx: &Ctxt) -> Attr<TokenStream> {
    let mut krate = Attr::none("crate");
    for attr in attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let path = attr::crate_path(&meta)?;
                krate.set(&meta, path, cx);
            } else {
                attr::unknown(&meta, "#[ffi] variant enum", "`crate = \"path\"`", cx)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    krate
}
