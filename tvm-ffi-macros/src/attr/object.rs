//! Attribute parsing of `#[derive(Object)]`: `#[ffi_type(..)]` on the struct and `#[ffi(..)]`
//! on each field, into raw options. Each value is checked for its own form here (a type key, a
//! structural kind, a metadata literal); how options combine is the
//! model's and the checks' business.
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

const TYPE_OPTIONS: &str = "`key = \"pkg.Name\"`, `final`, `structural = \"tree\"|\"dag\"|\"const-tree\"|\"free-var\"|\"unique\"`, `init = false`, `creator = false`, `convert`, `eq`, `hash`, `ord`, `str`, `frozen`, `child_slots = <count>`, `type_attr(name = <literal>, ..)`, `external`, `opaque`, `crate = \"path\"`";
const FIELD_OPTIONS: &str = "`base`, `skip`, `rw`, `name = \"..\"`, `default = <expr>`, `default_factory = <path>`, `kw_only`, `init = false`, `repr = false`, `compare = false`, `hash = false`, `structural = \"ignore\"|\"def\"`, `metadata(key = <literal>, ..)`";

/// The options of `#[ffi_type(..)]`.
pub struct TypeAttrs {
    pub krate: Attr<TokenStream>,
    pub key: Attr<syn::LitStr>,
    pub is_final: Attr<()>,
    pub external: Attr<()>,
    /// `opaque` (with `external`): a typed handle whose own fields are not declared.
    pub opaque: Attr<Span>,
    /// The `structural` kind, as the name of a constant of the runtime's `structural` module.
    pub structural: Attr<syn::Ident>,
    /// `init = false`: no constructor (`__ffi_init__`), the creator stays.
    pub init_off: Attr<bool>,
    /// `creator = false`: no creator, so no `__ffi_new__` and no reflection constructor.
    pub creator_off: Attr<bool>,
    /// `convert`: register `__ffi_convert__` (casting any value to the type).
    pub convert: Attr<()>,
    /// `type_attr(name = literal, ..)`: constant type attributes.
    pub type_attrs: Attr<Vec<(String, syn::Lit)>>,
    /// `eq`, `hash`, `ord`, `str`: hooks from the payload's traits; spans are the options'.
    pub eq: Attr<Span>,
    pub hash: Attr<Span>,
    pub ord: Attr<Span>,
    pub str: Attr<Span>,
    /// `frozen`: no field is writable.
    pub frozen: Attr<Span>,
    /// `child_slots = N`: type indices reserved for subtypes.
    pub child_slots: Attr<syn::LitInt>,
}

/// A field's `default = <expr>` or `default_factory = <path>`.
pub enum DefaultValue {
    Expr(syn::Expr),
    Factory(syn::Path),
}

/// The options of a field's `#[ffi(..)]` attributes; spans are the option names'.
pub struct FieldAttrs {
    pub base: Attr<Span>,
    pub skip: Attr<Span>,
    pub rw: Attr<Span>,
    pub name: Attr<syn::LitStr>,
    pub default: Attr<(Span, syn::Expr)>,
    pub default_factory: Attr<(Span, syn::Path)>,
    pub kw_only: Attr<()>,
    /// `init = false`, `repr = false`, ...: `true` when switched off.
    pub init_off: Attr<bool>,
    pub repr_off: Attr<bool>,
    pub compare_off: Attr<bool>,
    pub hash_off: Attr<bool>,
    /// `structural = "ignore"|"def"`: the flag constant it sets.
    pub structural: Attr<&'static str>,
    pub metadata: Attr<Vec<(String, syn::Lit)>>,
    /// The first option other than `base` and `skip`, for "takes no other options" errors.
    pub first_reflection_option: Option<Span>,
}

