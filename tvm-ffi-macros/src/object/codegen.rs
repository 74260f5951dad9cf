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
        let flag_names = field
            .flags
            .iter()
            .map(|name| syn::Ident::new(name, proc_macro2::Span::call_site()));
        let flags = quote!(0 #(| #krate::__private::field_flags::#flag_names)*);
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
