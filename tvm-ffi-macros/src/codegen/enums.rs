//! Code generation for `#[derive(Enum)]`: the enum's `EnumType` impl, its conversions into and
//! out of values and arguments, and the registration descriptor, inside `const _: () = {..};`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::enums::{EnumModel, Kind};

pub fn generate(model: &EnumModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let key = &model.key;
    let doc = &model.doc;
    let kind = match model.kind {
        Kind::Plain => quote!(Plain),
        Kind::Int => quote!(Int),
        Kind::Str => quote!(Str),
    };
    let count = model.variants.len();
    let variant_idents: Vec<_> = model.variants.iter().map(|v| &v.ident).collect();
    let ordinals: Vec<_> = (0..count).collect();
    // Each integer index: the macro's, or the Rust discriminant as the compiler computes it.
    let int_values: Vec<TokenStream> = model
        .variants
        .iter()
        .map(|v| match v.int_index {
            Some(index) => quote!(#index),
            None => {
                let variant = &v.ident;
                quote!(#ident::#variant as i64)
            }
        })
        .collect();
    // Every integer index is unique, including the computed ones (`{A = 2, B = 0, C}` is
    // fine, C being 1; `#[ffi(value = 1)] A, B = 1` is not): checked by the compiler, at the
    // variant.
    let unique_checks = (model.kind == Kind::Int).then(|| {
        let checks = model.variants.iter().enumerate().map(|(i, v)| {
            let message = format!(
                "the enum value of `{}` is another variant's too: each variant needs its own (set it with a discriminant or `#[ffi(value = ..)]`)",
                v.ident
            );
            let krate = crate::crate_path::respan(krate, v.span);
            quote_spanned! {v.span=>
                const _: () = #krate::__private::core::assert!(
                    #krate::__private::enum_value_is_unique(&__tvm_ffi_INT_VALUES, #i),
                    #message
                );
            }
        });
        quote! {
            const __tvm_ffi_INT_VALUES: [i64; #count] = [#(#int_values),*];
            #(#checks)*
        }
    });
    let variants = model
        .variants
        .iter()
        .zip(&int_values)
        .map(|(v, int_index)| {
            let str_index = &v.str_index;
            let attrs = crate::codegen::shared::metadata_values(krate, &v.attrs);
            quote! {
                #krate::__private::EnumVariant {
                    int_index: #int_index,
                    str_index: #str_index,
                    attrs: &[#(#attrs),*],
                }
            }
        });
    // An `int`/`str` enum converts from its values too, as Python's enum fields do.
    let from_payload = match model.kind {
        Kind::Plain => None,
        Kind::Int => Some(quote!(enum_from_int_payload)),
        Kind::Str => Some(quote!(enum_from_str_payload)),
    }
    .map(|f| {
        quote! {
            fn from_payload(view: &#krate::AnyView<'_>) -> #krate::__private::core::option::Option<Self> {
                #krate::__private::#f(view)
            }
        }
    });
    // An `int`/`str` enum is a parameter's default by its value, given as the value or as a
    // variant (`#[ffi(default = DType::Int64)]`).
    let defaults = {
        let p = quote!(#krate::__private);
        let (check, values, default) = match model.kind {
            // No values: a variant default is refused when the parameter's metadata is
            // evaluated, at the default.
            Kind::Plain => {
                let message = format!(
                    "`{ident}` is a plain enum, without values for a default: mark it `#[ffi_type(.., int)]` or `#[ffi_type(.., str)]`, or take an `Option<{ident}>` defaulting to `None`"
                );
                (
                    None,
                    quote!(),
                    model
                        .variants
                        .iter()
                        .map(|_| quote!(#p::core::panic!(#message)))
                        .collect::<Vec<_>>(),
                )
            }
            Kind::Str => {
                let strs = model.variants.iter().map(|v| &v.str_index);
                (
                    Some(quote!(StrDefault)),
                    quote! { const VALUES: #p::core::option::Option<&'static [&'static str]> = #p::core::option::Option::Some(&[#(#strs),*]); },
                    model
                        .variants
                        .iter()
                        .map(|v| {
                            let s = &v.str_index;
                            quote!(#p::DefaultValue::Str(#s))
                        })
                        .collect::<Vec<_>>(),
                )
            }
            Kind::Int => (
                Some(quote!(IntDefault)),
                quote! {
                    const MIN: i128 = i64::MIN as i128;
                    const MAX: i128 = i64::MAX as i128;
                    const VALUES: #p::core::option::Option<&'static [i64]> = #p::core::option::Option::Some(&__tvm_ffi_INT_VALUES);
                },
                int_values
                    .iter()
                    .map(|v| quote!(#p::DefaultValue::Int(#v)))
                    .collect(),
            ),
        };
        let check =
            check.map(|check| quote!(impl #p::default_check::#check for #ident { #values }));
        quote! {
            #check
            impl #p::default_check::VariantDefault for #ident { type Enum = #ident; }
            impl #ident {
                /// The registered default of a parameter given this variant.
                #[doc(hidden)]
                pub const fn __tvm_ffi_default(self) -> #p::DefaultValue {
                    match self { #(#ident::#variant_idents => #default,)* }
                }
            }
        }
    };
    let key_claim = crate::codegen::shared::key_claim(key, model.key_span);
    quote! {
        const _: () = {
            static __tvm_ffi_SLOT: #krate::__private::TypeSlot = #krate::__private::TypeSlot::new();
            static __tvm_ffi_TABLE: #krate::__private::EnumTable = #krate::__private::EnumTable::new();
            static __tvm_ffi_VARIANTS: [#krate::__private::EnumVariant; #count] = [#(#variants),*];
            #unique_checks
            #defaults
            #key_claim

            // SAFETY: `ordinal` and `from_ordinal` are inverse over the variants in
            // declaration order, which is the order registration fills the table in.
            unsafe impl #krate::__private::EnumType for #ident {
                const TYPE_KEY: &'static str = #key;
                const VARIANTS: &'static [#krate::__private::EnumVariant] = &__tvm_ffi_VARIANTS;
                #[inline]
                fn runtime_type() -> #krate::__private::RuntimeType {
                    __tvm_ffi_SLOT.resolve(#key)
                }
                fn table() -> &'static #krate::__private::EnumTable {
                    &__tvm_ffi_TABLE
                }
                fn ordinal(self) -> usize {
                    match self { #(#ident::#variant_idents => #ordinals,)* }
                }
                fn from_ordinal(ordinal: usize) -> #krate::__private::core::option::Option<Self> {
                    match ordinal {
                        #(#ordinals => #krate::__private::core::option::Option::Some(#ident::#variant_idents),)*
                        _ => #krate::__private::core::option::Option::None,
                    }
                }
                fn as_static(self) -> &'static Self {
                    match self { #(#ident::#variant_idents => &#ident::#variant_idents,)* }
                }
                #from_payload
            }

            impl #krate::__private::TypeSchema for #ident {
                fn type_str() -> #krate::__private::std::string::String {
                    #krate::__private::std::string::ToString::to_string(#key)
                }
            }
            impl #krate::IntoAny for #ident {
                fn into_any(self) -> #krate::Any {
                    // SAFETY: `Self`'s `EnumType` table is the one generated above for it.
                    unsafe { #krate::__private::enum_into_any(self) }
                }
            }
            impl<'a> #krate::FromAny<'a> for #ident {
                fn from_any(view: &'a #krate::AnyView<'a>) -> #krate::__private::core::option::Option<Self> {
                    // SAFETY: as for `into_any`.
                    unsafe { #krate::__private::enum_try_cast(view) }
                }
            }
            // SAFETY: the `IntoArg` impl below, generated with it, views the value as the SDK does.
            unsafe impl #krate::__private::IntoArgSealed for #ident {}
            impl #krate::__private::IntoArg for #ident {
                type Holder = #krate::Any;
                fn into_holder(self) -> #krate::Result<#krate::Any> {
                    // SAFETY: as for `into_any`.
                    #krate::__private::core::result::Result::Ok(unsafe { #krate::__private::enum_into_any(self) })
                }
                fn view(holder: &#krate::Any) -> #krate::AnyView<'_> {
                    holder.view()
                }
            }

            #[#krate::__private::linkme::distributed_slice(#krate::__private::ENUMS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __tvm_ffi_ENUM: #krate::__private::EnumEntry = #krate::__private::EnumEntry {
                key: #key,
                doc: #doc,
                kind: #krate::__private::EnumKind::#kind,
                slot: &__tvm_ffi_SLOT,
                variants: &__tvm_ffi_VARIANTS,
                table: &__tvm_ffi_TABLE,
                creator: #krate::__private::create_enum_object::<#ident>,
                // SAFETY: the creator and table generated for this very enum.
                trusted: unsafe { #krate::__private::Trusted::new() },
            };
        };
    }
}
