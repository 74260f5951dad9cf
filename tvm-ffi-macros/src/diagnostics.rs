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

/// The errors followed by the user's item unchanged, so that the item itself still exists and
/// its other uses do not produce follow-on errors.
pub fn with_original(err: syn::Error, original: TokenStream) -> TokenStream {
    let errors = err.to_compile_error();
    quote::quote! { #errors #original }
}
