//! Attribute parsing of `#[derive(Variant)]`: only `#[ffi(crate = "..")]`.
use proc_macro2::TokenStream;

use crate::attr::{self, Attr};
use crate::diagnostics::Diagnostics;

/// `#[ffi(crate = "..")]` on the enum.
pub fn crate_attr(attrs: &[syn::Attribute], diag: &mut Diagnostics) -> Attr<TokenStream> {
    let mut krate = Attr::none("crate");
    for attr in attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let path = attr::crate_path(&meta)?;
                krate.set(&meta, path, diag);
            } else {
                attr::unknown(&meta, "#[ffi] variant enum", "`crate = \"path\"`", diag)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            diag.push(err);
        }
    }
    krate
}
