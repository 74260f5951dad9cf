//! `#[derive(Object)]`: parse → [`ObjectModel`] → the type's `ObjectType` impls and its
//! registration descriptor.
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::diagnostics::Diagnostics;

const TYPE_OPTIONS: &str = "`key = \"pkg.Name\"`, `final`, `structural = \"tree\"|\"dag\"|\"const-tree\"|\"free-var\"|\"unique\"`, `external`, `crate = \"path\"`";
const FIELD_OPTIONS: &str = "`base`, `skip`, `rw`, `name = \"..\"`, `default = <expr>`, `default_factory = <path>`, `kw_only`, `init = false`, `repr = false`, `compare = false`, `hash = false`, `structural = \"ignore\"|\"def\"`, `metadata(key = <literal>, ..)`";

// Field flag bits (c_api.h `TVMFFIFieldFlagBitMask*`).
const WRITABLE: i64 = 1 << 0;
const HAS_DEFAULT: i64 = 1 << 1;
const SEQ_HASH_IGNORE: i64 = 1 << 3;
const SEQ_HASH_DEF: i64 = 1 << 4;
const DEFAULT_FROM_FACTORY: i64 = 1 << 5;
const REPR_OFF: i64 = 1 << 6;
const COMPARE_OFF: i64 = 1 << 7;
const HASH_OFF: i64 = 1 << 8;
const INIT_OFF: i64 = 1 << 9;
const KW_ONLY: i64 = 1 << 10;

/// A validated `#[derive(Object)]` struct.
struct ObjectModel {
    krate: TokenStream,
    ident: syn::Ident,
    key: String,
    doc: String,
    is_final: bool,
    external: bool,
    structural: Option<syn::Ident>,
    /// The `#[ffi(base)]` field: the parent payload.
    base: Option<(syn::Ident, syn::Type)>,
    fields: Vec<FieldModel>,
    /// Fields not reflected (`#[ffi(skip)]`): default-initialised by the creator.
    skipped: Vec<(syn::Ident, syn::Type)>,
}

enum DefaultValue {
    Expr(syn::Expr),
    Factory(syn::Path),
}

struct FieldModel {
    ident: syn::Ident,
    ty: syn::Type,
    name: String,
    doc: String,
    rw: Option<Span>,
    flags: i64,
    default: Option<DefaultValue>,
    metadata: Vec<(String, syn::Lit)>,
}

pub fn expand(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(item) => item,
        Err(err) => return err.to_compile_error(),
    };
    match build_model(&item) {
        Ok(model) => generate(&model),
        Err(err) => err.to_compile_error(),
    }
}

