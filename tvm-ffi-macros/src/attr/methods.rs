//! Attribute parsing of `#[ffi_methods]`: the block's options and each method's `#[ffi(..)]`.
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use crate::attr::hooks::{Hook, HOOKS};
use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

/// The options of one method's `#[ffi(..)]`, for the unknown-option message.
const METHOD_OPTIONS: &str = "`name = \"..\"`, `init`, `skip`, `metadata(key = <literal>, ..)`, a hook (`repr`, `eq`, `hash`, `compare`, `s_equal`, `s_hash`, `data_to_json`, `data_from_json`, `convert`), `type_attr = \"name\"`";

/// The options of `#[ffi_methods(..)]`.
pub fn block_attrs(attr: TokenStream, cx: &Ctxt) -> Attr<TokenStream> {
    let mut krate = Attr::none("crate");
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let path = attr::crate_path(&meta)?;
            krate.set(&meta, path, cx);
            Ok(())
        } else {
            Err(meta.error("unknown #[ffi_methods] option; the only option is `crate = \"..\"` (configure methods with `#[ffi(..)]` on each method)"))
        }
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, attr) {
        cx.push(err);
    }
    krate
}

/// The options of one method's `#[ffi(..)]` attributes; `init` and hooks are spanned at the
/// option.
pub struct MethodAttrs {
    pub name: Attr<syn::LitStr>,
    pub init: Attr<Span>,
    pub skip: Attr<()>,
    pub metadata: Attr<Vec<(String, syn::Lit)>>,
    /// A hook (its option name) or `type_attr = "name"`: registered as a type attribute.
    pub type_attr: Attr<(Span, TypeAttr)>,
    /// The options of each typed parameter (`this` included), in order.
    pub params: Vec<crate::attr::params::ParamAttrs>,
}

/// What a method registers as a type attribute instead of a method.
#[derive(Clone)]
pub enum TypeAttr {
    /// One of the runtime's hooks, by option name (`repr`, `eq`, ...).
    Hook(&'static Hook),
    /// Any attribute, by name.
    Named(String),
}

pub fn method_attrs(f: &syn::ImplItemFn, cx: &Ctxt) -> MethodAttrs {
    let mut out = MethodAttrs {
        name: Attr::none("name"),
        init: Attr::none("init"),
        skip: Attr::none("skip"),
        metadata: Attr::none("metadata"),
        type_attr: Attr::none("type attribute"),
        params: crate::attr::params::fn_params(&f.sig, cx),
    };
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if syn::parse_str::<syn::Ident>(&lit.value()).is_err() {
                    cx.error(
                        &lit,
                        format!("invalid method name `{}`: use an identifier", lit.value()),
                    );
                }
                out.name.set(&meta, lit, cx);
            } else if meta.path.is_ident("init") {
                attr::flag(&meta, "init", cx)?;
                out.init.set(&meta, meta.path.span(), cx);
            } else if meta.path.is_ident("skip") {
                attr::flag(&meta, "skip", cx)?;
                out.skip.set(&meta, (), cx);
            } else if meta.path.is_ident("metadata") {
                let entries = attr::literal_list(&meta, "metadata", cx)?;
                out.metadata.set(&meta, entries, cx);
            } else if meta.path.is_ident("type_attr") {
                let lit = attr::string(
                    &meta,
                    "`type_attr` takes the attribute's name: `type_attr = \"__my_attr__\"`",
                )?;
                if let Some(why) = attr::reserved_type_attr(&lit.value()) {
                    cx.error(&lit, why);
                }
                out.type_attr
                    .set(&meta, (meta.path.span(), TypeAttr::Named(lit.value())), cx);
            } else if let Some(hook) = HOOKS.iter().find(|h| meta.path.is_ident(h.option)) {
                attr::flag(&meta, hook.option, cx)?;
                out.type_attr
                    .set(&meta, (meta.path.span(), TypeAttr::Hook(hook)), cx);
            } else {
                attr::unknown(&meta, "#[ffi] method", METHOD_OPTIONS, cx)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}
