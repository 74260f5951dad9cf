//! Code generation for `#[derive(Object)]`: the object-trait impls, compile-time layout and
//! field checks spanned at the user's tokens, and the registration descriptor. Everything is
//! emitted inside `const _: () = { .. };` and names the runtime only through its `__private`
//! module and public value types.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::object::ObjectModel;
use crate::attr::object::DefaultValue;
use crate::codegen::shared::{member_impl, metadata_value, metadata_values};

pub fn generate(model: &ObjectModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let key = &model.key;
    let doc = &model.doc;
    let parent_ty: syn::Type = match &model.base {
        Some((_, ty)) => ty.clone(),
        None => syn::parse_quote!(#krate::__private::AnyObject),
    };
    let is_final = model.is_final;
    // Checked to fit (an out-of-range count is a compile error before codegen's output counts).
    let child_slots = model
        .child_slots
        .as_ref()
        .and_then(|count| count.base10_parse::<u32>().ok())
        .unwrap_or(0);
    // Objects of Rust-defined types keep a construction state; Rust seals it before it makes an
    // `ObjectRef<Self>`, so no setter ever writes under a live reference.
    let before_deref = (!model.external).then(|| {
        quote! {
            #[inline(always)]
            unsafe fn seal_for_use(object: #krate::__private::core::ptr::NonNull<#krate::__private::sys::TVMFFIObject>) -> #krate::__private::core::result::Result<(), #krate::__private::std::string::String> {
                // SAFETY: the caller passes a live instance of `Self`.
                unsafe { #krate::__private::seal::<Self>(object) }
            }
        }
    });
    let origin = if model.opaque.is_some() {
        quote!(#krate::__private::TypeOrigin::ExternalOpaque)
    } else if model.external {
        quote!(#krate::__private::TypeOrigin::External)
    } else {
        quote!(#krate::__private::TypeOrigin::Defined)
    };
    let structural = match &model.structural {
        Some(kind) => quote!(#krate::__private::structural::#kind),
        None => quote!(#krate::__private::structural::UNSUPPORTED),
    };

    let base_check = model.base.as_ref().map(|(_, base_ty)| {
        let krate = &crate::crate_path::respan(krate, base_ty.span());
        quote_spanned! {base_ty.span()=>
            const _: () = #krate::__private::core::assert!(
                !<#base_ty as #krate::__private::Reflected>::IS_FINAL,
                "the `#[ffi(base)]` type is `final` and cannot have subtypes"
            );
        }
    });

    // An `external` declaration is a trust statement: the user writes `unsafe impl
    // ExternalType` for what the load-time checks cannot see.
    let external_check = model.external.then(|| {
        quote_spanned! {ident.span()=>
            const _: () = #krate::__private::assert_external_type::<#ident>();
        }
    });

    let p = quote!(#krate::__private);
    let offset_of = |field: &syn::Ident| quote!(#p::core::mem::offset_of!(#ident, #field));
    let mut field_checks = Vec::new();
    // The parent's payload and the Rust-only fields (`Reflected::PARTS`).
    let mut parts = Vec::new();
    if let Some((base_ident, base_ty)) = &model.base {
        let name = base_ident.to_string();
        let offset = offset_of(base_ident);
        // Spanned at the parent type: a parent that is no object type, or not at offset 0,
        // is reported there.
        let at_ty = crate::crate_path::respan(krate, base_ty.span());
        parts.push(quote_spanned! {base_ty.span()=>
            #at_ty::__private::base_part::<#base_ty, { #offset }>(#name)
        });
        let krate = &crate::crate_path::respan(krate, base_ty.span());
        field_checks.push(quote_spanned! {base_ty.span()=>
            const _: () = #krate::__private::core::assert!(#offset == 0, "the `#[ffi(base)]` field must be at offset 0");
        });
    }
    // Rust-only fields cannot be described: their type's name and size say nothing of its
    // shape, which another build (another version of the crate) may have changed. So the
    // layout of a type with such fields names its build, and is shared only between copies of
    // one build (the same library loaded from two paths).
    let build = format!("{:016x}", build_nonce(&model.key));
    for (skipped, ty) in &model.skipped {
        let name = skipped.to_string();
        let offset = offset_of(skipped);
        // Spanned at the field's type: a type that is not `Default + Send + Sync` is reported
        // there.
        let at_ty = crate::crate_path::respan(krate, ty.span());
        parts.push(quote_spanned! {ty.span()=> #at_ty::__private::skipped_part::<#ty, { #offset }>(#name, #build) });
    }
    let mut entries = Vec::new();
    for field in &model.fields {
        let fident = &field.ident;
        let ty = &field.ty;
        let name = &field.name;
        let fdoc = &field.doc;
        let flag_names = field
            .flags
            .iter()
            .map(|name| syn::Ident::new(name, proc_macro2::Span::call_site()));
        let flags = quote!(0 #(| #p::field_flags::#flag_names)*);
        if model.external {
            field_checks.push(quote_spanned! {ty.span()=>
                const _: () = #krate::__private::assert_foreign_field::<#ty>();
            });
        }
        if model.frozen.is_some() {
            // Spanned at the field's type: an `Rw<T>` (which Rust code could write) is reported
            // there.
            let at_ty = crate::crate_path::respan(krate, ty.span());
            field_checks.push(quote_spanned! {ty.span()=>
                const _: () = #at_ty::__private::assert_frozen_field::<#ty>();
            });
        }
        if let Some(rw) = field.rw {
            field_checks.push(quote_spanned! {rw=>
                const _: () = #krate::__private::assert_writable::<#ty>();
            });
        }
        let default = match &field.default {
            None => quote!(None),
            // The user's expression (or path) is evaluated before the `unsafe` block, which is
            // spanned at the derive (call site) so that `#![forbid(unsafe_code)]` accepts it.
            // SAFETY (of the generated blocks): the default goes into this field's entry, whose
            // storage is `#ty`.
            // (The call is spanned at the user's tokens: a value that does not fit the field is
            // reported there.)
            Some(DefaultValue::Expr(expr)) => {
                let value = quote_spanned! {expr.span()=> let __tvm_ffi_value = #expr; };
                let convert =
                    quote_spanned! {expr.span()=> #p::default_value::<#ty>(__tvm_ffi_value) };
                quote! { Some(|| { #value unsafe { #convert } }) }
            }
            Some(DefaultValue::Factory(path)) => {
                let value = quote_spanned! {path.span()=> let __tvm_ffi_value = #path; };
                let convert =
                    quote_spanned! {path.span()=> #p::default_factory::<#ty>(__tvm_ffi_value) };
                quote! { Some(|| { #value unsafe { #convert } }) }
            }
        };
        let metadata = metadata_values(krate, &field.metadata);
        // The header offset (the payload starts right after the 24-byte header, checked
        // below). Spanned at the field's type: an unsupported type (no `FieldValue`) and a
        // refused storage (`Rw<Rw<T>>`) are reported there.
        let offset = offset_of(fident);
        // The call is spanned at the field's type from its first token to its last, so that
        // an evaluation error (a refused storage) points there.
        let at_ty = crate::crate_path::respan(krate, ty.span());
        entries.push(quote_spanned! {ty.span()=>
            #at_ty::__private::field::<#ident, #ty, { 24 + #offset }>(#name, #fdoc, #flags, #default, &[#(#metadata),*])
        });
    }
    let rust_object = (!model.external).then(|| {
        quote! {
            // SAFETY: allocated by Rust with `ObjectCell<Self>`; dropped by the Rust deleter,
            // which skips the unset fields of an abandoned, half-constructed object.
            unsafe impl #p::RustObject for #ident {
                const INITIAL_PADDING: u32 = #p::SEALED;
                unsafe fn drop_payload(object: #p::core::ptr::NonNull<#p::sys::TVMFFIObject>, payload: *mut Self) {
                    // SAFETY: the caller's contract (the deleter protocol).
                    unsafe { #p::drop_payload::<Self>(object, payload) }
                }
            }
        }
    });
    // A Rust-defined type always has a creator (C++'s `UnsafeInit` creator for types with
    // required references): its required references start unset.
    let (creator, new_object) = if model.external || !model.creator {
        (quote!(None), quote!(None))
    } else {
        (
            quote!(Some(#p::create_object::<#ident>)),
            quote!(Some(#p::new_function::<#ident>)),
        )
    };
    let shallow_copy = if model.external {
        quote!(|| None)
    } else {
        quote!(|| {
            use #p::{ShallowCopyByClone as _, ShallowCopyUnsupported as _};
            (&&#p::ShallowCopyProbe::<#ident>::new()).shallow_copy()
        })
    };
    // A declaration has no `Default` of the defining library to take values from: the
    // trait's table-driven `init_empty` serves it.
    let init_empty = (!model.external).then(|| {
        quote! {
            unsafe fn init_empty(payload: *mut Self) {
                use #p::{InitByDefault as _, InitByFields as _};
                // SAFETY: the caller's contract.
                unsafe { (&&#p::InitProbe::<Self>::new()).init(payload) }
            }
        }
    });
    let spanned_krate = crate::crate_path::respan(krate, ident.span());
    let payload_offset_check = quote_spanned! {ident.span()=>
        const _: () = #spanned_krate::__private::core::assert!(
            #spanned_krate::__private::ObjectCell::<#ident>::PAYLOAD_OFFSET == 24,
            "a TVM-FFI object payload must start right after the 24-byte header: fields aligned to more than 8 bytes are not supported"
        );
    };
    let key_claim =
        (!model.external).then(|| crate::codegen::shared::key_claim(&model.key, model.key_span));
    let seal_check = if model.external {
        quote!(None)
    } else {
        quote!(Some(#p::seal_check::<#ident>))
    };
    let field_count = entries.len();
    let type_attrs = model.type_attrs.iter().map(|(name, lit)| {
        let value = metadata_value(krate, lit);
        quote!((#name, #value))
    });
    // Each hook's helper names the type at the option's token: a payload without the trait
    // the hook needs is reported there.
    let hooks = model.hooks.iter().map(|(hook, span)| {
        let attr = hook.attr();
        let helper = syn::Ident::new(hook.helper(), *span);
        let at = crate::crate_path::respan(krate, *span);
        let mut ty = ident.clone();
        ty.set_span(*span);
        quote_spanned! {*span=> (#attr, #at::__private::#helper::<#ty> as unsafe fn() -> #at::Function) }
    });
    let auto_init = model.auto_init;
    let convert = if model.convert {
        quote!(Some(#p::convert_function::<#ident>))
    } else {
        quote!(None)
    };
    // One `Member` impl per reflected name: a method of the same name (see #[ffi_methods]) is
    // then a compile error at the method, instead of Python silently hiding it.
    // A trait hook claims its attribute's name too: the same hook on a method
    // (`#[ffi(eq)]`) is then a compile error rather than a load error.
    let members = model
        .fields
        .iter()
        .map(|f| member_impl(krate, &quote!(#ident), &f.name, f.ident.span()))
        .chain(
            model
                .hooks
                .iter()
                .map(|(hook, span)| member_impl(krate, &quote!(#ident), hook.attr(), *span)),
        );
    quote! {
        const _: () = {
            use #p::core::option::Option::{None, Some};
            static __tvm_ffi_SLOT: #p::TypeSlot = #p::TypeSlot::new();
            #key_claim

            // SAFETY: `#[repr(C)]` with the parent payload first (checked below); reached only
            // through shared references; fields are Send + Sync (FieldValue).
            unsafe impl #p::ObjectType for #ident {
                const TYPE_KEY: &'static str = #key;
                #[inline]
                fn runtime_type() -> #p::RuntimeType {
                    __tvm_ffi_SLOT.resolve(#key)
                }
                #before_deref
            }
            // SAFETY: the parent payload is the first field, at offset 0 (checked below).
            unsafe impl #p::DerivedObject for #ident {
                type Parent = #parent_ty;
            }
            #rust_object
            // Every object's payload starts right after the 24-byte header (C++ lays subclasses
            // out that way, and a parent reference reads its payload at 24 in any subtype).
            #payload_offset_check
            #base_check
            #external_check
            #(#field_checks)*
            #(#members)*

            // SAFETY: the tables list every field and part of the struct at its offset, with
            // its type; the payload offset is checked above.
            unsafe impl #p::Reflected for #ident {
                const IS_FINAL: bool = #is_final;
                const FIELDS: &'static [#p::FieldEntry] = &__tvm_ffi_FIELDS;
                const PARTS: &'static [#p::PayloadPart] = &[#(#parts),*];
                #init_empty
            }

            static __tvm_ffi_FIELDS: [#p::FieldEntry; #field_count] = [#(#entries),*];

            #[#p::linkme::distributed_slice(#p::TYPES)]
            #[linkme(crate = #p::linkme)]
            static __tvm_ffi_TYPE: #p::TypeEntry = #p::TypeEntry {
                key: #key,
                parent_key: <#parent_ty as #p::ObjectType>::TYPE_KEY,
                origin: #origin,
                doc: #doc,
                slot: &__tvm_ffi_SLOT,
                is_final: #is_final,
                child_slots: #child_slots,
                total_size: #p::ObjectCell::<#ident>::TOTAL_SIZE,
                structural: #structural,
                creator: #creator,
                new_object: #new_object,
                auto_init: #auto_init,
                convert: #convert,
                fields: &__tvm_ffi_FIELDS,
                parts: <#ident as #p::Reflected>::PARTS,
                shallow_copy: #shallow_copy,
                type_attrs: &[#(#type_attrs),*],
                hooks: &[#(#hooks),*],
                seal_check: #seal_check,
                // SAFETY: generated from the struct definition itself, with every layout
                // fact checked at compile time above.
                trusted: unsafe { #p::Trusted::new() },
            };
        };
    }
}

/// A number that differs between builds (and, with overwhelming probability, between any two
/// expansions): the process's random hasher keys, the time and the process id, hashed with the
/// type key.
fn build_nonce(key: &str) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    key.hash(&mut hasher);
    std::process::id().hash(&mut hasher);
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        now.as_nanos().hash(&mut hasher);
    }
    hasher.finish()
}

/// After a failed `#[derive(Object)]` (its errors are emitted with this): an `ObjectType` impl,
/// so that the rest of the crate type-checks and the user sees the derive's errors rather than
/// one "not a TVM-FFI object type" per use. It never runs: the crate does not compile.
pub fn error_fallback(item: &syn::DeriveInput) -> TokenStream {
    if !item.generics.params.is_empty() {
        return TokenStream::new();
    }
    // `crate = ".."`, if the attribute gives one that parses; errors are already reported.
    let mut krate = crate::crate_path::default_crate();
    for attr in item.attrs.iter().filter(|a| a.path().is_ident("ffi_type")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                if let Ok(path) = crate::attr::crate_path(&meta) {
                    krate = path;
                }
            } else {
                let _ = crate::attr::skip_value(&meta);
            }
            Ok(())
        });
    }
    let ident = &item.ident;
    quote! {
        // SAFETY: never used: this crate fails to compile (the derive's errors).
        unsafe impl #krate::ObjectType for #ident {
            const TYPE_KEY: &'static str = "";
            fn runtime_type() -> #krate::__private::RuntimeType {
                #krate::__private::core::unreachable!()
            }
        }
    }
}
