//! Checks of a `#[derive(Object)]` struct that no single option can make: where the base
//! field is, reserved and duplicate names, and options that contradict each other. Type-level facts the macro cannot see (a field type's
//! support, the parent being an object, `Send + Sync`) are checked by the compiler through the
//! generated code, with errors spanned at the user's tokens.
use crate::ast::object::{ObjectModel, TraitHook, MAX_CHILD_SLOTS};
use crate::ctxt::Ctxt;

/// Every check of a struct's model.
pub fn check(model: &ObjectModel, cx: &Ctxt) {
    bases(model, cx);
    names(model, cx);
    object(model, cx);
    for field in &model.fields {
        rust_collections(&field.ty, cx);
    }
}

/// Rust's own string, vector and maps, the usual first try, get the TVM-FFI type to use (the
/// compiler would list every supported type instead). By path: `String` alone may well be
/// `tvm_ffi::String`, so only a `std::`/`alloc::` path is reported here.
fn rust_collections(ty: &syn::Type, cx: &Ctxt) {
    let syn::Type::Path(path) = ty else { return };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let std_path = matches!(segments.first().map(String::as_str), Some("std" | "alloc"));
    let instead = match segments.last().map(String::as_str) {
        Some("Vec") => Some("`tvm_ffi::Array<T>` (immutable, as C++ `Array<T>`) or `tvm_ffi::List<T>` (shared and mutable)"),
        Some("HashMap" | "BTreeMap") => Some("`tvm_ffi::Map<K, V>` (immutable) or `tvm_ffi::Dict<K, V>` (shared and mutable)"),
        Some("String") if std_path => Some("`tvm_ffi::String`"),
        _ => None,
    };
    if let Some(instead) = instead {
        let name = quote::quote!(#ty).to_string().replace(' ', "");
        cx.error(ty, format!("`{name}` is Rust's own type, not a TVM-FFI value that Python and C++ can read: use {instead}, or mark the field `#[ffi(skip)]`"));
        return;
    }
    // Inside `Rw<..>`, `Option<..>`, `Array<..>`: the same advice.
    if let Some(last) = path.path.segments.last() {
        if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
            for arg in &args.args {
                if let syn::GenericArgument::Type(inner) = arg {
                    rust_collections(inner, cx);
                }
            }
        }
    }
}

/// The base field comes first and alone.
fn bases(model: &ObjectModel, cx: &Ctxt) {
    let mut base_seen = false;
    for (position, span) in &model.base_options {
        let (position, span) = (*position, span);
        {
            {
                if position != 0 && !base_seen {
                    cx.push(syn::Error::new(*span, "the `#[ffi(base)]` field must be the first field: the parent's payload comes right after the object header"));
                }
                if base_seen {
                    cx.push(syn::Error::new(
                        *span,
                        "only one `#[ffi(base)]` field: TVM-FFI has single inheritance",
                    ));
                }
                base_seen = true;
            }
        }
    }
}

/// Reflected names are unique and not reserved.
fn names(model: &ObjectModel, cx: &Ctxt) {
    let mut names = std::collections::HashSet::<String>::new();
    for model in &model.fields {
        {
            {
                let ident = &model.ident;
                if model.name.starts_with("__ffi") || model.name.starts_with("__tvm_ffi") {
                    cx.error(ident, format!("`{}` is reserved: names starting with `__ffi` are the runtime's hooks (`__ffi_init__`, ...); rename the field or use `#[ffi(name = \"..\")]`", model.name));
                }
                if !names.insert(model.name.clone()) {
                    cx.error(ident, format!("duplicate reflected field name `{}`; rename one with `#[ffi(name = \"..\")]`", model.name));
                }
            }
        }
    }
}

/// Options of the whole type that contradict each other.
fn object(model: &ObjectModel, cx: &Ctxt) {
    if model.external && !model.skipped.is_empty() {
        cx.error(
            &model.ident,
            "an `external` declaration mirrors a type defined elsewhere field by field: `#[ffi(skip)]` fields have no place in it",
        );
    }
    if let Some(span) = model.opaque {
        if !model.external {
            cx.push(syn::Error::new(span, "`opaque` declares a type defined elsewhere without its own fields: it needs `external` too"));
        } else if let Some(field) = model.fields.first() {
            cx.push(syn::Error::new(field.ident.span(), format!("an `opaque` declaration has no fields of its own (only its `#[ffi(base)]` parent): remove field `{}`, or declare every field and remove `opaque`", field.name)));
        }
    }
    if model.external && !model.creator {
        cx.error(&model.ident, "an `external` declaration has no creator of its own (the defining library's is used): remove `creator = false`");
    }
    let given = |wanted| {
        model
            .hooks
            .iter()
            .find(|(h, _)| *h == wanted)
            .map(|(_, span)| *span)
    };
    if given(TraitHook::Eq).is_none() {
        for (needs_eq, why) in [
            (TraitHook::Hash, "a hash is only meaningful with the equality it agrees with (`a == b` implies `hash(a) == hash(b)`)"),
            (TraitHook::Ord, "the runtime's `==` must agree with the order (`RecursiveEq` and `RecursiveLe` alike)"),
        ] {
            if let Some(span) = given(needs_eq) {
                cx.push(syn::Error::new(span, format!("`{}` needs `eq` too: {why}; write `#[ffi_type(.., eq, {})]`", needs_eq.option(), needs_eq.option())));
            }
        }
    }
    if model.external {
        if let Some((hook, span)) = model.hooks.first() {
            cx.push(syn::Error::new(*span, format!("`{}` registers a hook of the type, but an `external` declaration describes a type defined elsewhere, whose hooks its definition registers; remove it", hook.option())));
        }
        if let Some(span) = model.frozen {
            cx.push(syn::Error::new(span, "an `external` declaration cannot be `frozen`: the library that defines the type may write its fields (they are `Rw<T>`); remove `frozen`"));
        }
    }
    if model.frozen.is_some() {
        for field in &model.fields {
            if let Some(rw) = field.rw {
                cx.push(syn::Error::new(rw, format!("field `{}` of a `frozen` type cannot be `#[ffi(rw)]`: no field of a frozen type is writable, from Python, C++ or Rust; remove `rw` (and store `T`, not `Rw<T>`), or remove `frozen`", field.name)));
            }
        }
    }
    if let Some(count) = &model.child_slots {
        if model.is_final {
            cx.error(count, "a `final` type has no subtypes to reserve type indices for: remove `child_slots` or `final`");
        } else if model.external {
            cx.error(count, "an `external` declaration describes a type registered elsewhere, with the child slots its definition reserved: remove `child_slots`");
        } else {
            match count.base10_parse::<u32>() {
                Ok(n) if n <= MAX_CHILD_SLOTS => {}
                _ => cx.error(count, format!("`child_slots` takes a count from 0 to {MAX_CHILD_SLOTS}: the runtime reserves that many type indices for the type's subtypes")),
            }
        }
    }
    if model.is_final && model.external {
        cx.error(&model.ident, "an `external` declaration describes a type defined elsewhere; `final` is decided by its definition, remove it");
    }
}