fn build_model(item: &syn::DeriveInput) -> syn::Result<ObjectModel> {
    let mut diag = Diagnostics::default();
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

    // ---- #[ffi_type(...)] ----
    let mut key: Option<syn::LitStr> = None;
    let mut is_final = false;
    let mut external = false;
    let mut structural: Option<syn::Ident> = None;
    let mut seen_ffi_type = false;
    let mut key_given = false;
    let mut krate = crate::crate_path::default_crate();
    for attr in item.attrs.iter().filter(|a| a.path().is_ident("ffi_type")) {
        if seen_ffi_type {
            diag.error(
                attr,
                "duplicate #[ffi_type]: merge the options into one attribute",
            );
        }
        seen_ffi_type = true;
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("key") {
                key_given = true;
                let lit: syn::LitStr = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(e.span(), "`key` takes a string literal: `key = \"my_ext.Point\"`")
                })?;
                if !valid_type_key(&lit.value()) {
                    diag.error(&lit, format!("invalid type key `{}`: use dot-separated identifiers such as `my_ext.Point`", lit.value()));
                }
                if key.replace(lit).is_some() {
                    diag.push(meta.error("duplicate `key` option"));
                }
            } else if meta.path.is_ident("crate") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                krate = crate::crate_path::parse(&lit)?;
            } else if meta.path.is_ident("final") || meta.path.is_ident("external") {
                let flag = if meta.path.is_ident("final") { &mut is_final } else { &mut external };
                let name = if meta.path.is_ident("final") { "final" } else { "external" };
                if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
                    diag.push(meta.error(format!("`{name}` takes no value: write `{name}` alone")));
                    if meta.input.peek(syn::Token![=]) {
                        let _: syn::Expr = meta.value()?.parse()?;
                    } else {
                        let _content;
                        syn::parenthesized!(_content in meta.input);
                    }
                }
                if *flag {
                    diag.push(meta.error(format!("duplicate `{name}` option")));
                }
                *flag = true;
            } else if meta.path.is_ident("structural") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                let kind = match lit.value().as_str() {
                    "tree" => "TREE",
                    "dag" => "DAG",
                    "const-tree" => "CONST_TREE",
                    "free-var" => "FREE_VAR",
                    "unique" => "UNIQUE",
                    other => {
                        diag.error(&lit, format!("unknown structural kind `{other}`; use \"tree\", \"dag\", \"const-tree\", \"free-var\" or \"unique\""));
                        "UNSUPPORTED"
                    }
                };
                if structural.replace(syn::Ident::new(kind, lit.span())).is_some() {
                    diag.error(&lit, "duplicate `structural` option");
                }
            } else {
                let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                diag.push(meta.error(format!(
                    "unknown #[ffi_type] option `{name}`; valid options: {TYPE_OPTIONS}"
                )));
                // Skip a value, if any, so parsing continues with the next option.
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            diag.push(err);
        }
    }
    if !seen_ffi_type {
        diag.error(
            &item.ident,
            "#[derive(Object)] needs the type key: add `#[ffi_type(key = \"my_ext.Name\")]`",
        );
    } else if !key_given {
        diag.error(
            &item.ident,
            "#[ffi_type] needs `key = \"my_ext.Name\"`: the type's registry key",
        );
    }

    // ---- fields ----
    let mut base = None;
    let mut models = Vec::new();
    let mut skipped = Vec::new();
    let mut names = std::collections::HashMap::<String, Span>::new();
    if let Some(fields) = fields {
        for (position, field) in fields.named.iter().enumerate() {
            let ident = field.ident.clone().expect("named field");
            let parsed = parse_field(field, &mut diag);
            match parsed {
                FieldRole::Base(span) => {
                    if position != 0 && base.is_none() {
                        diag.push(syn::Error::new(span, "the `#[ffi(base)]` field must be the first field: the parent's payload comes right after the object header"));
                    }
                    if base.is_some() {
                        diag.push(syn::Error::new(
                            span,
                            "only one `#[ffi(base)]` field: TVM-FFI has single inheritance",
                        ));
                    }
                    base = Some((ident, field.ty.clone()));
                }
                FieldRole::Skip => skipped.push((ident, field.ty.clone())),
                FieldRole::Reflected(model) => {
                    if model.name.starts_with("__ffi") || model.name.starts_with("__tvm_ffi") {
                        diag.error(&ident, format!("`{}` is reserved: names starting with `__ffi` are the runtime's hooks (`__ffi_init__`, ...); rename the field or use `#[ffi(name = \"..\")]`", model.name));
                    }
                    if let Some(_previous) = names.insert(model.name.clone(), ident.span()) {
                        diag.error(&ident, format!("duplicate reflected field name `{}`; rename one with `#[ffi(name = \"..\")]`", model.name));
                    }
                    models.push(*model);
                }
            }
        }
    }
    if external && !skipped.is_empty() {
        diag.error(
            &item.ident,
            "an `external` declaration mirrors a type defined elsewhere field by field: `#[ffi(skip)]` fields have no place in it",
        );
    }
    if is_final && external {
        diag.error(&item.ident, "an `external` declaration describes a type defined elsewhere; `final` is decided by its definition, remove it");
    }
    diag.finish(ObjectModel {
        krate,
        ident: item.ident.clone(),
        key: key.map(|k| k.value()).unwrap_or_default(),
        doc: crate::docs::collect(&item.attrs),
        is_final,
        external,
        structural,
        base,
        fields: models,
        skipped,
    })
}

enum FieldRole {
    Base(Span),
    Skip,
    Reflected(Box<FieldModel>),
}

