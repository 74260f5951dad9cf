//! Code generation for `#[ffi_methods]`: per method, the shared invoke function
//! (`super::shared`), a `Member` impl that makes a repeated name a compile error, and the
//! registration entry with its static signature; one slice of entries per block, inside
//! `const _: () = { .. };`.
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::methods::{MethodModel, Receiver};
use crate::ast::Params;
use crate::codegen::shared::{
    arg_idents, invoke_fn, member_impl, metadata_values, param_descs, Callable,
};

/// The registrations of an `#[ffi_methods]` block: per method, its `Member` impl, invoke
/// function, `make` and entry; one slice of entries for the block.
pub fn generate(krate: &TokenStream, self_ty: &syn::Type, methods: &[MethodModel]) -> TokenStream {
    let p = quote!(#krate::__private);
    let mut items = Vec::new();
    let mut entries = Vec::new();
    for (index, m) in methods.iter().enumerate() {
        let (item, entry) = method(krate, self_ty, m, index);
        items.push(item);
        entries.push(entry);
    }
    let count = entries.len();
    quote! {
        const _: () = {
            #(#items)*
            static __tvm_ffi_METHODS: [#p::MethodEntry; #count] = [#(#entries),*];
            #[#p::linkme::distributed_slice(#p::METHODS)]
            #[linkme(crate = #p::linkme)]
            static __tvm_ffi_BLOCK: &[#p::MethodEntry] = &__tvm_ffi_METHODS;
        };
    }
}

/// One method's items (its `Member` impl, invoke function and `make`) and its entry.
fn method(
    krate: &TokenStream,
    self_ty: &syn::Type,
    m: &MethodModel,
    index: usize,
) -> (TokenStream, TokenStream) {
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
            quote!(<#krate::ObjectRef<#krate::__private::AnyObject> as #krate::__private::FfiReturn>::DESC),
            quote_spanned! {ret.span()=> #krate::__private::init_into_any::<#self_ty, #ret>(__tvm_ffi_value) },
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
    let callable = Callable {
        krate: krate.clone(),
        params: Params::Typed(params),
        call,
        ret_desc,
        convert,
        convert_is_unsafe: m.init,
    };
    let make = quote::format_ident!("__tvm_ffi_make_{}", index);
    let invoke = quote::format_ident!("__tvm_ffi_invoke_{}", index);
    let invoke_fn = invoke_fn(&callable, &invoke);
    let params = param_descs(&callable);
    let ret_desc = &callable.ret_desc;
    let metadata = metadata_values(krate, &m.metadata);
    let (names, default_checks) =
        crate::codegen::shared::param_names(krate, m.receiver != Receiver::Static, &m.names);
    let member = member_impl(krate, &quote!(#self_ty), method_name, m.ident.span());
    let position = index as u32;
    // The impl block's place: methods register in source order (block by block, then by
    // position in the block).
    let order = quote_spanned! {self_ty.span()=> (#krate::__private::core::file!(), #krate::__private::core::line!(), #position) };
    let p = quote!(#krate::__private);
    let item = quote! {
        #default_checks
        #member
        #invoke_fn
        fn #make() -> #krate::Function {
            // SAFETY: the signature (the entry's) and the invoke function are generated from
            // this method's own Rust signature; the result is registered under it.
            unsafe { #p::function_from_invoke(&__tvm_ffi_METHODS[#index].signature, #invoke) }
        }
    };
    let entry = quote! {
        #p::MethodEntry {
            signature: #p::FnSignature {
                owner: <#self_ty as #p::ObjectType>::TYPE_KEY,
                name: #p::std::borrow::Cow::Borrowed(#method_name),
                params: #p::std::borrow::Cow::Borrowed(#params),
                ret: #ret_desc,
                names: #names,
            },
            doc: #doc,
            kind: #p::MethodKind::#kind,
            make: #make,
            metadata: &[#(#metadata),*],
            order: #order,
            // SAFETY: generated by `#[ffi_methods]` from the method itself, under a name it
            // checked is not reserved, with the kind it declares.
            trusted: unsafe { #p::Trusted::new() },
        }
    };
    (item, entry)
}
