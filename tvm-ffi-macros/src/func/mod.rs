//! `#[ffi_func]`: attributes (`parse`) → validated model (`model`) → checks (`check`) →
//! registration and exports (`codegen`).
use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::diagnostics::{with_original, Diagnostics};

mod check;
mod codegen;
mod model;
mod parse;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[ffi_func] applies to a free function: `fn name(args) -> R { ... }`",
            );
            return with_original(err, item);
        }
    };
    let mut diag = Diagnostics::default();
    let attrs = parse::func_attrs(attr, &mut diag);
    check::registered(&attrs, &mut diag);
    // The signature: the generated code calls the function by name and names its types.
    crate::diagnostics::reserved_prefix(
        {
            let sig = &func.sig;
            quote!(#sig)
        },
        &mut diag,
    );
    check::signature(&func, &mut diag);
    let model = model::func(attrs, &func, &mut diag);
    match diag.finish(model) {
        Ok(model) => {
            let generated = codegen::generate(&model);
            quote! { #func #generated }
        }
        Err(err) => with_original(err, item),
    }
}
