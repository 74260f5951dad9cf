//! Code generation for `#[derive(Object)]`: the object-trait impls, compile-time layout and
//! field checks spanned at the user's tokens, and the registration descriptor. Everything is
//! emitted inside `const _: () = { .. };` and names the runtime only through its `__private`
//! module and public value types.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{DefaultValue, ObjectModel};

pub fn generate(model: &ObjectModel) -> TokenStream {
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
            unsafe fn before_deref(
                object: #krate::__private::core::ptr::NonNull<#krate::__private::sys::TVMFFIObject>,
            ) {
                // SAFETY: the caller passes a live instance of `Self`.
                unsafe { #krate::__private::seal::<Self>(object) }
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
        let krate = &crate::crate_path::respan(krate, base_ty.span());
        quote_spanned! {base_ty.span()=>
            const _: () = #krate::__private::core::assert!(
                #krate::__private::core::mem::offset_of!(#ident, #base_ident) == 0,
                "the `#[ffi(base)]` field must be at offset 0"
            );
            const _: fn() = || {
                fn __tvm_ffi_parent_is_an_object<P: #krate::__private::Reflected>() {}
                __tvm_ffi_parent_is_an_object::<#base_ty>();
            };
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

    let mut field_checks = Vec::new();
    let mut entries = Vec::new();
    let mut defaults = Vec::new();
    // `Reflected`'s field-by-field parts: initialise, find an unset field, drop what is set.
    let mut inits = Vec::new();
    let mut unset_checks = Vec::new();
    let mut open_drops = Vec::new();
    // The Rust-level layout, compared when another library registered the same key.
    let mut layout_parts = Vec::new();
    let mut foreign_compatible = vec![quote!(true)];
    if let Some((base_ident, base_ty)) = &model.base {
        let reflected = quote!(<#base_ty as #krate::__private::Reflected>);
        inits.push(quote! {
            #reflected::init_empty(#krate::__private::core::ptr::addr_of_mut!((*payload).#base_ident));
        });
        unset_checks.push(quote! {
            if let #krate::__private::core::option::Option::Some(field) =
                #reflected::unset_required_field(#krate::__private::core::ptr::addr_of!((*payload).#base_ident))
            {
                return #krate::__private::core::option::Option::Some(field);
            }
        });
        open_drops.push(quote! {
            #reflected::drop_open(#krate::__private::core::ptr::addr_of_mut!((*payload).#base_ident));
        });
        foreign_compatible.push(quote!(#reflected::FOREIGN_COMPATIBLE));
        layout_parts.push(quote! {
            #krate::__private::std::format!("base={};", <#base_ty as #krate::__private::ObjectType>::TYPE_KEY)
        });
    }
    if !model.skipped.is_empty() {
        // Rust-only fields cannot be described: their type's name and size say nothing of its
        // shape, which another build (another version of the crate) may have changed. So the
        // layout of a type with such fields names its build, and is shared only between copies
        // of one build (the same library loaded from two paths).
        let build = format!("build={:016x};", build_nonce(&model.key));
        layout_parts.push(quote!(#build));
    }
    for (skipped, ty) in &model.skipped {
        let name = skipped.to_string();
        inits.push(quote! {
            #krate::__private::core::ptr::addr_of_mut!((*payload).#skipped).write(#krate::__private::core::default::Default::default());
        });
        open_drops.push(quote! {
            #krate::__private::core::ptr::drop_in_place(#krate::__private::core::ptr::addr_of_mut!((*payload).#skipped));
        });
        // Rust-only memory that an instance allocated outside Rust never initialises.
        foreign_compatible.push(quote!(false));
        layout_parts.push(quote! {
            #krate::__private::std::format!(
                "skip {}@{}:{}:{};",
                #name,
                #krate::__private::core::mem::offset_of!(#ident, #skipped),
                #krate::__private::core::mem::size_of::<#ty>(),
                #krate::__private::core::any::type_name::<#ty>(),
            )
        });
        // Reflected fields are `Send + Sync` through `FieldValue`; skipped ones are checked
        // here, so the error points at the field rather than at the derive.
        let spanned_krate = crate::crate_path::respan(krate, ty.span());
        let krate = &spanned_krate;
        field_checks.push(quote_spanned! {ty.span()=>
            const _: fn() = || {
                fn __tvm_ffi_shared_between_threads<T: ?#krate::__private::core::marker::Sized + #krate::__private::core::marker::Send + #krate::__private::core::marker::Sync>() {}
                __tvm_ffi_shared_between_threads::<#ty>();
            };
        });
    }
    for (i, field) in model.fields.iter().enumerate() {
        let fident = &field.ident;
        let ty = &field.ty;
        let name = &field.name;
        let fdoc = &field.doc;
        let flag_names = field
            .flags
            .iter()
            .map(|name| syn::Ident::new(name, proc_macro2::Span::call_site()));
        let flags = quote!(0 #(| #krate::__private::field_flags::#flag_names)*);
        // The one place that requires `FieldValue` of the field's type (spanned at it): an
        // unsupported type is one error, not one per use. Every use below names the storage
        // through the slot.
        let slot = quote::format_ident!("__tvm_ffi_FieldSlot{}", i);
        field_checks.push(quote_spanned! {ty.span()=>
            #[allow(non_camel_case_types)]
            struct #slot;
            impl #krate::__private::FieldSlot for #slot {
                type Storage = #ty;
            }
        });
        let user_ty = ty;
        let info = quote!(<#slot as #krate::__private::SlotInfo>);
        // `Rw<Rw<T>>`: a read would take the same lock stripe twice and never return. And the
        // storage's static type index is checked against its size (evaluated here first, so
        // that a mismatch points at the field).
        let spanned_krate = crate::crate_path::respan(krate, ty.span());
        let spanned_slot = syn::Ident::new(&slot.to_string(), ty.span());
        field_checks.push(quote_spanned! {ty.span()=>
            const _: i32 = <#spanned_slot as #spanned_krate::__private::SlotInfo>::STATIC_TYPE_INDEX;
            const _: () = #spanned_krate::__private::core::assert!(
                !#info::NESTED_INTERIOR_MUTABILITY,
                "a field cannot be `Rw<Rw<T>>`: reading it would take the same lock twice; declare it `Rw<T>`"
            );
        });
        if model.external {
            field_checks.push(quote_spanned! {user_ty.span()=>
                const _: () = #krate::__private::assert_foreign_field::<#user_ty>();
            });
        }
        if let Some(rw) = field.rw {
            field_checks.push(quote_spanned! {rw=>
                const _: () = #krate::__private::assert_writable::<#user_ty>();
            });
        }
        inits.push(quote! {
            #krate::__private::init_empty_field::<#slot>(#krate::__private::core::ptr::addr_of_mut!((*payload).#fident));
        });
        unset_checks.push(quote! {
            if #krate::__private::is_unset_field::<#slot>(#krate::__private::core::ptr::addr_of!((*payload).#fident)) {
                return #krate::__private::core::option::Option::Some(#name);
            }
        });
        open_drops.push(quote! {
            #krate::__private::drop_open_field::<#slot>(#krate::__private::core::ptr::addr_of_mut!((*payload).#fident));
        });
        layout_parts.push(quote! {
            #krate::__private::std::format!(
                "{}@{}:{}:{}:{};",
                #name,
                #krate::__private::core::mem::offset_of!(#ident, #fident),
                #krate::__private::core::mem::size_of::<#user_ty>(),
                if #info::INTERIOR_MUTABLE { "rw" } else { "ro" },
                #info::type_schema(),
            )
        });
        let offset = quote! {
            #krate::__private::header_offset::<#ident>(#krate::__private::core::mem::offset_of!(#ident, #fident))
        };
        let default = match &field.default {
            None => quote!(#krate::__private::core::option::Option::None),
            Some(value) => {
                let fn_name = quote::format_ident!("__tvm_ffi_default_{}", i);
                let body = match value {
                    DefaultValue::Expr(expr) => quote_spanned! {expr.span()=>
                        #krate::__private::default_value::<#user_ty>(#expr)
                    },
                    DefaultValue::Factory(path) => quote_spanned! {path.span()=>
                        #krate::__private::default_factory::<#user_ty>(#path)
                    },
                };
                defaults.push(quote! { fn #fn_name() -> #krate::Any { #body } });
                quote!(#krate::__private::core::option::Option::Some(#fn_name))
            }
        };
        let metadata = metadata_values(krate, &field.metadata);
        entries.push(quote! {
            #krate::__private::FieldEntry {
                name: #name,
                doc: #fdoc,
                flags: #flags,
                offset: #offset,
                size: #krate::__private::core::mem::size_of::<#user_ty>(),
                alignment: #krate::__private::core::mem::align_of::<#user_ty>(),
                static_type_index: #info::STATIC_TYPE_INDEX,
                getter: #krate::__private::field_getter::<#slot, { #offset }>,
                setter: #krate::__private::field_setter::<#ident, #slot, { #offset }>,
                type_schema: #info::type_schema,
                default: #default,
                metadata: &[#(#metadata),*],
            }
        });
    }
    let rust_object = (!model.external).then(|| {
        quote! {
            // SAFETY: allocated by Rust with `ObjectCell<Self>`; dropped by the Rust deleter,
            // which skips the unset fields of an abandoned, half-constructed object.
            unsafe impl #krate::__private::RustObject for #ident {
                const INITIAL_PADDING: u32 = #krate::__private::SEALED;
                #[inline(always)]
                unsafe fn drop_payload(
                    object: #krate::__private::core::ptr::NonNull<#krate::__private::sys::TVMFFIObject>,
                    payload: *mut Self,
                ) {
                    // SAFETY: the caller's contract (the deleter protocol).
                    unsafe { #krate::__private::drop_payload::<Self>(object, payload) }
                }
            }
        }
    });
    // A Rust-defined type always has a creator (C++'s `UnsafeInit` creator for types with
    // required references): its required references start unset.
    let (creator, new_object) = if model.external || !model.creator {
        (
            quote!(#krate::__private::core::option::Option::None),
            quote!(#krate::__private::core::option::Option::None),
        )
    } else {
        (
            quote!(#krate::__private::core::option::Option::Some(#krate::__private::create_object::<#ident>)),
            quote!(#krate::__private::core::option::Option::Some(#krate::__private::new_function::<#ident>)),
        )
    };
    let shallow_copy = if model.external {
        quote!(#krate::__private::core::option::Option::None)
    } else {
        quote! {{
            #[allow(unused_imports)]
            use #krate::__private::{ShallowCopyByClone as _, ShallowCopyUnsupported as _};
            (&&#krate::__private::ShallowCopyProbe::<#ident>::new()).shallow_copy()
        }}
    };
    let init_empty = if model.external {
        // A declaration: no `Default` of the defining library to take values from.
        quote! { __tvm_ffi_init_fields(payload) }
    } else {
        quote! {{
            #[allow(unused_imports)]
            use #krate::__private::{InitByDefault as _, InitByFields as _};
            (&&#krate::__private::InitProbe::<Self>::new()).init(payload, __tvm_ffi_init_fields)
        }}
    };
    let spanned_krate = crate::crate_path::respan(krate, ident.span());
    let payload_offset_check = quote_spanned! {ident.span()=>
        const _: () = #spanned_krate::__private::core::assert!(
            #spanned_krate::__private::ObjectCell::<#ident>::PAYLOAD_OFFSET == 24,
            "a TVM-FFI object payload must start right after the 24-byte header: fields aligned to more than 8 bytes are not supported"
        );
    };
    // One symbol per type key: two types with the same key in one crate are then a compile
    // error naming the key ("symbol `tvm_ffi_type_key.<key>` is already defined"), instead of
    // two layouts fighting over one key at load. Spanned at the derive (call site) so that
    // `#![forbid(unsafe_code)]` crates compile.
    let key_claim = (!model.external).then(|| {
        let symbol = format!("tvm_ffi_type_key.{key}");
        quote! {
            #[export_name = #symbol]
            #[used]
            static __tvm_ffi_TYPE_KEY_CLAIM: u8 = 0;
        }
    });
    let seal_check = if model.external {
        quote!(#krate::__private::core::option::Option::None)
    } else {
        quote!(#krate::__private::core::option::Option::Some(#krate::__private::seal_check::<#ident>))
    };
    let field_count = entries.len();
    let type_attrs = model.type_attrs.iter().map(|(name, lit)| {
        let value = metadata_value(krate, lit);
        quote!((#name, #value))
    });
    let auto_init = model.auto_init;
    let convert = if model.convert {
        quote!(#krate::__private::core::option::Option::Some(#krate::__private::convert_function::<#ident>))
    } else {
        quote!(#krate::__private::core::option::Option::None)
    };
    // One associated const per reflected name: a method of the same name (see #[ffi_methods])
    // is then a compile error at the method, instead of Python silently hiding it.
    let member_names = model
        .fields
        .iter()
        .map(|f| crate::methods::member_name_const(&f.name, f.ident.span()));
    quote! {
        const _: () = {
            static __tvm_ffi_SLOT: #krate::__private::TypeSlot = #krate::__private::TypeSlot::new();
            #key_claim

            // SAFETY: `#[repr(C)]` with the parent payload first (checked below); reached only
            // through shared references; fields are Send + Sync (FieldValue).
            unsafe impl #krate::__private::ObjectType for #ident {
                const TYPE_KEY: &'static str = #key;
                #[inline]
                fn runtime_type() -> #krate::__private::RuntimeType {
                    __tvm_ffi_SLOT.resolve(#key)
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
            #external_check
            #(#field_checks)*

            unsafe fn __tvm_ffi_init_fields(payload: *mut #ident) {
                // SAFETY: `payload` is uninitialised memory for the type; every field is
                // written once, valid or (a required reference) unset.
                unsafe { #(#inits)* }
            }

            // SAFETY: field by field from the registered fields' types; the payload is
            // foreign-compatible only without Rust-only (`skip`) fields, in it or its parents.
            unsafe impl #krate::__private::Reflected for #ident {
                const IS_FINAL: bool = #is_final;
                const FOREIGN_COMPATIBLE: bool = #(#foreign_compatible)&&*;
                unsafe fn init_empty(payload: *mut Self) {
                    // SAFETY: the caller's contract.
                    unsafe { #init_empty }
                }
                unsafe fn unset_required_field(
                    payload: *const Self,
                ) -> #krate::__private::core::option::Option<&'static str> {
                    // SAFETY: the caller's contract: each field valid or unset.
                    unsafe { #(#unset_checks)* }
                    #krate::__private::core::option::Option::None
                }
                unsafe fn drop_open(payload: *mut Self) {
                    // SAFETY: the caller's contract: each field valid or unset, unreachable.
                    unsafe { #(#open_drops)* }
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

            static __tvm_ffi_FIELDS: [#krate::__private::FieldEntry; #field_count] = [#(#entries),*];

            fn __tvm_ffi_shallow_copy() -> #krate::__private::core::option::Option<#krate::Function> {
                #shallow_copy
            }

            fn __tvm_ffi_layout() -> #krate::__private::std::string::String {
                let mut layout = #krate::__private::std::format!(
                    "size={};",
                    #krate::__private::ObjectCell::<#ident>::TOTAL_SIZE
                );
                #(layout.push_str(&#layout_parts);)*
                layout
            }

            #[#krate::__private::linkme::distributed_slice(#krate::__private::TYPES)]
            #[linkme(crate = #krate::__private::linkme)]
            static __tvm_ffi_TYPE: #krate::__private::TypeEntry = #krate::__private::TypeEntry {
                key: #key,
                parent_key: <#parent_ty as #krate::__private::ObjectType>::TYPE_KEY,
                origin: #origin,
                doc: #doc,
                slot: &__tvm_ffi_SLOT,
                is_final: #is_final,
                total_size: #krate::__private::ObjectCell::<#ident>::TOTAL_SIZE,
                structural: #structural,
                creator: #creator,
                new_object: #new_object,
                auto_init: #auto_init,
                convert: #convert,
                fields: &__tvm_ffi_FIELDS,
                shallow_copy: __tvm_ffi_shallow_copy,
                layout: __tvm_ffi_layout,
                type_attrs: &[#(#type_attrs),*],
                seal_check: #seal_check,
                // SAFETY: generated from the struct definition itself, with every layout
                // fact checked at compile time above.
                trusted: unsafe { #krate::__private::Trusted::new() },
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

/// A metadata literal as the runtime's `MetadataValue`.
fn metadata_value(krate: &TokenStream, lit: &syn::Lit) -> TokenStream {
    match lit {
        syn::Lit::Int(v) => quote!(#krate::__private::MetadataValue::Int(#v)),
        syn::Lit::Bool(v) => quote!(#krate::__private::MetadataValue::Bool(#v)),
        other => quote!(#krate::__private::MetadataValue::Str(#other)),
    }
}

/// `key = literal` pairs as `(key, MetadataValue)` tokens.
pub fn metadata_values(krate: &TokenStream, entries: &[(String, syn::Lit)]) -> Vec<TokenStream> {
    entries
        .iter()
        .map(|(k, lit)| {
            let value = metadata_value(krate, lit);
            quote!((#k, #value))
        })
        .collect()
}
