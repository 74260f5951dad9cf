//! The parse stage: one attribute parser per item kind (`object`, `methods`, `func`, `enums`,
//! `variant`, and `docs` for `///` comments), all built on this shared layer. Every macro
//! reads its options (`#[ffi_type(..)]`, `#[ffi(..)]`, `#[ffi_func(..)]`,
//! `#[ffi_methods(..)]`) through [`Attr`], which remembers the first value
//! and reports a repeated option as an error (as serde's `Attr::set` does), and through the
//! value parsers below, whose messages say what the option takes.
use syn::meta::ParseNestedMeta;

use crate::ctxt::Ctxt;

pub mod docs;
pub mod enums;
pub mod func;
pub mod hooks;
pub mod methods;
pub mod object;
pub mod params;
pub mod variant;

/// One option of an attribute: absent, or set once.
pub struct Attr<T> {
    name: &'static str,
    value: Option<T>,
    /// The option's name appeared, even if its value did not parse.
    written: bool,
}

impl<T> Attr<T> {
    /// An option named `name` (as the user writes it), not given yet.
    pub fn none(name: &'static str) -> Self {
        Attr {
            name,
            value: None,
            written: false,
        }
    }

    /// Notes that the option's name appeared, before its value is parsed: a malformed value
    /// is then reported once, not again as a missing option.
    pub fn mark_written(&mut self) {
        self.written = true;
    }

    /// Whether the option's name appeared (see [`Attr::mark_written`]).
    pub fn is_written(&self) -> bool {
        self.written || self.value.is_some()
    }

    /// Records the option just parsed by `meta`. A repeat is an error spanning the repeated
    /// option (its name and value); the first value stays.
    pub fn set(&mut self, meta: &ParseNestedMeta<'_>, value: T, cx: &Ctxt) {
        if self.value.is_some() {
            cx.push(meta.error(format!("duplicate `{}` option", self.name)));
        } else {
            self.value = Some(value);
        }
    }

