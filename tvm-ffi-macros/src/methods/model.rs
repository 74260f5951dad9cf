//! The validated model of an `#[ffi_methods]` block: one [`MethodModel`] per registered
//! function, with `Self` already replaced by the impl's type.
use proc_macro2::Span;

use super::parse::MethodAttrs;
use crate::callable::replace_self;
use crate::diagnostics::Diagnostics;

#[derive(PartialEq)]
pub enum Receiver {
    /// `&self`: called with the payload.
    Payload,
    /// `this: &ObjectRef<Self>` or `this: ObjectRef<Self>`: called with the reference.
    ObjectRef,
    /// No receiver.
    Static,
}

pub struct MethodModel {
    pub ident: syn::Ident,
    /// The registered name (`__ffi_init__` for the constructor).
    pub name: String,
    pub doc: String,
    pub receiver: Receiver,
    pub init: bool,
    /// Parameter types after the receiver, with `Self` replaced.
    pub params: Vec<syn::Type>,
    /// `this`'s type, with `Self` replaced.
    pub this_ty: Option<syn::Type>,
    pub ret: Option<syn::Type>,
}

/// The model of one method, or `None` for `#[ffi(skip)]`; receivers that cannot be shared
/// across languages are reported (see `super::check::receiver`).
pub fn method(
    f: &syn::ImplItemFn,
    attrs: MethodAttrs,
    self_ty: &syn::Type,
    diag: &mut Diagnostics,
) -> Option<MethodModel> {
    if attrs.skip.is_set() {
        return None;
    }
    let sig = &f.sig;
    let mut receiver = Receiver::Static;
    let mut this_ty = None;
    let mut params = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        match input {
            syn::FnArg::Receiver(r) => {
                super::check::receiver(r, diag);
                receiver = Receiver::Payload;
            }
            syn::FnArg::Typed(pat) => {
                let is_this =
                    i == 0 && matches!(&*pat.pat, syn::Pat::Ident(p) if p.ident == "this");
                if is_this {
                    receiver = Receiver::ObjectRef;
                    this_ty = Some(replace_self(&pat.ty, self_ty));
                } else {
                    params.push(replace_self(&pat.ty, self_ty));
                }
            }
        }
    }
    let init: Option<Span> = attrs.init.get().copied();
    let name = match (init, attrs.name.get()) {
        (Some(_), _) => "__ffi_init__".to_string(),
        (None, Some(lit)) => lit.value(),
        (None, None) => sig.ident.to_string(),
    };
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some(replace_self(ty, self_ty)),
    };
    let model = MethodModel {
        ident: sig.ident.clone(),
        name,
        doc: crate::docs::collect(&f.attrs),
        receiver,
        init: init.is_some(),
        params,
        this_ty,
        ret,
    };
    if let Some(span) = init {
        super::check::constructor(&model, sig, span, diag);
    }
    Some(model)
}
