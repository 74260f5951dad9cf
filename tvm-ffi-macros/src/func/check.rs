//! Checks of an `#[ffi_func]`: it is registered somewhere, its signature can be called
//! through the ABI, and a packed parameter stands alone.
use proc_macro2::Span;

use super::parse::FuncAttrs;
use crate::callable::Params;
use crate::diagnostics::Diagnostics;

/// A global name, a module export, or both.
pub fn registered(attrs: &FuncAttrs, diag: &mut Diagnostics) {
    if !attrs.name.is_written() && !attrs.export.is_written() {
        diag.push(syn::Error::new(
            Span::call_site(),
            "#[ffi_func] needs a global name, a module export, or both: `#[ffi_func(name = \"my_ext.add\")]`, `#[ffi_func(export = \"add\")]`",
        ));
    }
}

/// The signature rules shared with `#[ffi_methods]`.
pub fn signature(func: &syn::ItemFn, diag: &mut Diagnostics) {
    crate::callable::check_signature(&func.sig, "function", "write a wrapper per type", diag);
}

/// Free functions only.
pub fn receiver(r: &syn::Receiver, diag: &mut Diagnostics) {
    diag.error(
        r,
        "#[ffi_func] is for free functions; use #[ffi_methods] on an impl block for methods",
    );
}

/// `&[AnyView]` is the packed form only as the sole parameter.
pub fn packed_params(params: Vec<syn::Type>, diag: &mut Diagnostics) -> Params {
    match params.iter().position(crate::callable::is_packed_args) {
        Some(_) if params.len() == 1 => Params::Packed,
        Some(i) => {
            diag.error(&params[i], "`&[AnyView]` receives all the arguments of a packed (variadic) function, so it must be the only parameter; convert the others from it (`args[1].cast::<i64>()?`)");
            Params::Typed(params)
        }
        None => Params::Typed(params),
    }
}