    /// The value, if given.
    pub fn get(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// Whether the option was given.
    pub fn is_set(&self) -> bool {
        self.value.is_some()
    }

    /// The value, if given.
    pub fn into_inner(self) -> Option<T> {
        self.value
    }
}

/// `key = "literal"`; `message` says what the option takes when the value is not a string.
pub fn string(meta: &ParseNestedMeta<'_>, message: &str) -> syn::Result<syn::LitStr> {
    meta.value()?
        .parse()
        .map_err(|e: syn::Error| syn::Error::new(e.span(), message))
}

/// `key = false`, for options that switch something off: `Ok(true)` when the value is
/// `false`.
pub fn off(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<bool> {
    let lit: syn::LitBool = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` takes `false` (fields are included by default): `{key} = false`"),
        )
    })?;
    Ok(!lit.value)
}

/// A flag written alone (`final`); a value after it is reported and skipped.
pub fn flag(meta: &ParseNestedMeta<'_>, key: &str, cx: &Ctxt) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) || meta.input.peek(syn::token::Paren) {
        cx.push(meta.error(format!("`{key}` takes no value: write `{key}` alone")));
        skip_value(meta)?;
    }
    Ok(())
}

/// Reports an unknown option (listing the valid ones) and skips its value, so that parsing
/// goes on with the next option and every mistake is reported at once.
pub fn unknown(meta: &ParseNestedMeta<'_>, what: &str, valid: &str, cx: &Ctxt) -> syn::Result<()> {
    let name = meta
        .path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default();
    let hint = closest(&name, valid)
        .map(|option| format!("did you mean `{option}`? "))
        .unwrap_or_default();
    cx.push(meta.error(format!(
        "unknown {what} option `{name}`; {hint}valid options: {valid}"
    )));
    skip_value(meta)
}

/// The option of `valid` (a list of backquoted forms: `` `name = ".."`, `final` ``) nearest to
/// `name`, if it is near enough to be a typo (as rustc suggests names).
fn closest<'a>(name: &str, valid: &'a str) -> Option<&'a str> {
    let options = valid.split('`').skip(1).step_by(2).filter_map(|form| {
        let end = form
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(form.len());
        (end > 0).then(|| &form[..end])
    });
    options
        .map(|option| (edit_distance(name, option), option))
        .filter(|&(d, option)| d > 0 && d <= (option.len().max(name.len()) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, option)| option)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Skips `= <expr>` or `(..)` after an option name, if present.
pub fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

/// `crate = "path"` (see [`crate::crate_path`]).
pub fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<proc_macro2::TokenStream> {
    let lit: syn::LitStr = meta.value()?.parse()?;
    crate::crate_path::parse(&lit)
}

/// `name(key = <int, bool or string literal>, ..)`: metadata and constant attributes. The
/// reserved key `type_schema` and repeated keys are reported.
pub fn literal_list(
    meta: &ParseNestedMeta<'_>,
    what: &str,
    cx: &Ctxt,
) -> syn::Result<Vec<(String, syn::Lit)>> {
    let mut entries: Vec<(String, syn::Lit)> = Vec::new();
    meta.parse_nested_meta(|entry| {
        let key = entry
            .path
            .get_ident()
            .map(|i| i.to_string())
            .ok_or_else(|| entry.error(format!("{what} keys are identifiers")))?;
        let lit: syn::Lit = entry.value()?.parse()?;
        match &lit {
            syn::Lit::Int(_) | syn::Lit::Bool(_) | syn::Lit::Str(_) => {}
            _ => cx.error(
                &lit,
                format!("{what} values are integer, bool or string literals"),
            ),
        }
        if what == "metadata" && key == "type_schema" {
            cx.error(
                &entry.path,
                "`type_schema` is written by the SDK from the field's type; choose another key",
            );
        } else if what == "metadata" && (key == "arg_names" || key == "arg_defaults") {
            cx.error(
                &entry.path,
                format!("`{key}` is written by the SDK from the parameters (their names and `#[ffi(default = ..)]`); choose another key"),
            );
        } else if let Some(why) = (what == "type_attr")
            .then(|| reserved_type_attr(&key))
            .flatten()
        {
            cx.error(&entry.path, why);
        } else if entries.iter().any(|(k, _)| *k == key) {
            cx.error(&entry.path, format!("duplicate {what} key `{key}`"));
        }
        entries.push((key, lit));
        Ok(())
    })?;
    Ok(entries)
}

/// Why a user-named type attribute (`#[ffi(type_attr = "..")]` on a method,
/// `#[ffi_type(type_attr(..))]` on a type) may not take `name`, if it may not: the runtime's
/// hooks and the SDK's own attributes (`__ffi_new__`, `__ffi_init__`, `__ffi_shallow_copy__`,
/// `__ffi_convert__`, `__ffi_type_final__`, the layout and seal-check attributes) are called or
/// read by the runtime and the SDK, which trust what they find (a creator that returns a
/// smaller object makes the runtime write past its end).
pub fn reserved_type_attr(name: &str) -> Option<String> {
    if let Some(hook) = hooks::HOOKS.iter().find(|h| h.attr == name) {
        return Some(format!(
            "`{name}` is a runtime hook with a fixed signature: register it with `#[ffi({})]` on the method instead of `type_attr`",
            hook.option
        ));
    }
    (name.starts_with("__ffi") || name.starts_with("__tvm_ffi")).then(|| {
        format!(
            "`{name}` is reserved: names starting with `__ffi` or `__tvm_ffi` are the runtime's and the SDK's own type attributes (`__ffi_init__`, `__ffi_new__`, `__ffi_shallow_copy__`, ...), which they call and trust; choose another name (`#[ffi(init)]` declares the constructor)"
        )
    })
}

/// The options every `#[ffi_type(..)]` takes (`key`, `crate`); the item's own options are
/// handled by the caller.
pub struct TypeKeyOptions {
    /// Whether the item has an `#[ffi_type]` attribute at all.
    pub present: bool,
    pub krate: Attr<proc_macro2::TokenStream>,
    pub key: Attr<syn::LitStr>,
}

/// Parses the item's `#[ffi_type(..)]` (one is expected; a second is an error): `key` (checked
/// to be a type key like `example`) and `crate` here, every other option through `option`,
/// which returns `Ok(false)` for an option it does not know.
pub fn ffi_type_options(
    attrs: &[syn::Attribute],
    example: &str,
    cx: &Ctxt,
    mut option: impl FnMut(&ParseNestedMeta<'_>, &Ctxt) -> syn::Result<()>,
) -> TypeKeyOptions {
    let mut out = TypeKeyOptions {
        present: false,
        krate: Attr::none("crate"),
        key: Attr::none("key"),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("ffi_type")) {
        if out.present {
            cx.error(
                attr,
                "duplicate #[ffi_type]: merge the options into one attribute",
            );
        }
        out.present = true;
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("key") {
                out.key.mark_written();
                let lit = string(
                    &meta,
                    &format!("`key` takes a string literal: `key = \"{example}\"`"),
                )?;
                if !valid_type_key(&lit.value()) {
                    cx.error(
                        &lit,
                        format!(
                            "invalid type key `{}`: use dot-separated identifiers such as `{example}`",
                            lit.value()
                        ),
                    );
                }
                out.key.set(&meta, lit, cx);
                Ok(())
            } else if meta.path.is_ident("crate") {
                let path = crate_path(&meta)?;
                out.krate.set(&meta, path, cx);
                Ok(())
            } else {
                option(&meta, cx)
            }
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}

/// `pkg.Name`: dot-separated identifiers.
pub fn valid_type_key(key: &str) -> bool {
    !key.is_empty()
        && key.split('.').all(|part| {
            let mut chars = part.chars();
            matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
