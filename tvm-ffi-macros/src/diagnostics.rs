//! Error accumulation: every problem found while building a model is reported at once.
use proc_macro2::TokenStream;

/// Collects errors; `finish` combines them into one `syn::Error`.
#[derive(Default)]
pub struct Diagnostics {
    errors: Option<syn::Error>,
}

impl Diagnostics {
    /// Records an error spanned on `tokens`.
    pub fn error(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an existing error.
    pub fn push(&mut self, err: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(err),
            None => self.errors = Some(err),
        }
    }

    /// `Ok(value)` when nothing was recorded.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.errors {
            Some(err) => Err(err),
            None => Ok(value),
        }
    }
}

/// Reports every identifier in `tokens` that starts with `__tvm_ffi`: the generated items next
/// to the user's code are all named so (`__tvm_ffi_FIELDS`, `__tvm_ffi_invoke_0`, ...), and a
/// user's item of such a name would be shadowed by them wherever the generated code names it
/// (a field type, a default, the function a registration calls). `tokens` are what the
/// generated code repeats: the item's signature, types and attributes, not function bodies.
pub fn reserved_prefix(tokens: TokenStream, diag: &mut Diagnostics) {
    for token in tokens {
        match token {
            proc_macro2::TokenTree::Ident(ident)
                if ident
                    .to_string()
                    .trim_start_matches("r#")
                    .starts_with("__tvm_ffi") =>
            {
                diag.error(
                    &ident,
                    format!("`{ident}`: names starting with `__tvm_ffi` are reserved for the code the tvm-ffi macros generate next to this item; rename it"),
                );
            }
            proc_macro2::TokenTree::Group(group) => reserved_prefix(group.stream(), diag),
            _ => {}
        }
    }
}

/// What the generated code of a derive repeats of the item: everything but the
/// `#[ffi_type(..)]` attribute (whose names become strings).
pub fn repeated_tokens(item: &syn::DeriveInput) -> TokenStream {
    let mut item = item.clone();
    item.attrs.retain(|a| !a.path().is_ident("ffi_type"));
    quote::ToTokens::to_token_stream(&item)
}

/// The errors followed by the user's item unchanged, so that the item itself still exists and
/// its other uses do not produce follow-on errors.
pub fn with_original(err: syn::Error, original: TokenStream) -> TokenStream {
    let errors = err.to_compile_error();
    quote::quote! { #errors #original }
}
