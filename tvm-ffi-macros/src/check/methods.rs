//! Checks of an `#[ffi_methods]` block: the impl itself, each signature, receivers,
//! constructors and the registered names.
use crate::ast::methods::{MethodModel, Receiver};
use crate::attr::methods::TypeAttr;
use crate::ctxt::Ctxt;

/// Every check of a block and its registered methods.
pub fn check(imp: &syn::ItemImpl, methods: &[MethodModel], cx: &Ctxt) {
    block(imp, cx);
    for model in methods {
        signature(&model.sig, cx);
        crate::check::param_defaults(&model.names, cx);
        if let Some(attr) = &model.this_attr {
            cx.error(
                attr,
                "the receiver `this` is always passed (it is the object), so it takes no `#[ffi(..)]` options",
            );
        }
        for input in &model.sig.inputs {
            if let syn::FnArg::Receiver(r) = input {
                receiver(r, cx);
            }
        }
        if model.init_span.is_some() {
            constructor(model, cx);
        }
        if model.type_attr_kind.is_some() {
            type_attr(model, cx);
        }
    }
    names(methods, cx);
}

/// An inherent, non-generic impl.
fn block(imp: &syn::ItemImpl, cx: &Ctxt) {
    if let Some((_, path, _)) = &imp.trait_ {
        cx.error(
            path,
            "#[ffi_methods] applies to an inherent impl (`impl Point`), not a trait impl",
        );
    }
    if !imp.generics.params.is_empty() {
        cx.error(
            &imp.generics,
            "#[ffi_methods] cannot register a generic impl: the runtime needs concrete types",
        );
    }
}

/// The signature rules shared with `#[ffi_func]` (synchronous, not generic, not variadic).
fn signature(sig: &syn::Signature, cx: &Ctxt) {
    crate::check::signature(
        sig,
        "method",
        "mark it `#[ffi(skip)]` or write a wrapper per type",
        cx,
    );
}

/// `&self` only: objects are shared between languages.
fn receiver(r: &syn::Receiver, cx: &Ctxt) {
    if r.colon_token.is_some() {
        cx.error(
            r,
            "use `&self`, or take the reference as `this: &ObjectRef<Self>`",
        );
    } else if r.reference.is_none() {
        cx.error(
            r,
            "an FFI method cannot take `self` by value: the object is shared; take `&self`",
        );
    } else if r.mutability.is_some() {
        cx.error(r, "an FFI method cannot take `&mut self`: objects are shared between languages; take `&self` and keep mutable state in `tvm_ffi::Rw<T>` fields");
    }
}

/// An `#[ffi(init)]` constructor has no receiver and returns the new object.
fn constructor(model: &MethodModel, cx: &Ctxt) {
    let (sig, init) = (&model.sig, model.init_span.expect("a constructor"));
    if model.receiver != Receiver::Static {
        cx.push(syn::Error::new(init, "an `#[ffi(init)]` constructor has no receiver: it is an associated function returning `Self`, `ObjectRef<Self>` or a `Result` of either"));
    }
    if matches!(sig.output, syn::ReturnType::Default) {
        cx.push(syn::Error::new(sig.ident.span(), "an `#[ffi(init)]` constructor returns the new object: `-> Self`, `-> ObjectRef<Self>` or a `Result` of either"));
    }
}

/// A hook takes what the runtime passes: the receiver (or none) and its parameters. Other
/// options do not combine with it.
fn type_attr(model: &MethodModel, cx: &Ctxt) {
    let (span, kind) = model.type_attr_kind.as_ref().expect("a type attribute");
    let span = *span;
    if model.init || model.renamed {
        cx.push(syn::Error::new(
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
        cx.push(syn::Error::new(
            span,
            format!(
                "`#[ffi({})]` registers `{}`, which the runtime calls as `{}`: give the function exactly these parameters",
                hook.option, hook.attr, expected
            ),
        ));
    }
}

/// Registered names are unique in the block and not reserved. (Across blocks, and against
/// field names, the generated `Member` impls make a repeat a compile error.)
fn names(methods: &[MethodModel], cx: &Ctxt) {
    let mut names = std::collections::HashSet::new();
    for model in methods {
        if !names.insert(model.name.clone()) {
            if model.init {
                cx.error(
                    &model.sig.ident,
                    "a type has one `#[ffi(init)]` constructor; remove this one or mark it `#[ffi(skip)]`",
                );
            } else {
                cx.error(
                    &model.sig.ident,
                    format!(
                        "duplicate method name `{}`; rename one with `#[ffi(name = \"..\")]`",
                        model.name
                    ),
                );
            }
        } else if !model.init && !model.type_attr && model.name.starts_with("__ffi") {
            cx.error(
                &model.sig.ident,
                format!(
                    "`{}` is reserved: names starting with `__ffi` are the runtime's hooks; use `#[ffi(init)]` for the constructor, or rename the method",
                    model.name
                ),
            );
        }
    }
}