fn parse_field(field: &syn::Field, diag: &mut Diagnostics) -> FieldRole {
    let ident = field.ident.clone().expect("named field");
    let mut model = FieldModel {
        name: ident.to_string().trim_start_matches("r#").to_string(),
        ident,
        ty: field.ty.clone(),
        doc: crate::docs::collect(&field.attrs),
        rw: None,
        flags: 0,
        default: None,
        metadata: Vec::new(),
    };
    let mut base: Option<Span> = None;
    let mut skip: Option<Span> = None;
    let mut other_options: Option<Span> = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let span = path.span();
            let flag_false = |meta: &syn::meta::ParseNestedMeta, what: &str| -> syn::Result<bool> {
                let lit: syn::LitBool = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(e.span(), format!("`{what}` takes `false` (fields are included by default): `{what} = false`"))
                })?;
                Ok(!lit.value)
            };
            if path.is_ident("base") {
                base = Some(span);
                return Ok(());
            }
            if path.is_ident("skip") {
                skip = Some(span);
                return Ok(());
            }
            other_options = Some(span);
            if path.is_ident("rw") {
                model.rw = Some(span);
                model.flags |= WRITABLE;
            } else if path.is_ident("name") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if syn::parse_str::<syn::Ident>(&lit.value()).is_err() {
                    diag.error(&lit, format!("invalid field name `{}`: use an identifier", lit.value()));
                }
                model.name = lit.value();
            } else if path.is_ident("default") {
                let expr: syn::Expr = meta.value()?.parse()?;
                if model.default.replace(DefaultValue::Expr(expr)).is_some() {
                    diag.push(syn::Error::new(span, "a field has one default: give either `default` or `default_factory`"));
                }
                model.flags |= HAS_DEFAULT;
            } else if path.is_ident("default_factory") {
                let factory: syn::Path = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(e.span(), "`default_factory` takes a function path: `default_factory = make_label`")
                })?;
                if model.default.replace(DefaultValue::Factory(factory)).is_some() {
                    diag.push(syn::Error::new(span, "a field has one default: give either `default` or `default_factory`"));
                }
                model.flags |= HAS_DEFAULT | DEFAULT_FROM_FACTORY;
            } else if path.is_ident("kw_only") {
                model.flags |= KW_ONLY;
            } else if path.is_ident("init") {
                if flag_false(&meta, "init")? {
                    model.flags |= INIT_OFF;
                }
            } else if path.is_ident("repr") {
                if flag_false(&meta, "repr")? {
                    model.flags |= REPR_OFF;
                }
            } else if path.is_ident("compare") {
                if flag_false(&meta, "compare")? {
                    model.flags |= COMPARE_OFF;
                }
            } else if path.is_ident("hash") {
                if flag_false(&meta, "hash")? {
                    model.flags |= HASH_OFF;
                }
            } else if path.is_ident("structural") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                match lit.value().as_str() {
                    "ignore" => model.flags |= SEQ_HASH_IGNORE,
                    "def" => model.flags |= SEQ_HASH_DEF,
                    other => diag.error(&lit, format!("unknown structural field flag `{other}`; use \"ignore\" or \"def\"")),
                }
            } else if path.is_ident("metadata") {
                meta.parse_nested_meta(|entry| {
                    let key = entry.path.get_ident().map(|i| i.to_string()).ok_or_else(|| entry.error("metadata keys are identifiers"))?;
                    let lit: syn::Lit = entry.value()?.parse()?;
                    match &lit {
                        syn::Lit::Int(_) | syn::Lit::Bool(_) | syn::Lit::Str(_) => {}
                        _ => diag.error(&lit, "metadata values are integer, bool or string literals"),
                    }
                    if key == "type_schema" {
                        diag.error(&entry.path, "`type_schema` is written by the SDK from the field's type; choose another key");
                    }
                    model.metadata.push((key, lit));
                    Ok(())
                })?;
            } else {
                let name = path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                diag.push(meta.error(format!("unknown #[ffi] field option `{name}`; valid options: {FIELD_OPTIONS}")));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            diag.push(err);
        }
    }
    if let (Some(base), Some(_)) = (base, skip.or(other_options)) {
        diag.push(syn::Error::new(base, "`#[ffi(base)]` takes no other options: the parent's fields are reflected by the parent"));
    }
    if let (Some(skip), Some(_)) = (skip, other_options) {
        diag.push(syn::Error::new(
            skip,
            "`#[ffi(skip)]` fields are not reflected: remove the other options",
        ));
    }
    if let Some(span) = base {
        FieldRole::Base(span)
    } else if skip.is_some() {
        FieldRole::Skip
    } else {
        FieldRole::Reflected(Box::new(model))
    }
}

