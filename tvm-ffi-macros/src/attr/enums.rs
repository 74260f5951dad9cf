//! Attribute parsing of `#[derive(Enum)]`: `#[ffi_type(..)]` on the enum and `#[ffi(..)]` on
//! each variant.
use proc_macro2::TokenStream;

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

const ENUM_OPTIONS: &str =
    "`key = \"pkg.Name\"`, `int` (an `ffi.IntEnum`), `str` (an `ffi.StrEnum`), `crate = \"path\"`";
const VARIANT_OPTIONS: &str =
    "`name = \"..\"` (the string index), `value = <literal>` (of an `int` or `str` enum), `attr(key = <literal>, ..)`";

/// The options of `#[ffi_type(..)]` on an enum.
pub struct EnumAttrs {
    pub krate: Attr<TokenStream>,
    pub key: Attr<syn::LitStr>,
    pub int: Attr<()>,
    pub str: Attr<()>,
}

/// Parses the enum's `#[ffi_type(..)]` (one, with a `key`, is expected).
pub fn enum_attrs(item: &syn::DeriveInput, cx: &Ctxt) -> EnumAttrs {
    let attrs = &item.attrs;
    let mut int = Attr::none("int");
    let mut str = Attr::none("str");
    let common = attr::ffi_type_options(attrs, "my_ext.Color", cx, |meta, cx| {
        if meta.path.is_ident("int") {
            attr::flag(meta, "int", cx)?;
            int.set(meta, (), cx);
        } else if meta.path.is_ident("str") {
            attr::flag(meta, "str", cx)?;
            str.set(meta, (), cx);
        } else {
            attr::unknown(meta, "#[ffi_type] enum", ENUM_OPTIONS, cx)?;
        }
        Ok(())
    });
    if !common.present {
        cx.error(
            &item.ident,
            "#[derive(Enum)] needs the type key: add `#[ffi_type(key = \"my_ext.Name\")]`",
        );
    } else if !common.key.is_written() {
        cx.error(
            &item.ident,
            "#[ffi_type] needs `key = \"my_ext.Name\"`: the enum's registry key",
        );
    }
    EnumAttrs {
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

pub fn variant_attrs(variant: &syn::Variant, cx: &Ctxt) -> VariantAttrs {
    let mut out = VariantAttrs {
        name: Attr::none("name"),
        value: Attr::none("value"),
        attrs: Attr::none("attr"),
    };
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit = attr::string(&meta, "`name` takes a string literal: `name = \"red\"`")?;
                out.name.set(&meta, lit, cx);
            } else if meta.path.is_ident("value") {
                let expr: syn::Expr = meta.value()?.parse()?;
                out.value.set(&meta, expr, cx);
            } else if meta.path.is_ident("attr") {
                let entries = attr::literal_list(&meta, "attr", cx)?;
                out.attrs.set(&meta, entries, cx);
            } else {
                attr::unknown(&meta, "#[ffi] variant", VARIANT_OPTIONS, cx)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}
