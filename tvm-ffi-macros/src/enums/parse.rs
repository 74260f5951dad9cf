//! Attribute parsing of `#[derive(Enum)]`: `#[ffi_type(..)]` on the enum and `#[ffi(..)]` on
//! each variant.
use proc_macro2::TokenStream;

use crate::attr::{self, Attr};
use crate::diagnostics::Diagnostics;

const ENUM_OPTIONS: &str =
    "`key = \"pkg.Name\"`, `int` (an `ffi.IntEnum`), `str` (an `ffi.StrEnum`), `crate = \"path\"`";
const VARIANT_OPTIONS: &str =
    "`name = \"..\"` (the string index), `value = <literal>` (of an `int` or `str` enum), `attr(key = <literal>, ..)`";

/// The options of `#[ffi_type(..)]` on an enum.
pub struct EnumAttrs {
    pub present: bool,
    pub krate: Attr<TokenStream>,
    pub key: Attr<syn::LitStr>,
    pub int: Attr<()>,
    pub str: Attr<()>,
}

pub fn enum_attrs(attrs: &[syn::Attribute], diag: &mut Diagnostics) -> EnumAttrs {
    let mut int = Attr::none("int");
    let mut str = Attr::none("str");
    let common = attr::ffi_type_options(attrs, "my_ext.Color", diag, |meta, diag| {
        if meta.path.is_ident("int") {
            attr::flag(meta, "int", diag)?;
            int.set(meta, (), diag);
        } else if meta.path.is_ident("str") {
            attr::flag(meta, "str", diag)?;
            str.set(meta, (), diag);
        } else {
            attr::unknown(meta, "#[ffi_type] enum", ENUM_OPTIONS, diag)?;
        }
        Ok(())
    });
    EnumAttrs {
        present: common.present,
        krate: common.krate,
        key: common.key,
        int,
        str,
    }
}

/// The options of a variant's `#[ffi(..)]`.
pub struct VariantAttrs {
    pub name: Attr<syn::LitStr>,
    pub value: Attr<syn::Expr>,
    pub attrs: Attr<Vec<(String, syn::Lit)>>,
}

pub fn variant_attrs(variant: &syn::Variant, diag: &mut Diagnostics) -> VariantAttrs {
    let mut out = VariantAttrs {
        name: Attr::none("name"),
        value: Attr::none("value"),
        attrs: Attr::none("attr"),
    };
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit = attr::string(&meta, "`name` takes a string literal: `name = \"red\"`")?;
                out.name.set(&meta, lit, diag);
            } else if meta.path.is_ident("value") {
                let expr: syn::Expr = meta.value()?.parse()?;
                out.value.set(&meta, expr, diag);
            } else if meta.path.is_ident("attr") {
                let entries = attr::literal_list(&meta, "attr", diag)?;
                out.attrs.set(&meta, entries, diag);
            } else {
                attr::unknown(&meta, "#[ffi] variant", VARIANT_OPTIONS, diag)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            diag.push(err);
        }
    }
    out
}
