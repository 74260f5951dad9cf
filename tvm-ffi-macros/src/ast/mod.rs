//! The model stage: each macro's item as a model with its parsed attributes attached
//! (`crate::attr`), built from the syntax. Building reports what makes no model (an item of
//! the wrong shape, options that exclude each other); the rules a finished model must satisfy
//! are the checks'. One module per item kind; here what the callables share.
pub mod enums;
pub mod func;
pub mod methods;
pub mod object;
pub mod variant;

/// A parameter's registered name and default (receivers excluded).
pub struct ParamInfo {
    /// The name Python and C++ see.
    pub name: String,
    /// The parameter's pattern.
    pub span: proc_macro2::Span,
    /// Its type, with `Self` replaced.
    pub ty: syn::Type,
    /// `#[ffi(default = ..)]`.
    pub default: Option<crate::attr::params::DefaultArg>,
    /// Its `#[ffi(..)]` attribute, if any.
    pub attr: Option<syn::Attribute>,
}

impl ParamInfo {
    /// The model of a parameter from its parsed options and type.
    pub fn new(attrs: crate::attr::params::ParamAttrs, ty: syn::Type) -> ParamInfo {
        ParamInfo {
            name: attrs.name,
            span: attrs.span,
            ty,
            default: attrs.default.into_inner(),
            attr: attrs.attr,
        }
    }
}

/// How the arguments reach the user's function.
pub enum Params {
    /// Converted one by one (`FnSignature::arg`), after an arity check.
    Typed(Vec<syn::Type>),
    /// `&[AnyView]`: all arguments as they came (a packed, variadic function).
    Packed,
}

/// `&[AnyView]` (any lifetimes, any path to `AnyView`): the packed form.
pub fn is_packed_args(ty: &syn::Type) -> bool {
    let syn::Type::Reference(r) = ty else {
        return false;
    };
    if r.mutability.is_some() {
        return false;
    }
    let syn::Type::Slice(slice) = &*r.elem else {
        return false;
    };
    match &*slice.elem {
        syn::Type::Path(p) => {
            p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "AnyView")
        }
        _ => false,
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
