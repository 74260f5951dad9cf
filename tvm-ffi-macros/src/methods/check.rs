//! Checks of an `#[ffi_methods]` block: the impl itself, each signature, receivers,
//! constructors and the registered names.
use proc_macro2::Span;

use super::model::{MethodModel, Receiver};
use super::parse::TypeAttr;
use crate::diagnostics::Diagnostics;

/// An inherent, non-generic impl.
pub fn block(imp: &syn::ItemImpl, diag: &mut Diagnostics) {
    if let Some((_, path, _)) = &imp.trait_ {
        diag.error(
            path,
            "#[ffi_methods] applies to an inherent impl (`impl Point`), not a trait impl",
        );
    }
    if !imp.generics.params.is_empty() {
        diag.error(
            &imp.generics,
            "#[ffi_methods] cannot register a generic impl: the runtime needs concrete types",
        );
    }
}

/// The signature rules shared with `#[ffi_func]` (synchronous, not generic, not variadic).
pub fn signature(f: &syn::ImplItemFn, diag: &mut Diagnostics) {
    crate::callable::check_signature(
        &f.sig,
        "method",
        "mark it `#[ffi(skip)]` or write a wrapper per type",
        diag,
    );
}

/// `&self` only: objects are shared between languages.
pub fn receiver(r: &syn::Receiver, diag: &mut Diagnostics) {
    if r.colon_token.is_some() {
        diag.error(
            r,
            "use `&self`, or take the reference as `this: &ObjectRef<Self>`",
        );
    } else if r.reference.is_none() {
        diag.error(
            r,
            "an FFI method cannot take `self` by value: the object is shared; take `&self`",
        );
    } else if r.mutability.is_some() {
        diag.error(r, "an FFI method cannot take `&mut self`: objects are shared between languages; take `&self` and keep mutable state in `tvm_ffi::Rw<T>` fields");
    }
}

/// An `#[ffi(init)]` constructor has no receiver and returns the new object.
pub fn constructor(model: &MethodModel, sig: &syn::Signature, init: Span, diag: &mut Diagnostics) {
    if model.receiver != Receiver::Static {
        diag.push(syn::Error::new(init, "an `#[ffi(init)]` constructor has no receiver: it is an associated function returning `Self`, `ObjectRef<Self>` or a `Result` of either"));
    }
    if matches!(sig.output, syn::ReturnType::Default) {
        diag.push(syn::Error::new(sig.ident.span(), "an `#[ffi(init)]` constructor returns the new object: `-> Self`, `-> ObjectRef<Self>` or a `Result` of either"));
    }
}

/// A hook takes what the runtime passes: the receiver (or none) and its parameters. Other
/// options do not combine with it.
pub fn type_attr(
    model: &MethodModel,
    kind: &TypeAttr,
    span: Span,
    init: bool,
    renamed: bool,
    diag: &mut Diagnostics,
) {
    if init || renamed {
        diag.push(syn::Error::new(
            span,
            "a type attribute is named by its option: remove `init` and `name`",
        ));
    }
    let TypeAttr::Hook(hook) = kind else { return };
    let has_receiver = model.receiver != Receiver::Static;
    let expected = if hook.receiver {
        format!("(&self, {})", hook.params.join(", "))
    } else {
        format!("({})", hook.params.join(", "))
    };
    let expected = expected.replace("(&self, )", "(&self)");
    if has_receiver != hook.receiver || model.params.len() != hook.params.len() {
        diag.push(syn::Error::new(
            span,
            format!(
                "`#[ffi({})]` registers `{}`, which the runtime calls as `{}`: give the function exactly these parameters",
                hook.option, hook.attr, expected
            ),
        ));
    }
}

/// Registered names are unique in the block and not reserved. (Across blocks, and against
/// field names, the generated member constants make a repeat a compile error.)
pub fn names(methods: &[(&syn::ImplItemFn, MethodModel)], diag: &mut Diagnostics) {
    let mut names = std::collections::HashSet::new();
    for (f, model) in methods {
        if !names.insert(model.name.clone()) {
            if model.init {
                diag.error(
                    &f.sig.ident,
                    "a type has one `#[ffi(init)]` constructor; remove this one or mark it `#[ffi(skip)]`",
                );
            } else {
                diag.error(
                    &f.sig.ident,
                    format!(
                        "duplicate method name `{}`; rename one with `#[ffi(name = \"..\")]`",
                        model.name
                    ),
                );
            }
        } else if !model.init && !model.type_attr && model.name.starts_with("__ffi") {
            diag.error(
                &f.sig.ident,
                format!(
                    "`{}` is reserved: names starting with `__ffi` are the runtime's hooks; use `#[ffi(init)]` for the constructor, or rename the method",
                    model.name
                ),
            );
        }
    }
}
