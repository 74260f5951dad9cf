//! `crate = "..."`: the path generated code uses for the runtime crate (default `::tvm_ffi`),
//! for users who rename the dependency in `Cargo.toml`.
use proc_macro2::TokenStream;
use quote::quote;

/// The default: the runtime under its own name, through the extern prelude.
pub fn default_crate() -> TokenStream {
    quote!(::tvm_ffi)
}

/// The crate path with every token spanned at `span`: in a `quote_spanned!` check, so that the
/// error of a failed assertion (whose macro path starts with the crate path) points at the
/// user's token rather than at the derive.
pub fn respan(krate: &TokenStream, span: proc_macro2::Span) -> TokenStream {
    krate
        .clone()
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// Parses `crate = "my_tvm"` (an extern crate name, made absolute) or a full path
/// (`"::my_tvm"`, `"crate::reexported::tvm_ffi"`).
pub fn parse(lit: &syn::LitStr) -> syn::Result<TokenStream> {
    let path: syn::Path = lit.parse().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!(
                "`crate` takes the path of the tvm-ffi crate, e.g. `crate = \"my_tvm\"`; `{}` is not a path",
                lit.value()
            ),
        )
    })?;
    let first = path.segments.first().map(|s| s.ident.to_string());
    let relative_keyword = matches!(first.as_deref(), Some("crate" | "self" | "super"));
    if path.leading_colon.is_some() || relative_keyword {
        Ok(quote!(#path))
    } else {
        Ok(quote!(:: #path))
    }
}
