//! `#[ffi_methods]`: parse an inherent impl → [`MethodModel`]s → one registration descriptor
//! per method (the impl itself is emitted unchanged, minus the `#[ffi(..)]` attributes).
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::callable::{arg_idents, replace_self, Callable, Params};
use crate::diagnostics::{with_original, Diagnostics};

const METHOD_OPTIONS: &str = "`name = \"..\"`, `init`, `skip`";

#[derive(PartialEq)]
enum Receiver {
    /// `&self`: called with the payload.
    Payload,
    /// `this: &ObjectRef<Self>` or `this: ObjectRef<Self>`: called with the reference.
    ObjectRef,
    /// No receiver.
    Static,
}

struct MethodModel {
    ident: syn::Ident,
    name: String,
    doc: String,
    receiver: Receiver,
    init: bool,
    /// Parameter types after the receiver, with `Self` replaced.
    params: Vec<syn::Type>,
    /// `this`'s type, with `Self` replaced.
    this_ty: Option<syn::Type>,
    ret: Option<syn::Type>,
}

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(imp) => imp,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[ffi_methods] applies to an inherent impl block: `impl Point { .. }`",
            );
            return with_original(err, item);
        }
    };
    let result = build_models(attr, &imp);
    strip_ffi_attrs(&mut imp);
    match result {
        Ok((krate, methods)) => {
            let self_ty = &*imp.self_ty;
            let registrations = methods.iter().map(|m| generate(&krate, self_ty, m));
            quote! { #imp #(#registrations)* }
        }
        Err(err) => with_original(err, quote!(#imp)),
    }
}

fn strip_ffi_attrs(imp: &mut syn::ItemImpl) {
    for item in &mut imp.items {
        if let syn::ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !a.path().is_ident("ffi"));
        }
    }
}

fn build_models(
    attr: TokenStream,
    imp: &syn::ItemImpl,
) -> syn::Result<(TokenStream, Vec<MethodModel>)> {
    let mut diag = Diagnostics::default();
    let mut krate = crate::crate_path::default_crate();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            krate = crate::crate_path::parse(&lit)?;
            Ok(())
        } else {
            Err(meta.error("unknown #[ffi_methods] option; the only option is `crate = \"..\"` (configure methods with `#[ffi(..)]` on each method)"))
        }
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, attr) {
        diag.push(err);
    }
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
    let self_ty = &*imp.self_ty;
    let mut models = Vec::new();
    let mut names = std::collections::HashSet::new();
    for item in &imp.items {
        let syn::ImplItem::Fn(f) = item else { continue };
        if let Some(model) = build_method(f, self_ty, &mut diag) {
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
            } else if !model.init && model.name.starts_with("__ffi") {
                diag.error(
                    &f.sig.ident,
                    format!(
                        "`{}` is reserved: names starting with `__ffi` are the runtime's hooks; use `#[ffi(init)]` for the constructor, or rename the method",
                        model.name
                    ),
                );
            }
            models.push(model);
        }
    }
    diag.finish((krate, models))
}