impl FieldAttrs {
    fn new() -> Self {
        FieldAttrs {
            base: Attr::none("base"),
            skip: Attr::none("skip"),
            rw: Attr::none("rw"),
            name: Attr::none("name"),
            default: Attr::none("default"),
            default_factory: Attr::none("default_factory"),
            kw_only: Attr::none("kw_only"),
            init_off: Attr::none("init"),
            repr_off: Attr::none("repr"),
            compare_off: Attr::none("compare"),
            hash_off: Attr::none("hash"),
            structural: Attr::none("structural"),
            metadata: Attr::none("metadata"),
            first_reflection_option: None,
        }
    }

    /// The chosen default, if any (`default` wins over `default_factory` when both are
    /// given, which is reported by the checks).
    pub fn default_value(&self) -> Option<DefaultValue> {
        match (self.default.get(), self.default_factory.get()) {
            (Some((_, expr)), _) => Some(DefaultValue::Expr(expr.clone())),
            (None, Some((_, path))) => Some(DefaultValue::Factory(path.clone())),
            (None, None) => None,
        }
    }
}

/// Parses every `#[ffi_type(..)]` of the struct (one, with a `key`, is expected).
pub fn type_attrs(item: &syn::DeriveInput, cx: &Ctxt) -> TypeAttrs {
    let attrs = &item.attrs;
    let mut is_final = Attr::none("final");
    let mut external = Attr::none("external");
    let mut opaque = Attr::none("opaque");
    let mut structural = Attr::none("structural");
    let mut init_off = Attr::none("init");
    let mut creator_off = Attr::none("creator");
    let mut convert = Attr::none("convert");
    let mut type_attrs = Attr::none("type_attr");
    let mut eq = Attr::none("eq");
    let mut hash = Attr::none("hash");
    let mut ord = Attr::none("ord");
    let mut str = Attr::none("str");
    let mut frozen = Attr::none("frozen");
    let mut child_slots = Attr::none("child_slots");
    let common = attr::ffi_type_options(attrs, "my_ext.Point", cx, |meta, cx| {
        if meta.path.is_ident("final") {
            attr::flag(meta, "final", cx)?;
            is_final.set(meta, (), cx);
        } else if meta.path.is_ident("external") {
            attr::flag(meta, "external", cx)?;
            external.set(meta, (), cx);
        } else if meta.path.is_ident("opaque") {
            attr::flag(meta, "opaque", cx)?;
            opaque.set(meta, meta.path.span(), cx);
        } else if meta.path.is_ident("structural") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            let kind = match lit.value().as_str() {
                "tree" => "TREE",
                "dag" => "DAG",
                "const-tree" => "CONST_TREE",
                "free-var" => "FREE_VAR",
                "unique" => "UNIQUE",
                other => {
                    cx.error(&lit, format!("unknown structural kind `{other}`; use \"tree\", \"dag\", \"const-tree\", \"free-var\" or \"unique\""));
                    "UNSUPPORTED"
                }
            };
            structural.set(meta, syn::Ident::new(kind, lit.span()), cx);
        } else if meta.path.is_ident("init") {
            let off = attr::off(meta, "init")?;
            init_off.set(meta, off, cx);
        } else if meta.path.is_ident("creator") {
            let off = attr::off(meta, "creator")?;
            creator_off.set(meta, off, cx);
        } else if meta.path.is_ident("convert") {
            attr::flag(meta, "convert", cx)?;
            convert.set(meta, (), cx);
        } else if meta.path.is_ident("child_slots") {
            let count: syn::LitInt = meta.value()?.parse()?;
            child_slots.set(meta, count, cx);
        } else if meta.path.is_ident("type_attr") {
            let entries = attr::literal_list(meta, "type_attr", cx)?;
            type_attrs.set(meta, entries, cx);
        } else if let Some((name, option)) = [
            ("eq", &mut eq),
            ("hash", &mut hash),
            ("ord", &mut ord),
            ("str", &mut str),
            ("frozen", &mut frozen),
        ]
        .into_iter()
        .find(|(name, _)| meta.path.is_ident(name))
        {
            attr::flag(meta, name, cx)?;
            option.set(meta, meta.path.span(), cx);
        } else {
            attr::unknown(meta, "#[ffi_type]", TYPE_OPTIONS, cx)?;
        }
        Ok(())
    });
    if !common.present {
        cx.error(
            &item.ident,
            "#[derive(Object)] needs the type key: add `#[ffi_type(key = \"my_ext.Name\")]`",
        );
    } else if !common.key.is_written() {
        cx.error(
            &item.ident,
            "#[ffi_type] needs `key = \"my_ext.Name\"`: the type's registry key",
        );
    }
    TypeAttrs {
        krate: common.krate,
        key: common.key,
        is_final,
        external,
        opaque,
        structural,
        init_off,
        creator_off,
        convert,
        type_attrs,
        eq,
        hash,
        ord,
        str,
        frozen,
        child_slots,
    }
}

