//! Code shared by `#[ffi_func]` and `#[ffi_methods]`: a signature, a function object that
//! checks and converts its arguments with the runtime's generic helpers, and its metadata.
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// One callable to generate.
pub struct Callable {
    /// Path of the runtime crate (`::tvm_ffi` unless renamed).
    pub krate: TokenStream,
    /// Expression of type `Cow<'static, str>`: the name shown in errors.
    pub name: TokenStream,
    /// Parameter types, in argument order (after `Self` substitution).
    pub params: Vec<syn::Type>,
    /// The call, using `__arg0`, `__arg1`, ...; its value is converted by `convert`.
    pub call: TokenStream,
    /// Type whose `FfiReturn::DESC` describes the result.
    pub ret_desc: TokenStream,
    /// A function path `fn(value) -> tvm_ffi::Result<Any>` applied to the call's value.
    pub convert: TokenStream,
}

/// The names of the argument variables used in [`Callable::call`].
pub fn arg_idents(count: usize) -> Vec<syn::Ident> {
    (0..count).map(|i| format_ident!("__arg{}", i)).collect()
}

/// `fn __signature()`, `fn __make()` and `fn __metadata()` for `callable`.
pub fn generate(callable: &Callable) -> TokenStream {
    let Callable {
        krate,
        name,
        params,
        call,
        ret_desc,
        convert,
    } = callable;
    let descs = params.iter().map(|ty| {
        quote_spanned! {ty.span()=> #krate::function::TypeDesc::of::<#ty>() }
    });
    let args = arg_idents(params.len());
    let conversions = params.iter().enumerate().map(|(i, ty)| {
        let a = &args[i];
        quote_spanned! {ty.span()=> let #a = __sig.arg::<#ty>(__args, #i)?; }
    });
    quote! {
        fn __signature() -> #krate::function::FnSignature {
            const __PARAMS: &[#krate::function::TypeDesc] = &[#(#descs),*];
            #krate::function::FnSignature {
                name: #name,
                params: ::std::borrow::Cow::Borrowed(__PARAMS),
                ret: #ret_desc,
            }
        }
        fn __make() -> #krate::Function {
            let __sig = __signature();
            #krate::Function::from_packed_named(::core::clone::Clone::clone(&__sig.name), move |__args| {
                __sig.check_arity(__args)?;
                #(#conversions)*
                #convert(#call)
            })
        }
        fn __metadata() -> ::std::string::String {
            #krate::metadata::metadata_json(&__signature().type_schema(), &[])
        }
    }
}

/// Replaces `Self` in a type by the impl's self type (generated code lives outside the impl).
pub struct ReplaceSelf<'a>(pub &'a syn::Type);

impl syn::visit_mut::VisitMut for ReplaceSelf<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty {
            if p.qself.is_none() && p.path.is_ident("Self") {
                *ty = self.0.clone();
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// `ty` with `Self` replaced by `self_ty`.
pub fn replace_self(ty: &syn::Type, self_ty: &syn::Type) -> syn::Type {
    let mut ty = ty.clone();
    syn::visit_mut::VisitMut::visit_type_mut(&mut ReplaceSelf(self_ty), &mut ty);
    ty
}
