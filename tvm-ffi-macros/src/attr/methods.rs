//! Attribute parsing of `#[ffi_methods]`: the block's options and each method's `#[ffi(..)]`.
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

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
