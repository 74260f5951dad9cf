//! The validated model of a `#[derive(Object)]` struct: what code generation needs, nothing
//! about how the user spelled it.
use proc_macro2::{Span, TokenStream};

pub use super::parse::DefaultValue;

/// A validated `#[derive(Object)]` struct.
pub struct ObjectModel {
    pub krate: TokenStream,
    pub ident: syn::Ident,
    pub key: String,
    pub doc: String,
    pub is_final: bool,
    pub external: bool,
    /// The structural kind: a constant of the runtime's `structural` module.
    pub structural: Option<syn::Ident>,
    /// The `#[ffi(base)]` field: the parent payload.
    pub base: Option<(syn::Ident, syn::Type)>,
    pub fields: Vec<FieldModel>,
    /// Fields not reflected (`#[ffi(skip)]`): default-initialised by the creator.
    pub skipped: Vec<(syn::Ident, syn::Type)>,
    /// Whether the runtime's reflection constructor is registered (not `init = false`, and a
    /// creator exists).
    pub auto_init: bool,
    /// Whether the type has a creator (not `creator = false`).
    pub creator: bool,
    /// `convert`: register `__ffi_convert__`.
    pub convert: bool,
    /// `type_attr(..)`: constant type attributes.
    pub type_attrs: Vec<(String, syn::Lit)>,
}

/// A reflected field.
pub struct FieldModel {
    pub ident: syn::Ident,
    pub ty: syn::Type,
    /// The name Python and C++ see.
    pub name: String,
    pub doc: String,
    /// `#[ffi(rw)]`, spanned at the option.
    pub rw: Option<Span>,
    /// Field flags, as names of the runtime's `field_flags` constants.
    pub flags: Vec<&'static str>,
    pub default: Option<DefaultValue>,
    pub metadata: Vec<(String, syn::Lit)>,
}

use super::parse::{FieldAttrs, TypeAttrs};
use crate::diagnostics::Diagnostics;

/// What a field is, from its options.
pub enum FieldRole {
    /// `#[ffi(base)]`, spanned at the option.
    Base(Span),
    /// `#[ffi(skip)]`.
    Skip,
    /// Reflected.
    Reflected(Box<FieldModel>),
}

/// A field's role and model; option combinations that make no sense are reported.
pub fn field(field: &syn::Field, attrs: FieldAttrs, diag: &mut Diagnostics) -> FieldRole {
    let ident = field.ident.clone().expect("named field");
    if let (Some(base), Some(_)) = (
        attrs.base.get(),
        attrs.skip.get().or(attrs.first_reflection_option.as_ref()),
    ) {
        diag.push(syn::Error::new(*base, "`#[ffi(base)]` takes no other options: the parent's fields are reflected by the parent"));
    }
    if let (Some(skip), Some(_)) = (attrs.skip.get(), attrs.first_reflection_option) {
        diag.push(syn::Error::new(
            *skip,
            "`#[ffi(skip)]` fields are not reflected: remove the other options",
        ));
    }
    if let (Some(_), Some((span, _))) = (attrs.default.get(), attrs.default_factory.get()) {
        diag.push(syn::Error::new(
            *span,
            "a field has one default: give either `default` or `default_factory`",
        ));
    }
    if let Some(base) = attrs.base.get() {
        return FieldRole::Base(*base);
    }
    if attrs.skip.is_set() {
        return FieldRole::Skip;
    }
    let mut flags = Vec::new();
    let mut flag = |on: bool, name: &'static str| {
        if on {
            flags.push(name);
        }
    };
    flag(attrs.rw.is_set(), "kTVMFFIFieldFlagBitMaskWritable");
    let default = attrs.default_value();
    flag(default.is_some(), "kTVMFFIFieldFlagBitMaskHasDefault");
    flag(
        matches!(default, Some(DefaultValue::Factory(_))),
        "kTVMFFIFieldFlagBitMaskDefaultFromFactory",
    );
    flag(attrs.kw_only.is_set(), "kTVMFFIFieldFlagBitMaskKwOnly");
    let off = |a: &crate::attr::Attr<bool>| a.get().copied().unwrap_or(false);
    flag(off(&attrs.init_off), "kTVMFFIFieldFlagBitMaskInitOff");
    flag(off(&attrs.repr_off), "kTVMFFIFieldFlagBitMaskReprOff");
    flag(off(&attrs.compare_off), "kTVMFFIFieldFlagBitMaskCompareOff");
    flag(off(&attrs.hash_off), "kTVMFFIFieldFlagBitMaskHashOff");
    if let Some(structural) = attrs.structural.get() {
        flags.push(structural);
    }
    let name = match attrs.name.get() {
        Some(lit) => lit.value(),
        None => ident.to_string().trim_start_matches("r#").to_string(),
    };
    FieldRole::Reflected(Box::new(FieldModel {
        ident,
        ty: field.ty.clone(),
        name,
        doc: crate::docs::collect(&field.attrs),
        rw: attrs.rw.get().copied(),
        flags,
        default,
        metadata: attrs.metadata.into_inner().unwrap_or_default(),
    }))
}

/// The model of the whole struct from its parsed options and its fields' roles.
pub fn object(
    item: &syn::DeriveInput,
    attrs: TypeAttrs,
    fields: Vec<(&syn::Field, FieldRole)>,
) -> ObjectModel {
    let mut base = None;
    let mut models = Vec::new();
    let mut skipped = Vec::new();
    for (field, role) in fields {
        let ident = field.ident.clone().expect("named field");
        match role {
            FieldRole::Base(_) => {
                base.get_or_insert((ident, field.ty.clone()));
            }
            FieldRole::Skip => skipped.push((ident, field.ty.clone())),
            FieldRole::Reflected(model) => models.push(*model),
        }
    }
    ObjectModel {
        krate: attrs
            .krate
            .into_inner()
            .unwrap_or_else(crate::crate_path::default_crate),
        ident: item.ident.clone(),
        key: attrs.key.get().map(|k| k.value()).unwrap_or_default(),
        doc: crate::docs::collect(&item.attrs),
        is_final: attrs.is_final.is_set(),
        external: attrs.external.is_set(),
        structural: attrs.structural.into_inner(),
        base,
        fields: models,
        skipped,
        // C++ registers the reflection constructor only for types with a creator.
        auto_init: !attrs.init_off.get().copied().unwrap_or(false)
            && !attrs.creator_off.get().copied().unwrap_or(false),
        creator: !attrs.creator_off.get().copied().unwrap_or(false),
        convert: attrs.convert.is_set(),
        type_attrs: attrs.type_attrs.into_inner().unwrap_or_default(),
    }
}
