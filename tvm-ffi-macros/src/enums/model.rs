//! The validated model of a `#[derive(Enum)]` enum.
use proc_macro2::TokenStream;

use super::parse::{EnumAttrs, VariantAttrs};
use crate::diagnostics::Diagnostics;

/// Which runtime base the enum derives from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Int,
    Str,
}

pub struct EnumModel {
    pub krate: TokenStream,
    pub ident: syn::Ident,
    pub key: String,
    pub doc: String,
    pub kind: Kind,
    pub variants: Vec<VariantModel>,
}

pub struct VariantModel {
    pub ident: syn::Ident,
    pub int_index: i64,
    pub str_index: String,
    pub attrs: Vec<(String, syn::Lit)>,
    /// Where the indices were written (for duplicate reports).
    pub span: proc_macro2::Span,
}

/// An integer literal, possibly negated.
fn int_literal(expr: &syn::Expr) -> Option<i64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(v),
            ..
        }) => v.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_literal(expr).map(|v: i64| -v),
        syn::Expr::Group(g) => int_literal(&g.expr),
        _ => None,
    }
}

pub fn build(
    item: &syn::DeriveInput,
    attrs: EnumAttrs,
    variants: Vec<(&syn::Variant, VariantAttrs)>,
    diag: &mut Diagnostics,
) -> EnumModel {
    let kind = match (attrs.int.is_set(), attrs.str.is_set()) {
        (true, true) => {
            diag.error(&item.ident, "an enum is `int` or `str`, not both");
            Kind::Int
        }
        (true, false) => Kind::Int,
        (false, true) => Kind::Str,
        (false, false) => Kind::Plain,
    };
    let mut models = Vec::new();
    for (ordinal, (variant, vattrs)) in variants.into_iter().enumerate() {
        let name = vattrs
            .name
            .get()
            .map(|lit| lit.value())
            .unwrap_or_else(|| variant.ident.to_string());
        let span = variant.ident.span();
        let (int_index, str_index) = match kind {
            Kind::Plain => {
                if let Some(value) = vattrs.value.get() {
                    diag.error(value, "only an `int` or `str` enum has values: mark the enum `#[ffi_type(.., int)]` or `#[ffi_type(.., str)]`, or remove `value`");
                }
                (ordinal as i64, name)
            }
            Kind::Int => {
                let from_discriminant = variant
                    .discriminant
                    .as_ref()
                    .and_then(|(_, expr)| int_literal(expr));
                let value = match vattrs.value.get() {
                    Some(expr) => int_literal(expr).unwrap_or_else(|| {
                        diag.error(
                            expr,
                            "an `int` enum's value is an integer literal: `value = 10`",
                        );
                        0
                    }),
                    None => from_discriminant.unwrap_or(ordinal as i64),
                };
                (value, name)
            }
            Kind::Str => {
                let value = match vattrs.value.get() {
                    Some(syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    })) => s.value(),
                    Some(expr) => {
                        diag.error(
                            expr,
                            "a `str` enum's value is a string literal: `value = \"+\"`",
                        );
                        name.clone()
                    }
                    None => name.clone(),
                };
                (ordinal as i64, value)
            }
        };
        models.push(VariantModel {
            ident: variant.ident.clone(),
            int_index,
            str_index,
            attrs: vattrs.attrs.into_inner().unwrap_or_default(),
            span,
        });
    }
    EnumModel {
        krate: attrs
            .krate
            .into_inner()
            .unwrap_or_else(crate::crate_path::default_crate),
        ident: item.ident.clone(),
        key: attrs.key.get().map(|k| k.value()).unwrap_or_default(),
        doc: crate::docs::collect(&item.attrs),
        kind,
        variants: models,
    }
}
