//! The error context every macro shares: each stage reports into one [`Ctxt`], so that every
//! problem is reported at once; `check` hands the errors over, and a context dropped without
//! `check` panics (as serde's does), so no error can be lost.
use std::cell::RefCell;

/// Collects errors; [`Ctxt::check`] combines them into one `syn::Error`.
pub struct Ctxt {
    /// `None` once checked.
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanned on `tokens`.
    pub fn error(&self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an existing error.
    pub fn push(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(err);
    }

    /// `Ok` when nothing was recorded, else every error combined.
    pub fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for err in errors {
            combined.combine(err);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("a macro dropped its error context without checking it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn check_hands_over_every_error() {
        let cx = Ctxt::new();
        cx.error(quote::quote!(a), "first");
        cx.error(quote::quote!(b), "second");
        let messages: Vec<_> = cx
            .check()
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages, ["first", "second"]);
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "dropped its error context without checking it")]
    fn an_unchecked_context_panics_when_dropped() {
        let cx = Ctxt::new();
        cx.error(quote::quote!(a), "lost");
        drop(cx);
    }
}