/// Parses a field's `#[ffi(..)]` attributes (any number of them; options may not repeat).
pub fn field_attrs(field: &syn::Field, cx: &Ctxt) -> FieldAttrs {
    let mut out = FieldAttrs::new();
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            if meta.path.is_ident("base") {
                out.base.set(&meta, span, cx);
                return Ok(());
            }
            if meta.path.is_ident("skip") {
                out.skip.set(&meta, span, cx);
                return Ok(());
            }
            out.first_reflection_option.get_or_insert(span);
            if meta.path.is_ident("rw") {
                out.rw.set(&meta, span, cx);
            } else if meta.path.is_ident("name") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                if syn::parse_str::<syn::Ident>(&lit.value()).is_err() {
                    cx.error(&lit, format!("invalid field name `{}`: use an identifier", lit.value()));
                }
                out.name.set(&meta, lit, cx);
            } else if meta.path.is_ident("default") {
                let expr: syn::Expr = meta.value()?.parse()?;
                out.default.set(&meta, (span, expr), cx);
            } else if meta.path.is_ident("default_factory") {
                let factory: syn::Path = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(e.span(), "`default_factory` takes a function path: `default_factory = make_label`")
                })?;
                out.default_factory.set(&meta, (span, factory), cx);
            } else if meta.path.is_ident("kw_only") {
                out.kw_only.set(&meta, (), cx);
            } else if meta.path.is_ident("init") {
                let off = attr::off(&meta, "init")?;
                out.init_off.set(&meta, off, cx);
            } else if meta.path.is_ident("repr") {
                let off = attr::off(&meta, "repr")?;
                out.repr_off.set(&meta, off, cx);
            } else if meta.path.is_ident("compare") {
                let off = attr::off(&meta, "compare")?;
                out.compare_off.set(&meta, off, cx);
            } else if meta.path.is_ident("hash") {
                let off = attr::off(&meta, "hash")?;
                out.hash_off.set(&meta, off, cx);
            } else if meta.path.is_ident("structural") {
                let lit: syn::LitStr = meta.value()?.parse()?;
                let flag = match lit.value().as_str() {
                    "ignore" => "kTVMFFIFieldFlagBitMaskSEqHashIgnore",
                    "def-simple" => "kTVMFFIFieldFlagBitMaskSEqHashDefSimple",
                    // `def` is C++'s historical `SEqHashDef` bit, now the pattern region.
                    "def-pattern" | "def" => "kTVMFFIFieldFlagBitMaskSEqHashDefPattern",
                    other => {
                        cx.error(&lit, format!("unknown structural field flag `{other}`; use \"ignore\", \"def-simple\" (the field defines a variable) or \"def-pattern\" (the field's value and type are matched as a pattern)"));
                        return Ok(());
                    }
                };
                out.structural.set(&meta, flag, cx);
            } else if meta.path.is_ident("metadata") {
                let entries = attr::literal_list(&meta, "metadata", cx)?;
                out.metadata.set(&meta, entries, cx);
            } else {
                attr::unknown(&meta, "#[ffi] field", FIELD_OPTIONS, cx)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}
