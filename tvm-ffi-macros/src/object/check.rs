//! Checks of a `#[derive(Object)]` struct that no single option can make: the item's shape
//! and layout, required options, where the base field is, reserved and duplicate names, and
//! options that contradict each other. Type-level facts the macro cannot see (a field type's
//! support, the parent being an object, `Send + Sync`) are checked by the compiler through the
//! generated code, with errors spanned at the user's tokens.
use quote::quote;

use super::model::{FieldRole, ObjectModel};
use super::parse::TypeAttrs;
use crate::diagnostics::Diagnostics;

/// The struct's named fields, if it is a struct with named fields; also checks that it is not
/// generic and is `#[repr(C)]`.
pub fn item_shape<'a>(
    item: &'a syn::DeriveInput,
    diag: &mut Diagnostics,
) -> Option<&'a syn::FieldsNamed> {
    let fields = match &item.data {
        syn::Data::Struct(syn::DataStruct {
            fields: syn::Fields::Named(named),
            ..
        }) => Some(named),
        syn::Data::Struct(s) => {
            // A unit struct has no field tokens to point at: point at its name.
            let at = match &s.fields {
                syn::Fields::Unit => {
                    let ident = &item.ident;
                    quote!(#ident)
                }
                fields => quote!(#fields),
            };
            diag.error(
                at,
                "#[derive(Object)] needs a struct with named fields: `struct Point { x: i64 }`",
            );
            None
        }
        syn::Data::Enum(e) => {
            diag.error(
                e.enum_token,
                "#[derive(Object)] applies to structs; an enum cannot be a TVM-FFI object",
            );
            None
        }
        syn::Data::Union(u) => {
            diag.error(
                u.union_token,
                "#[derive(Object)] applies to structs; a union cannot be a TVM-FFI object",
            );
            None
        }
    };
    if !item.generics.params.is_empty() {
        diag.error(
            &item.generics,
            "a TVM-FFI object type cannot be generic: the runtime registers one layout per type key; define one struct per instantiation",
        );
    }
    match repr_kind(&item.attrs) {
        Repr::C => {}
        Repr::Missing => diag.error(
            &item.ident,
            "a TVM-FFI object needs a C-compatible layout: add `#[repr(C)]` to the struct",
        ),
        Repr::Conflicting(tokens) => diag.error(
            tokens,
            "a TVM-FFI object is laid out as `#[repr(C)]` with natural alignment (the runtime reads fields at their offsets): remove `packed`/`transparent`",
        ),
    }
    fields
}

/// `#[ffi_type]` and its `key` are required.
pub fn type_attrs(attrs: &TypeAttrs, item: &syn::DeriveInput, diag: &mut Diagnostics) {
    if !attrs.present {
        diag.error(
            &item.ident,
            "#[derive(Object)] needs the type key: add `#[ffi_type(key = \"my_ext.Name\")]`",
        );
    } else if !attrs.key.is_written() {
        diag.error(
            &item.ident,
            "#[ffi_type] needs `key = \"my_ext.Name\"`: the type's registry key",
        );
    }
}

/// The base field comes first and alone; reflected names are unique and not reserved.
pub fn field_roles(fields: &[(&syn::Field, FieldRole)], diag: &mut Diagnostics) {
    let mut base_seen = false;
    let mut names = std::collections::HashSet::<String>::new();
    for (position, (field, role)) in fields.iter().enumerate() {
        match role {
            FieldRole::Base(span) => {
                if position != 0 && !base_seen {
                    diag.push(syn::Error::new(*span, "the `#[ffi(base)]` field must be the first field: the parent's payload comes right after the object header"));
                }
                if base_seen {
                    diag.push(syn::Error::new(
                        *span,
                        "only one `#[ffi(base)]` field: TVM-FFI has single inheritance",
                    ));
                }
                base_seen = true;
            }
            FieldRole::Skip => {}
            FieldRole::Reflected(model) => {
                let ident = field.ident.as_ref().expect("named field");
                if model.name.starts_with("__ffi") || model.name.starts_with("__tvm_ffi") {
                    diag.error(ident, format!("`{}` is reserved: names starting with `__ffi` are the runtime's hooks (`__ffi_init__`, ...); rename the field or use `#[ffi(name = \"..\")]`", model.name));
                }
                if !names.insert(model.name.clone()) {
                    diag.error(ident, format!("duplicate reflected field name `{}`; rename one with `#[ffi(name = \"..\")]`", model.name));
                }
            }
        }
    }
}

/// Options of the whole type that contradict each other.
pub fn object(model: &ObjectModel, diag: &mut Diagnostics) {
    if model.external && !model.skipped.is_empty() {
        diag.error(
            &model.ident,
            "an `external` declaration mirrors a type defined elsewhere field by field: `#[ffi(skip)]` fields have no place in it",
        );
    }
    if model.external && !model.creator {
        diag.error(&model.ident, "an `external` declaration has no creator of its own (the defining library's is used): remove `creator = false`");
    }
    if model.is_final && model.external {
        diag.error(&model.ident, "an `external` declaration describes a type defined elsewhere; `final` is decided by its definition, remove it");
    }
}

enum Repr {
    C,
    Missing,
    Conflicting(proc_macro2::TokenStream),
}

fn repr_kind(attrs: &[syn::Attribute]) -> Repr {
    let mut found_c = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let mut conflicting = None;
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                found_c = true;
            } else if meta.path.is_ident("packed") || meta.path.is_ident("transparent") {
                conflicting = Some(quote!(#attr));
            }
            crate::attr::skip_value(&meta)
        });
        if let Some(tokens) = conflicting {
            return Repr::Conflicting(tokens);
        }
    }
    if found_c {
        Repr::C
    } else {
        Repr::Missing
    }
}
