//! The model of a `#[derive(Enum)]` enum; building it reports an item of the wrong shape and
//! values that do not fit the enum's kind.
use proc_macro2::TokenStream;

use crate::attr::enums::{EnumAttrs, VariantAttrs};
use crate::ctxt::Ctxt;

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
    /// The key literal's span.
    pub key_span: proc_macro2::Span,
    pub doc: String,
    pub kind: Kind,
    pub variants: Vec<VariantModel>,
}

pub struct VariantModel {
    pub ident: syn::Ident,
    /// The integer index when the macro knows it (a `value = ..` literal, an ordinal); `None`
    /// for an `int` enum's variant indexed by its Rust discriminant, which only the compiler
    /// knows (`A = 1 << 2`, or an implicit one after such), computed as `Self::A as i64`.
    pub int_index: Option<i64>,
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

fn build(
    item: &syn::DeriveInput,
    attrs: EnumAttrs,
    variants: Vec<(&syn::Variant, VariantAttrs)>,
    cx: &Ctxt,
) -> EnumModel {
    let kind = match (attrs.int.is_set(), attrs.str.is_set()) {
        (true, true) => {
            cx.error(&item.ident, "an enum is `int` or `str`, not both");
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
                    cx.error(value, "only an `int` or `str` enum has values: mark the enum `#[ffi_type(.., int)]` or `#[ffi_type(.., str)]`, or remove `value`");
                }
                (Some(ordinal as i64), name)
            }
            Kind::Int => {
                // Without `value`, the Rust discriminant (whatever expression gives it, or the
                // previous one plus one), which the compiler computes.
                let value = vattrs.value.get().map(|expr| {
                    int_literal(expr).unwrap_or_else(|| {
                        cx.error(
                            expr,
                            "an `int` enum's value is an integer literal: `value = 10`",
                        );
                        0
                    })
                });
                (value, name)
            }
            Kind::Str => {
                let value = match vattrs.value.get() {
                    Some(syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    })) => s.value(),
                    Some(expr) => {
                        cx.error(
                            expr,
                            "a `str` enum's value is a string literal: `value = \"+\"`",
                        );
                        name.clone()
                    }
                    None => name.clone(),
                };
                (Some(ordinal as i64), value)
            }
        };
        let mut attrs = vattrs.attrs.into_inner().unwrap_or_default();
        // A `str` enum's string index is its value; an explicit name is kept as the entry's
        // `name` attribute, which generated Python binds (`OpKind.add = entry(value="+")`).
        if let (Kind::Str, Some(lit)) = (kind, vattrs.name.get()) {
            if !attrs.iter().any(|(key, _)| key == "name") {
                attrs.push(("name".into(), syn::Lit::Str(lit.clone())));
            }
        }
        models.push(VariantModel {
            ident: variant.ident.clone(),
            int_index,
            str_index,
            attrs,
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
        key_span: attrs
            .key
            .get()
            .map(|k| k.span())
            .unwrap_or_else(proc_macro2::Span::call_site),
        doc: crate::attr::docs::collect(&item.attrs),
        kind,
        variants: models,
    }
}

/// The model of `item`, with its attributes parsed.
pub fn from_ast(item: &syn::DeriveInput, cx: &Ctxt) -> EnumModel {
    let variants = item_shape(item, cx);
    let attrs = crate::attr::enums::enum_attrs(item, cx);
    let parsed: Vec<_> = variants
        .iter()
        .map(|v| (*v, crate::attr::enums::variant_attrs(v, cx)))
        .collect();
    build(item, attrs, parsed, cx)
}

/// The enum's variants, if it is an enum of unit variants without generics.
pub fn item_shape<'a>(item: &'a syn::DeriveInput, cx: &Ctxt) -> Vec<&'a syn::Variant> {
    if !item.generics.params.is_empty() {
        cx.error(
            &item.generics,
            "a TVM-FFI enum cannot be generic: the runtime registers one set of singletons per type key",
        );
    }
    match &item.data {
        syn::Data::Enum(e) => {
            if e.variants.is_empty() {
                cx.error(&item.ident, "a TVM-FFI enum needs at least one variant");
            }
            for v in &e.variants {
                if !matches!(v.fields, syn::Fields::Unit) {
                    cx.error(&v.fields, "a TVM-FFI enum has unit variants only (each is a singleton object); carry data in an object type with `#[derive(Object)]`");
                }
            }
            e.variants.iter().collect()
        }
        _ => {
            cx.error(
                &item.ident,
                "#[derive(Enum)] applies to enums; derive `Object` for structs",
            );
            Vec::new()
        }
    }
}
