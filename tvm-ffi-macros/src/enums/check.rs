//! Checks of a `#[derive(Enum)]` enum: unit variants, no generics, a key, unique indices.
use super::model::EnumModel;
use super::parse::EnumAttrs;
use crate::diagnostics::Diagnostics;

/// The enum's variants, if it is an enum of unit variants without generics.
pub fn item_shape<'a>(item: &'a syn::DeriveInput, diag: &mut Diagnostics) -> Vec<&'a syn::Variant> {
    if !item.generics.params.is_empty() {
        diag.error(
            &item.generics,
            "a TVM-FFI enum cannot be generic: the runtime registers one set of singletons per type key",
        );
    }
    match &item.data {
        syn::Data::Enum(e) => {
            if e.variants.is_empty() {
                diag.error(&item.ident, "a TVM-FFI enum needs at least one variant");
            }
            for v in &e.variants {
                if !matches!(v.fields, syn::Fields::Unit) {
                    diag.error(&v.fields, "a TVM-FFI enum has unit variants only (each is a singleton object); carry data in an object type with `#[derive(Object)]`");
                }
            }
            e.variants.iter().collect()
        }
        _ => {
            diag.error(
                &item.ident,
                "#[derive(Enum)] applies to enums; derive `Object` for structs",
            );
            Vec::new()
        }
    }
}

/// `#[ffi_type]` and its `key` are required.
pub fn enum_attrs(attrs: &EnumAttrs, item: &syn::DeriveInput, diag: &mut Diagnostics) {
    if !attrs.present {
        diag.error(
            &item.ident,
            "#[derive(Enum)] needs the type key: add `#[ffi_type(key = \"my_ext.Name\")]`",
        );
    } else if !attrs.key.is_written() {
        diag.error(
            &item.ident,
            "#[ffi_type] needs `key = \"my_ext.Name\"`: the enum's registry key",
        );
    }
}

/// Integer and string indices are unique (the runtime looks entries up by both). Integer
/// indices the compiler computes (Rust discriminants) are checked by the generated code.
pub fn values(model: &EnumModel, diag: &mut Diagnostics) {
    let mut ints = std::collections::HashSet::new();
    let mut strs = std::collections::HashSet::new();
    for v in &model.variants {
        if v.int_index.is_some_and(|index| !ints.insert(index)) {
            diag.push(syn::Error::new(
                v.span,
                format!(
                    "duplicate enum value {}: each variant needs its own",
                    v.int_index.unwrap_or_default()
                ),
            ));
        }
        if !strs.insert(v.str_index.clone()) {
            diag.push(syn::Error::new(
                v.span,
                format!(
                    "duplicate enum name `{}`: each variant needs its own",
                    v.str_index
                ),
            ));
        }
    }
}
