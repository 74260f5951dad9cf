//! Code generation for `#[ffi_methods]`: per method, the shared callable (`crate::callable`),
//! a member constant that makes a repeated name a compile error, and the registration
//! descriptor, inside `const _: () = { .. };`.
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::model::{MethodModel, Receiver};
use crate::callable::{arg_idents, Callable, Params};

/// `const <name>_reflected_member_name_used_twice: () = ();`, emitted for every reflected field
/// and method: a second member of that name is an E0592 error spanned on the second one.
pub fn member_name_const(name: &str, span: Span) -> TokenStream {
    let ident = if name == "__ffi_init__" {
        syn::Ident::new("two_ffi_init_constructors_for_this_type", span)
    } else {
        syn::Ident::new(&format!("{name}_reflected_member_name_used_twice"), span)
    };
    quote_spanned! {span=> #[doc(hidden)] const #ident: () = (); }
}

pub fn generate(
    krate: &TokenStream,
    self_ty: &syn::Type,
    m: &MethodModel,
    index: usize,
) -> TokenStream {
    let ident = &m.ident;
    let method_name = &m.name;
    let doc = &m.doc;
    let mut params = Vec::new();
    match m.receiver {
        Receiver::Payload => {
            // Spanned on the impl's type: if it is not an object type, errors point there.
            params.push(syn::parse_quote_spanned!(self_ty.span()=> &#krate::ObjectRef<#self_ty>))
        }
        Receiver::ObjectRef => params.push(m.this_ty.clone().expect("this type")),
        Receiver::Static => {}
    }
    params.extend(m.params.iter().cloned());
    let args = arg_idents(params.len());
    let call_args = args.iter().enumerate().map(|(i, a)| {
        if i == 0 && m.receiver == Receiver::Payload {
            quote_spanned!(self_ty.span()=> &**#a)
        } else {
            quote!(#a)
        }
    });
    let call = quote!(<#self_ty>::#ident(#(#call_args),*));
    let unit: syn::Type = syn::parse_quote!(());
    let ret = m.ret.as_ref().unwrap_or(&unit);
    let (ret_desc, convert) = if m.init {
        (
            quote!(<#krate::ObjectRef<#krate::__private::Object> as #krate::__private::FfiReturn>::DESC),
            quote_spanned! {ret.span()=> #krate::__private::init_into_any::<#self_ty, #ret> },
        )
    } else {
        (
            quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::DESC },
            quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::into_ffi_result },
        )
    };
    let kind = if m.init {
        quote!(Init)
    } else if m.type_attr {
        quote!(TypeAttr)
    } else if m.receiver == Receiver::Static {
        quote!(Static)
    } else {
        quote!(Instance)
    };
    let callable = crate::callable::generate(&Callable {
        krate: krate.clone(),
        params: Params::Typed(params),
        call,
        ret_desc,
        convert,
        metadata: crate::object::metadata_values(krate, &m.metadata),
    });
    let index = index as u32;
    // The impl block's place: methods register in source order (block by block, then by
    // position in the block).
    let order = quote_spanned! {self_ty.span()=> (#krate::__private::core::file!(), #krate::__private::core::line!(), #index) };
    let member = member_name_const(method_name, m.ident.span());
    quote! {
        const _: () = {
            #[allow(non_upper_case_globals, dead_code)]
            impl #self_ty {
                #member
            }
            #callable
            fn __tvm_ffi_make() -> #krate::Function {
                // Named `<type key>.<method>` as C++ names methods in its messages; the key is
                // an associated const, so the name is built once, at registration.
                let name = #krate::__private::std::format!(
                    "{}.{}",
                    <#self_ty as #krate::__private::ObjectType>::TYPE_KEY,
                    #method_name
                );
                let signature: &'static #krate::__private::FnSignature = #krate::__private::std::boxed::Box::leak(
                    #krate::__private::std::boxed::Box::new(__tvm_ffi_signature(#krate::__private::std::borrow::Cow::Owned(name))),
                );
                #krate::__private::function_from_invoke(signature, __tvm_ffi_invoke)
            }
            #[#krate::__private::linkme::distributed_slice(#krate::__private::METHODS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __tvm_ffi_ENTRY: #krate::__private::MethodEntry = #krate::__private::MethodEntry {
                type_key: <#self_ty as #krate::__private::ObjectType>::TYPE_KEY,
                name: #method_name,
                doc: #doc,
                kind: #krate::__private::MethodKind::#kind,
                make: __tvm_ffi_make,
                metadata: __tvm_ffi_metadata,
                order: #order,
            };
        };
    }
}