enum Repr {
    C,
    Missing,
    Conflicting(TokenStream),
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
            if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
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

pub fn valid_type_key(key: &str) -> bool {
    !key.is_empty()
        && key.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

fn generate(model: &ObjectModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let key = &model.key;
    let doc = &model.doc;
    let parent_ty: syn::Type = match &model.base {
        Some((_, ty)) => ty.clone(),
        None => syn::parse_quote!(#krate::__private::Object),
    };
    let is_final = model.is_final;
    // Objects of Rust-defined types keep a construction state; Rust seals it before its first
    // dereference, so no setter ever writes under a live reference.
    let before_deref = (!model.external).then(|| {
        quote! {
            #[inline(always)]
            fn before_deref(
                object: ::core::ptr::NonNull<#krate::__private::sys::TVMFFIObject>,
            ) {
                #krate::__private::seal(object)
            }
        }
    });
    let origin = if model.external {
        quote!(#krate::__private::TypeOrigin::External)
    } else {
        quote!(#krate::__private::TypeOrigin::Defined)
    };
    let structural = match &model.structural {
        Some(kind) => quote!(#krate::__private::structural::#kind),
        None => quote!(#krate::__private::structural::UNSUPPORTED),
    };

    let base_check = model.base.as_ref().map(|(base_ident, base_ty)| {
        quote_spanned! {base_ty.span()=>
            const _: () = ::core::assert!(
                ::core::mem::offset_of!(#ident, #base_ident) == 0,
                "the `#[ffi(base)]` field must be at offset 0"
            );
            const _: fn() = || {
                fn __parent_is_an_object<P: #krate::__private::Reflected>() {}
                __parent_is_an_object::<#base_ty>();
            };
            const _: () = ::core::assert!(
                !<#base_ty as #krate::__private::Reflected>::IS_FINAL,
                "the `#[ffi(base)]` type is `final` and cannot have subtypes"
            );
        }
    });

    let mut field_checks = Vec::new();
    let mut entries = Vec::new();
    let mut defaults = Vec::new();
    let mut empties = Vec::new();
    let mut can_create = vec![quote!(true)];
    if let Some((base_ident, base_ty)) = &model.base {
        empties.push(
            quote! { #base_ident: <#base_ty as #krate::__private::Reflected>::empty_payload()? },
        );
        can_create.push(quote! { <#base_ty as #krate::__private::Reflected>::CAN_CREATE });
    }
    for (skipped, ty) in &model.skipped {
        empties.push(quote! { #skipped: ::core::default::Default::default() });
        // Reflected fields are `Send + Sync` through `FieldValue`; skipped ones are checked
        // here, so the error points at the field rather than at the derive.
        field_checks.push(quote_spanned! {ty.span()=>
            const _: fn() = || {
                fn __shared_between_threads<T: ?::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync>() {}
                __shared_between_threads::<#ty>();
            };
        });
    }
    for (i, field) in model.fields.iter().enumerate() {
        let fident = &field.ident;
        let ty = &field.ty;
        let name = &field.name;
        let fdoc = &field.doc;
        let flags = field.flags;
        let fv = quote_spanned! {ty.span()=> <#ty as #krate::__private::FieldValue> };
        field_checks.push(quote_spanned! {ty.span()=>
            const _: i32 = #fv::STATIC_TYPE_INDEX;
        });
        if model.external {
            field_checks.push(quote_spanned! {ty.span()=>
                const _: () = #krate::__private::assert_foreign_field::<#ty>();
            });
        }
        if let Some(rw) = field.rw {
            field_checks.push(quote_spanned! {rw=>
                const _: () = #krate::__private::assert_writable::<#ty>();
            });
        }
        empties.push(quote! { #fident: #fv::empty()? });
        can_create.push(quote! { #fv::HAS_EMPTY });
        let offset = quote! {
            #krate::__private::header_offset::<#ident>(::core::mem::offset_of!(#ident, #fident))
        };
        let default = match &field.default {
            None => quote!(::core::option::Option::None),
            Some(value) => {
                let fn_name = quote::format_ident!("__default_{}", i);
                let body = match value {
                    DefaultValue::Expr(expr) => quote_spanned! {expr.span()=>
                        #krate::__private::default_value::<#ty>(#expr)
                    },
                    DefaultValue::Factory(path) => quote_spanned! {path.span()=>
                        #krate::__private::default_factory::<#ty>(#path)
                    },
                };
                defaults.push(quote! { fn #fn_name() -> #krate::Any { #body } });
                quote!(::core::option::Option::Some(#fn_name))
            }
        };
        let metadata = field.metadata.iter().map(|(k, lit)| {
            let value = match lit {
                syn::Lit::Int(v) => quote!(#krate::__private::MetadataValue::Int(#v)),
                syn::Lit::Bool(v) => quote!(#krate::__private::MetadataValue::Bool(#v)),
                other => quote!(#krate::__private::MetadataValue::Str(#other)),
            };
            quote!((#k, #value))
        });
        entries.push(quote! {
            #krate::__private::FieldEntry {
                name: #name,
                doc: #fdoc,
                flags: #flags,
                offset: #offset,
                size: ::core::mem::size_of::<#ty>(),
                alignment: ::core::mem::align_of::<#ty>(),
                static_type_index: #fv::STATIC_TYPE_INDEX,
                getter: #krate::__private::field_getter::<#ty, { #offset }>,
                setter: #krate::__private::field_setter::<#ident, #ty, { #offset }>,
                type_schema: <#fv::Value as #krate::__private::TypeSchema>::type_schema,
                default: #default,
                metadata: &[#(#metadata),*],
            }
        });
    }
    let rust_object = (!model.external).then(|| {
        quote! {
            // SAFETY: allocated by Rust with `ObjectCell<Self>`; dropped by the Rust deleter.
            unsafe impl #krate::__private::RustObject for #ident {
                const INITIAL_PADDING: u32 = #krate::__private::SEALED;
            }
        }
    });
    let creator = if model.external {
        quote!(::core::option::Option::None)
    } else {
        quote! {
            if <#ident as #krate::__private::Reflected>::CAN_CREATE {
                ::core::option::Option::Some(#krate::__private::create_object::<#ident>)
            } else {
                ::core::option::Option::None
            }
        }
    };
    let shallow_copy = if model.external {
        quote!(::core::option::Option::None)
    } else {
        quote! {{
            #[allow(unused_imports)]
            use #krate::__private::{ShallowCopyByClone as _, ShallowCopyUnsupported as _};
            (&&#krate::__private::ShallowCopyProbe::<#ident>::new()).shallow_copy()
        }}
    };
    let payload_offset_check = quote_spanned! {ident.span()=>
        const _: () = ::core::assert!(
            #krate::__private::ObjectCell::<#ident>::PAYLOAD_OFFSET == 24,
            "a TVM-FFI object payload must start right after the 24-byte header: fields aligned to more than 8 bytes are not supported"
        );
    };
    let field_count = entries.len();
    // One associated const per reflected name: a method of the same name (see #[ffi_methods])
    // is then a compile error at the method, instead of Python silently hiding it.
    let member_names = model
        .fields
        .iter()
        .map(|f| crate::methods::member_name_const(&f.name, f.ident.span()));
    quote! {
        const _: () = {
            static __SLOT: #krate::__private::TypeSlot = #krate::__private::TypeSlot::new();

            // SAFETY: `#[repr(C)]` with the parent payload first (checked below); reached only
            // through shared references; fields are Send + Sync (FieldValue).
            unsafe impl #krate::__private::ObjectType for #ident {
                const TYPE_KEY: &'static str = #key;
                #[inline]
                fn runtime_type() -> #krate::__private::RuntimeType {
                    __SLOT.resolve(#key)
                }
                #before_deref
            }
            // SAFETY: the parent payload is the first field, at offset 0 (checked below).
            unsafe impl #krate::__private::DerivedObject for #ident {
                type Parent = #parent_ty;
            }
            #rust_object
            // Every object's payload starts right after the 24-byte header (C++ lays subclasses
            // out that way, and a parent reference reads its payload at 24 in any subtype).
            #payload_offset_check
            #base_check
            #(#field_checks)*

            // SAFETY: the payload is built field by field from the registered fields' types.
            unsafe impl #krate::__private::Reflected for #ident {
                const IS_FINAL: bool = #is_final;
                const CAN_CREATE: bool = #(#can_create)&&*;
                fn empty_payload() -> ::core::option::Option<Self> {
                    ::core::option::Option::Some(#ident { #(#empties),* })
                }
            }

            #(#defaults)*

            #[allow(non_upper_case_globals, dead_code)]
            impl #ident {
                #(#member_names)*
                /// The registry key of this type.
                pub fn type_key() -> &'static str {
                    #key
                }
                /// The runtime type index of this type (assigned when the library loaded).
                pub fn type_index() -> i32 {
                    <Self as #krate::__private::ObjectType>::runtime_type().index
                }
            }

            static __FIELDS: [#krate::__private::FieldEntry; #field_count] = [#(#entries),*];

            fn __shallow_copy() -> ::core::option::Option<#krate::Function> {
                #shallow_copy
            }

            #[#krate::__private::linkme::distributed_slice(#krate::__private::TYPES)]
            #[linkme(crate = #krate::__private::linkme)]
            static __TYPE: #krate::__private::TypeEntry = #krate::__private::TypeEntry {
                key: #key,
                parent_key: <#parent_ty as #krate::__private::ObjectType>::TYPE_KEY,
                origin: #origin,
                doc: #doc,
                slot: &__SLOT,
                is_final: #is_final,
                total_size: #krate::__private::ObjectCell::<#ident>::TOTAL_SIZE,
                structural: #structural,
                creator: #creator,
                fields: &__FIELDS,
                shallow_copy: __shallow_copy,
            };
        };
    }
}
