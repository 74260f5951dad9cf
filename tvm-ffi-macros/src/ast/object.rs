//! The model of a `#[derive(Object)]` struct: what the checks and code generation need,
//! nothing about how the user spelled it; building it reports an item of the wrong shape and
//! field options that exclude each other.
use proc_macro2::{Span, TokenStream};

use quote::quote;

pub use crate::attr::object::DefaultValue;

/// A validated `#[derive(Object)]` struct.
pub struct ObjectModel {
    pub krate: TokenStream,
    pub ident: syn::Ident,
    pub key: String,
    /// The key literal's span.
    pub key_span: proc_macro2::Span,
    pub doc: String,
    pub is_final: bool,
    pub external: bool,
    /// `opaque`: an `external` declaration of the parent only (the type's own fields are not
    /// declared, nor checked; its total size is not).
    pub opaque: Option<Span>,
    /// The structural kind: a constant of the runtime's `structural` module.
    pub structural: Option<syn::Ident>,
    /// The `#[ffi(base)]` field: the parent payload.
    pub base: Option<(syn::Ident, syn::Type)>,
    /// Each `#[ffi(base)]` field's position and option (one, first, is expected).
    pub base_options: Vec<(usize, Span)>,
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
    /// `eq`, `hash`, `ord`, `str`, in that order, each spanned at its option.
    pub hooks: Vec<(TraitHook, Span)>,
    /// `frozen`, spanned at the option.
    pub frozen: Option<Span>,
    /// `child_slots = N`: the count as written (checked against [`MAX_CHILD_SLOTS`]).
    pub child_slots: Option<syn::LitInt>,
}

/// The most type indices a type may reserve for its subtypes: the runtime grows its type table
/// by the count, so an unbounded one would exhaust memory (or overflow its `int32_t`).
pub const MAX_CHILD_SLOTS: u32 = 4096;

/// A hook registered from one of the payload's traits (`#[ffi_type(eq)]`, ...).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TraitHook {
    Eq,
    Hash,
    Ord,
    Str,
}

impl TraitHook {
    /// The option's name.
    pub fn option(self) -> &'static str {
        match self {
            TraitHook::Eq => "eq",
            TraitHook::Hash => "hash",
            TraitHook::Ord => "ord",
            TraitHook::Str => "str",
        }
    }

    /// The type attribute it registers.
    pub fn attr(self) -> &'static str {
        match self {
            TraitHook::Eq => "__ffi_eq__",
            TraitHook::Hash => "__ffi_hash__",
            TraitHook::Ord => "__ffi_compare__",
            TraitHook::Str => "__ffi_repr__",
        }
    }

    /// The runtime's generic function that makes the hook (in `__private`).
    pub fn helper(self) -> &'static str {
        match self {
            TraitHook::Eq => "eq_hook",
            TraitHook::Hash => "hash_hook",
            TraitHook::Ord => "compare_hook",
            TraitHook::Str => "repr_hook",
        }
    }
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

use crate::attr::object::{FieldAttrs, TypeAttrs};
use crate::ctxt::Ctxt;

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
pub fn field(field: &syn::Field, attrs: FieldAttrs, cx: &Ctxt) -> FieldRole {
    let ident = field.ident.clone().expect("named field");
    if let (Some(base), Some(_)) = (
        attrs.base.get(),
        attrs.skip.get().or(attrs.first_reflection_option.as_ref()),
    ) {
        cx.push(syn::Error::new(*base, "`#[ffi(base)]` takes no other options: the parent's fields are reflected by the parent"));
    }
    if let (Some(skip), Some(_)) = (attrs.skip.get(), attrs.first_reflection_option) {
        cx.push(syn::Error::new(
            *skip,
            "`#[ffi(skip)]` fields are not reflected: remove the other options",
        ));
    }
    if let (Some(_), Some((span, _))) = (attrs.default.get(), attrs.default_factory.get()) {
        cx.push(syn::Error::new(
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
        doc: crate::attr::docs::collect(&field.attrs),
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
    let mut base_options = Vec::new();
    let mut models = Vec::new();
    let mut skipped = Vec::new();
    for (position, (field, role)) in fields.into_iter().enumerate() {
        let ident = field.ident.clone().expect("named field");
        match role {
            FieldRole::Base(span) => {
                base_options.push((position, span));
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
        key_span: attrs
            .key
            .get()
            .map(|k| k.span())
            .unwrap_or_else(proc_macro2::Span::call_site),
        doc: crate::attr::docs::collect(&item.attrs),
        is_final: attrs.is_final.is_set(),
        external: attrs.external.is_set(),
        opaque: attrs.opaque.get().copied(),
        structural: attrs.structural.into_inner(),
        base,
        base_options,
        fields: models,
        skipped,
        // C++ registers the reflection constructor only for types with a creator.
        auto_init: !attrs.init_off.get().copied().unwrap_or(false)
            && !attrs.creator_off.get().copied().unwrap_or(false),
        creator: !attrs.creator_off.get().copied().unwrap_or(false),
        convert: attrs.convert.is_set(),
        type_attrs: attrs.type_attrs.into_inner().unwrap_or_default(),
        hooks: [
            (TraitHook::Eq, attrs.eq.get()),
            (TraitHook::Hash, attrs.hash.get()),
            (TraitHook::Ord, attrs.ord.get()),
            (TraitHook::Str, attrs.str.get()),
        ]
        .into_iter()
        .filter_map(|(hook, span)| span.map(|span| (hook, *span)))
        .collect(),
        frozen: attrs.frozen.get().copied(),
        child_slots: attrs.child_slots.into_inner(),
    }
}

/// The model of `item`, with its attributes parsed; `None` when it is no struct with named
/// fields.
pub fn from_ast(item: &syn::DeriveInput, cx: &Ctxt) -> Option<ObjectModel> {
    let fields = item_shape(item, cx);
    let type_attrs = crate::attr::object::type_attrs(item, cx);
    let fields = fields?;
    let roles: Vec<_> = fields
        .named
        .iter()
        .map(|f| (f, field(f, crate::attr::object::field_attrs(f, cx), cx)))
        .collect();
    Some(object(item, type_attrs, roles))
}

/// The struct's named fields, if it is a struct with named fields; also checks that it is not
/// generic and is `#[repr(C)]`.
pub fn item_shape<'a>(item: &'a syn::DeriveInput, cx: &Ctxt) -> Option<&'a syn::FieldsNamed> {
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
            cx.error(
                at,
                "#[derive(Object)] needs a struct with named fields: `struct Point { x: i64 }`",
            );
            None
        }
        syn::Data::Enum(e) => {
            cx.error(
                e.enum_token,
                "#[derive(Object)] applies to structs; an enum cannot be a TVM-FFI object",
            );
            None
        }
        syn::Data::Union(u) => {
            cx.error(
                u.union_token,
                "#[derive(Object)] applies to structs; a union cannot be a TVM-FFI object",
            );
            None
        }
    };
    if !item.generics.params.is_empty() {
        cx.error(
            &item.generics,
            "a TVM-FFI object type cannot be generic: the runtime registers one layout per type key; define one struct per instantiation",
        );
    }
    match repr_kind(&item.attrs) {
        Repr::C => {}
        Repr::Missing => cx.error(
            &item.ident,
            "a TVM-FFI object needs a C-compatible layout: add `#[repr(C)]` to the struct",
        ),
        Repr::Conflicting(tokens) => cx.error(
            tokens,
            "a TVM-FFI object is laid out as `#[repr(C)]` with natural alignment (the runtime reads fields at their offsets): remove `packed`/`transparent`",
        ),
    }
    fields
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