fn build_method(
    f: &syn::ImplItemFn,
    self_ty: &syn::Type,
    diag: &mut Diagnostics,
) -> Option<MethodModel> {
    let mut name = f.sig.ident.to_string();
    let mut init: Option<Span> = None;
    let mut skip = false;
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if syn::parse_str::<syn::Ident>(&lit.value()).is_err() {
                    diag.error(
                        &lit,
                        format!("invalid method name `{}`: use an identifier", lit.value()),
                    );
                }
                name = lit.value();
            } else if meta.path.is_ident("init") {
                init = Some(meta.path.span());
            } else if meta.path.is_ident("skip") {
                skip = true;
            } else {
                let key = meta
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                diag.push(meta.error(format!(
                    "unknown #[ffi] method option `{key}`; valid options: {METHOD_OPTIONS}"
                )));
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
            }
            Ok(())
        });
        if let Err(err) = result {
            diag.push(err);
        }
    }
    if skip {
        return None;
    }
    let sig = &f.sig;
    crate::callable::check_signature(
        sig,
        "method",
        "mark it `#[ffi(skip)]` or write a wrapper per type",
        diag,
    );
    let mut receiver = Receiver::Static;
    let mut this_ty = None;
    let mut params = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        match input {
            syn::FnArg::Receiver(r) => {
                if r.colon_token.is_some() {
                    diag.error(
                        r,
                        "use `&self`, or take the reference as `this: &ObjectRef<Self>`",
                    );
                } else if r.reference.is_none() {
                    diag.error(r, "an FFI method cannot take `self` by value: the object is shared; take `&self`");
                } else if r.mutability.is_some() {
                    diag.error(r, "an FFI method cannot take `&mut self`: objects are shared between languages; take `&self` and keep mutable state in `tvm_ffi::Rw<T>` fields");
                }
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
    if let Some(span) = init {
        if receiver != Receiver::Static {
            diag.push(syn::Error::new(span, "an `#[ffi(init)]` constructor has no receiver: it is an associated function returning `Self`, `ObjectRef<Self>` or a `Result` of either"));
        }
        if matches!(sig.output, syn::ReturnType::Default) {
            diag.push(syn::Error::new(sig.ident.span(), "an `#[ffi(init)]` constructor returns the new object: `-> Self`, `-> ObjectRef<Self>` or a `Result` of either"));
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some(replace_self(ty, self_ty)),
    };
    Some(MethodModel {
        ident: sig.ident.clone(),
        name: if init.is_some() {
            "__ffi_init__".into()
        } else {
            name
        },
        doc: crate::docs::collect(&f.attrs),
        receiver,
        init: init.is_some(),
        params,
        this_ty,
        ret,
    })
}

/// `const <name>_reflected_member_name_used_twice: () = ();`, emitted for every reflected field
/// and method: a second member of that name is an E0592 error spanned on the second one.
pub fn member_name_const(name: &str, span: Span) -> TokenStream {
    let ident = if name == "__ffi_init__" {
        syn::Ident::new("two_ffi_init_constructors_for_this_type", span)
    } else {
        syn::Ident::new(&format!("{name}_reflected_member_name_used_twice"), span)
    };
    quote_spanned! {span=> #[doc(hidden)] const #ident: () = (); }
}

fn generate(krate: &TokenStream, self_ty: &syn::Type, m: &MethodModel) -> TokenStream {
    let ident = &m.ident;
    let method_name = &m.name;
    let doc = &m.doc;
    let mut params = Vec::new();
    match m.receiver {
        Receiver::Payload => {
            // Spanned on the impl's type: if it is not an object type, errors point there.
            params.push(syn::parse_quote_spanned!(self_ty.span()=> &#krate::ObjectRef<#self_ty>))
        }
        Receiver::ObjectRef => params.push(m.this_ty.clone().expect("this type")),
        Receiver::Static => {}
    }
    params.extend(m.params.iter().cloned());
    let args = arg_idents(params.len());
    let call_args = args.iter().enumerate().map(|(i, a)| {
        if i == 0 && m.receiver == Receiver::Payload {
            quote_spanned!(self_ty.span()=> &**#a)
        } else {
            quote!(#a)
        }
    });
    let call = quote!(<#self_ty>::#ident(#(#call_args),*));
    let unit: syn::Type = syn::parse_quote!(());
    let ret = m.ret.as_ref().unwrap_or(&unit);
    let (ret_desc, convert) = if m.init {
        (
            quote!(<#krate::ObjectRef<#krate::__private::Object> as #krate::__private::FfiReturn>::DESC),
            quote_spanned! {ret.span()=> #krate::__private::init_into_any::<#self_ty, #ret> },
        )
    } else {
        (
            quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::DESC },
            quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::into_ffi_result },
        )
    };
    let kind = if m.init {
        quote!(Init)
    } else if m.receiver == Receiver::Static {
        quote!(Static)
    } else {
        quote!(Instance)
    };
    let callable = crate::callable::generate(&Callable {
        krate: krate.clone(),
        params: Params::Typed(params),
        call,
        ret_desc,
        convert,
    });
    let member = member_name_const(method_name, m.ident.span());
    quote! {
        const _: () = {
            #[allow(non_upper_case_globals, dead_code)]
            impl #self_ty {
                #member
            }
            #callable
            fn __make() -> #krate::Function {
                // Named `<type key>.<method>` as C++ names methods in its messages; the key is
                // an associated const, so the name is built once, at registration.
                let name = ::std::format!(
                    "{}.{}",
                    <#self_ty as #krate::__private::ObjectType>::TYPE_KEY,
                    #method_name
                );
                let signature: &'static #krate::__private::FnSignature = ::std::boxed::Box::leak(
                    ::std::boxed::Box::new(__signature(::std::borrow::Cow::Owned(name))),
                );
                #krate::__private::function_from_invoke(signature, __invoke)
            }
            #[#krate::__private::linkme::distributed_slice(#krate::__private::METHODS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __ENTRY: #krate::__private::MethodEntry = #krate::__private::MethodEntry {
                type_key: <#self_ty as #krate::__private::ObjectType>::TYPE_KEY,
                name: #method_name,
                doc: #doc,
                kind: #krate::__private::MethodKind::#kind,
                make: __make,
                metadata: __metadata,
            };
        };
    }
}
