//! The validated model of an `#[ffi_methods]` block: one [`MethodModel`] per registered
//! function, with `Self` already replaced by the impl's type.
use proc_macro2::Span;

use super::parse::{MethodAttrs, TypeAttr};
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

/// A hook the runtime or `tvm_ffi` calls, registered as a type attribute.
pub struct Hook {
    /// The option that marks the function (`#[ffi(repr)]`).
    pub option: &'static str,
    /// The type attribute (`__ffi_repr__`).
    pub attr: &'static str,
    /// Whether it takes the object as receiver (else it is static).
    pub receiver: bool,
    /// Its parameters after the receiver, as the runtime passes them (for messages).
    pub params: &'static [&'static str],
}

/// The hooks of the pinned runtime (`include/tvm/ffi/extra/dataclass.h`, `structural_*.h`,
/// `serialization.h`, `reflection/creator.h`), with the signatures it calls them with.
pub static HOOKS: &[Hook] = &[
    Hook {
        option: "repr",
        attr: "__ffi_repr__",
        receiver: true,
        params: &["fn_repr: Function"],
    },
    Hook {
        option: "eq",
        attr: "__ffi_eq__",
        receiver: true,
        params: &["other", "fn_eq: Function"],
    },
    Hook {
        option: "hash",
        attr: "__ffi_hash__",
        receiver: true,
        params: &["fn_hash: Function"],
    },
    Hook {
        option: "compare",
        attr: "__ffi_compare__",
        receiver: true,
        params: &["other", "fn_cmp: Function"],
    },
    Hook {
        option: "s_equal",
        attr: "__s_equal__",
        receiver: true,
        params: &["other", "equal: Function"],
    },
    Hook {
        option: "s_hash",
        attr: "__s_hash__",
        receiver: true,
        params: &["init: i64", "hash: Function"],
    },
    Hook {
        option: "data_to_json",
        attr: "__data_to_json__",
        receiver: true,
        params: &[],
    },
    Hook {
        option: "data_from_json",
        attr: "__data_from_json__",
        receiver: false,
        params: &["data: Any"],
    },
    Hook {
        option: "convert",
        attr: "__ffi_convert__",
        receiver: false,
        params: &["value: Any"],
    },
];

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
    let type_attr = attrs.type_attr.into_inner();
    let name = match (init, &type_attr, attrs.name.get()) {
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
    let model = MethodModel {
        ident: sig.ident.clone(),
        name,
        doc: crate::docs::collect(&f.attrs),
        receiver,
        init: init.is_some(),
        type_attr: type_attr.is_some(),
        metadata: attrs.metadata.into_inner().unwrap_or_default(),
        params,
        this_ty,
        ret,
    };
    if let Some(span) = init {
        super::check::constructor(&model, sig, span, diag);
    }
    if let Some((span, kind)) = &type_attr {
        super::check::type_attr(
            &model,
            kind,
            *span,
            init.is_some(),
            attrs.name.is_set(),
            diag,
        );
    }
    Some(model)
}
