//! The model of an `#[ffi_methods]` block: one [`MethodModel`] per registered
//! function, with `Self` already replaced by the impl's type.
use proc_macro2::Span;

use crate::ast::{replace_self, ParamInfo};
use crate::attr::methods::{MethodAttrs, TypeAttr};

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
    /// The registered name (`__ffi_init__` for the constructor, the attribute's name for a
    /// type attribute).
    pub name: String,
    pub doc: String,
    pub receiver: Receiver,
    pub init: bool,
    /// Registered as a type attribute (a hook or `type_attr`), not as a method.
    pub type_attr: bool,
    /// User metadata keys.
    pub metadata: Vec<(String, syn::Lit)>,
    /// Parameter types after the receiver, with `Self` replaced.
    pub params: Vec<syn::Type>,
    /// Their names and defaults.
    pub names: Vec<ParamInfo>,
    /// The `#[ffi(..)]` attribute of `this`, if any (reported by the checks).
    pub this_attr: Option<syn::Attribute>,
    /// `this`'s type, with `Self` replaced.
    pub this_ty: Option<syn::Type>,
    pub ret: Option<syn::Type>,
    /// The signature as written, for the checks.
    pub sig: syn::Signature,
    /// `#[ffi(init)]`, spanned at the option.
    pub init_span: Option<Span>,
    /// A hook or `type_attr = ".."`, spanned at the option.
    pub type_attr_kind: Option<(Span, TypeAttr)>,
    /// `#[ffi(name = "..")]` was given.
    pub renamed: bool,
}

/// The model of one method, or `None` for `#[ffi(skip)]`.
pub fn method(f: &syn::ImplItemFn, attrs: MethodAttrs, self_ty: &syn::Type) -> Option<MethodModel> {
    if attrs.skip.is_set() {
        return None;
    }
    let sig = &f.sig;
    let mut receiver = Receiver::Static;
    let mut this_ty = None;
    let mut params = Vec::new();
    let mut names = Vec::new();
    let mut this_attr = None;
    let mut param_attrs = attrs.params.into_iter();
    for (i, input) in sig.inputs.iter().enumerate() {
        match input {
            syn::FnArg::Receiver(_) => receiver = Receiver::Payload,
            syn::FnArg::Typed(pat) => {
                let is_this =
                    i == 0 && matches!(&*pat.pat, syn::Pat::Ident(p) if p.ident == "this");
                let param = param_attrs
                    .next()
                    .expect("one parsed option set per parameter");
                if is_this {
                    receiver = Receiver::ObjectRef;
                    this_ty = Some(replace_self(&pat.ty, self_ty));
                    this_attr = param.attr;
                } else {
                    let ty = replace_self(&pat.ty, self_ty);
                    names.push(ParamInfo::new(param, ty.clone()));
                    params.push(ty);
                }
            }
        }
    }
    let init_span: Option<Span> = attrs.init.get().copied();
    let type_attr = attrs.type_attr.into_inner();
    let name = match (init_span, &type_attr, attrs.name.get()) {
        (Some(_), _, _) => "__ffi_init__".to_string(),
        (None, Some((_, TypeAttr::Hook(hook))), _) => hook.attr.to_string(),
        (None, Some((_, TypeAttr::Named(name))), _) => name.clone(),
        (None, None, Some(lit)) => lit.value(),
        (None, None, None) => sig.ident.to_string(),
    };
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some(replace_self(ty, self_ty)),
    };
    Some(MethodModel {
        ident: sig.ident.clone(),
        name,
        doc: crate::attr::docs::collect(&f.attrs),
        receiver,
        init: init_span.is_some(),
        type_attr: type_attr.is_some(),
        metadata: attrs.metadata.into_inner().unwrap_or_default(),
        params,
        names,
        this_attr,
        this_ty,
        ret,
        sig: sig.clone(),
        init_span,
        type_attr_kind: type_attr,
        renamed: attrs.name.is_set(),
    })
}
