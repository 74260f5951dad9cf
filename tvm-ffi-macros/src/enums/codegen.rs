//! Code generation for `#[derive(Enum)]`: the enum's `FfiEnum` impl, its conversions into and
//! out of values and arguments, and the registration descriptor, inside `const _: () = {..};`.
use proc_macro2::TokenStream;
use quote::quote;

use super::model::{EnumModel, Kind};

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
    let variants = model.variants.iter().map(|v| {
        let int_index = v.int_index;
        let str_index = &v.str_index;
        let attrs = crate::object::metadata_values(krate, &v.attrs);
        quote! {
            #krate::__private::EnumVariant {
                int_index: #int_index,
                str_index: #str_index,
                attrs: &[#(#attrs),*],
            }
        }
    });
    let symbol = format!("tvm_ffi_type_key.{key}");
    quote! {
        const _: () = {
            static __SLOT: #krate::__private::TypeSlot = #krate::__private::TypeSlot::new();
            static __TABLE: #krate::__private::EnumTable = #krate::__private::EnumTable::new();
            static __VARIANTS: [#krate::__private::EnumVariant; #count] = [#(#variants),*];
            #[export_name = #symbol]
            #[used]
            static __TYPE_KEY_CLAIM: u8 = 0;

            // SAFETY: `ordinal` and `from_ordinal` are inverse over the variants in
            // declaration order, which is the order registration fills the table in.
            unsafe impl #krate::__private::FfiEnum for #ident {
                const TYPE_KEY: &'static str = #key;
                const VARIANTS: &'static [#krate::__private::EnumVariant] = &__VARIANTS;
                #[inline]
                fn runtime_type() -> #krate::__private::RuntimeType {
                    __SLOT.resolve(#key)
                }
                fn table() -> &'static #krate::__private::EnumTable {
                    &__TABLE
                }
                fn ordinal(self) -> usize {
                    match self { #(#ident::#variant_idents => #ordinals,)* }
                }
                fn from_ordinal(ordinal: usize) -> ::core::option::Option<Self> {
                    match ordinal {
                        #(#ordinals => ::core::option::Option::Some(#ident::#variant_idents),)*
                        _ => ::core::option::Option::None,
                    }
                }
                fn as_static(self) -> &'static Self {
                    match self { #(#ident::#variant_idents => &#ident::#variant_idents,)* }
                }
            }

            impl #krate::__private::TypeSchema for #ident {
                fn type_str() -> ::std::string::String {
                    ::std::string::ToString::to_string(#key)
                }
            }
            impl #krate::IntoAny for #ident {
                fn into_any(self) -> #krate::Any {
                    #krate::__private::enum_into_any(self)
                }
            }
            impl<'a> #krate::FromAny<'a> for #ident {
                fn try_cast(view: &'a #krate::AnyView<'a>) -> ::core::option::Option<Self> {
                    #krate::__private::enum_try_cast(view)
                }
            }
            impl #krate::__private::IntoArgSealed for #ident {}
            impl #krate::__private::IntoArg for #ident {
                type Holder = #krate::Any;
                fn into_holder(self) -> #krate::Result<#krate::Any> {
                    ::core::result::Result::Ok(#krate::__private::enum_into_any(self))
                }
                fn view(holder: &#krate::Any) -> #krate::AnyView<'_> {
                    holder.view()
                }
            }

            #[#krate::__private::linkme::distributed_slice(#krate::__private::ENUMS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __ENUM: #krate::__private::EnumEntry = #krate::__private::EnumEntry {
                key: #key,
                doc: #doc,
                kind: #krate::__private::EnumKind::#kind,
                slot: &__SLOT,
                variants: &__VARIANTS,
                table: &__TABLE,
                creator: #krate::__private::create_enum_object::<#ident>,
                // SAFETY: the creator and table generated for this very enum.
                trusted: unsafe { #krate::__private::Trusted::new() },
            };
        };
    }
}
