//! Code generation for `#[derive(Variant)]`: `TypeSchema` (`VariantField<..>`), `IntoAny`,
//! `FromAny` (the first alternative that matches exactly, then the first that converts, as C++
//! `Variant` casts) and `IntoArg`, inside `const _: () = {..};`.
use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::variant::VariantModel;

pub fn generate(model: &VariantModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let names: Vec<_> = model.alternatives.iter().map(|(n, _)| n).collect();
    let types: Vec<_> = model.alternatives.iter().map(|(_, t)| t).collect();
    quote! {
        const _: () = {
            impl #krate::__private::TypeSchema for #ident {
                fn type_str() -> #krate::__private::std::string::String {
                    let parts: &[#krate::__private::std::string::String] =
                        &[#(<#types as #krate::__private::TypeSchema>::type_str()),*];
                    #krate::__private::std::format!("Variant<{}>", parts.join(", "))
                }
                fn type_schema() -> #krate::__private::std::string::String {
                    let parts: &[#krate::__private::std::string::String] =
                        &[#(<#types as #krate::__private::TypeSchema>::type_schema()),*];
                    #krate::__private::std::format!(r#"{{"type":"Variant","args":[{}]}}"#, parts.join(","))
                }
            }
            impl #krate::IntoAny for #ident {
                fn into_any(self) -> #krate::Any {
                    match self {
                        #(#ident::#names(value) => #krate::IntoAny::into_any(value),)*
                    }
                }
            }
            impl<'a> #krate::FromAny<'a> for #ident {
                fn from_any(view: &'a #krate::AnyView<'a>) -> #krate::__private::core::option::Option<Self> {
                    #(
                        if let #krate::__private::core::option::Option::Some(value) =
                            <#types as #krate::FromAny<'a>>::from_any_exact(view)
                        {
                            return #krate::__private::core::option::Option::Some(#ident::#names(value));
                        }
                    )*
                    #(
                        if let #krate::__private::core::option::Option::Some(value) =
                            <#types as #krate::FromAny<'a>>::from_any(view)
                        {
                            return #krate::__private::core::option::Option::Some(#ident::#names(value));
                        }
                    )*
                    #krate::__private::core::option::Option::None
                }
            }
            // SAFETY: the `IntoArg` impl below, generated with it, views the value as the SDK does.
            unsafe impl #krate::__private::IntoArgSealed for #ident {}
            impl #krate::__private::IntoArg for #ident {
                type Holder = #krate::Any;
                fn into_holder(self) -> #krate::Result<#krate::Any> {
                    #krate::__private::core::result::Result::Ok(#krate::IntoAny::into_any(self))
                }
                fn view(holder: &#krate::Any) -> #krate::AnyView<'_> {
                    holder.view()
                }
            }
        };
    }
}
