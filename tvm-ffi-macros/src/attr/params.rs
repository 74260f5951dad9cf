//! Attribute parsing of a parameter's `#[ffi(default = <literal>)]` (on `#[ffi_func]` and
//! `#[ffi_methods]` parameters), and the parameter's registered name.
use proc_macro2::Span;
use syn::spanned::Spanned;

use crate::attr::Attr;
use crate::ctxt::Ctxt;

const DEFAULT_FORMS: &str = "an integer, a float, `true`/`false`, a string, `None` (for an `Option<T>` parameter), or an enum's variant (`DType::Int64`)";

/// A default value, checked against the parameter's type by the generated code.
#[derive(Clone)]
pub enum DefaultLit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A variant of the parameter's enum: `Shade::Dark`.
    Variant(syn::Path),
}

/// A parameter's default, spanned at its value.
#[derive(Clone)]
pub struct DefaultArg {
    pub span: Span,
    pub value: DefaultLit,
}

/// One parameter's registered name and options.
pub struct ParamAttrs {
    /// The name Python and C++ see (the binding's identifier; `_<index>` for a pattern).
    pub name: String,
    /// The name's span (the pattern).
    pub span: Span,
    /// `#[ffi(default = ..)]`.
    pub default: Attr<DefaultArg>,
    /// The `#[ffi(..)]` attribute, for errors about the option itself.
    pub attr: Option<syn::Attribute>,
}

/// The options of `pat`'s `#[ffi(..)]` attributes; `index` names a parameter bound by a
/// pattern other than an identifier.
pub fn param_attrs(pat: &syn::PatType, index: usize, cx: &Ctxt) -> ParamAttrs {
    let name = match &*pat.pat {
        syn::Pat::Ident(p) => p.ident.unraw_name(),
        _ => format!("_{index}"),
    };
    let mut out = ParamAttrs {
        name,
        span: pat.pat.span(),
        default: Attr::none("default"),
        attr: None,
    };
    for attr in pat.attrs.iter().filter(|a| a.path().is_ident("ffi")) {
        out.attr.get_or_insert_with(|| attr.clone());
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("default") {
                if !meta.input.peek(syn::Token![=]) {
                    return Err(meta.error(format!(
                        "`default` takes the value: `#[ffi(default = 1)]`, `#[ffi(default = None)]`; one of {DEFAULT_FORMS}"
                    )));
                }
                let expr: syn::Expr = meta.value()?.parse()?;
                match default_lit(&expr) {
                    Some(Ok(value)) => out.default.set(
                        &meta,
                        DefaultArg {
                            span: expr.span(),
                            value,
                        },
                        cx,
                    ),
                    Some(Err(why)) => cx.error(&expr, why),
                    None => cx.error(
                        &expr,
                        format!("`default` takes a literal: {DEFAULT_FORMS}; compute other values in the function from an `Option<T>` parameter"),
                    ),
                }
            } else {
                crate::attr::unknown(&meta, "#[ffi] parameter", "`default = <literal>`", cx)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.push(err);
        }
    }
    out
}

/// The literal `expr` as a default, `None` if it is not one, an error if it is out of range.
fn default_lit(expr: &syn::Expr) -> Option<Result<DefaultLit, String>> {
    let (negative, lit) = match expr {
        syn::Expr::Lit(l) => (false, &l.lit),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
            syn::Expr::Lit(l) => (true, &l.lit),
            _ => return None,
        },
        syn::Expr::Path(p) if p.path.is_ident("None") => return Some(Ok(DefaultLit::None)),
        syn::Expr::Path(p) if p.qself.is_none() && p.path.segments.len() > 1 => {
            return Some(Ok(DefaultLit::Variant(p.path.clone())))
        }
        syn::Expr::Group(g) => return default_lit(&g.expr),
        _ => return None,
    };
    Some(Ok(match lit {
        syn::Lit::Int(v) => {
            let Ok(value) = v.base10_parse::<i128>() else {
                return Some(Err("integer default too large".into()));
            };
            let value = if negative { -value } else { value };
            match i64::try_from(value) {
                Ok(value) => DefaultLit::Int(value),
                Err(_) => {
                    return Some(Err(format!(
                        "integer default `{value}` does not fit in an i64, the integer type arguments travel as"
                    )))
                }
            }
        }
        syn::Lit::Float(v) => {
            let value = v.base10_parse::<f64>().ok()?;
            DefaultLit::Float(if negative { -value } else { value })
        }
        syn::Lit::Bool(v) if !negative => DefaultLit::Bool(v.value),
        syn::Lit::Str(v) if !negative => DefaultLit::Str(v.value()),
        _ => return None,
    }))
}

trait UnrawName {
    fn unraw_name(&self) -> String;
}

impl UnrawName for syn::Ident {
    fn unraw_name(&self) -> String {
        let name = self.to_string();
        name.strip_prefix("r#").map(str::to_string).unwrap_or(name)
    }
}

/// The options of every typed parameter of `sig` (receivers excluded), in order.
pub fn fn_params(sig: &syn::Signature, cx: &Ctxt) -> Vec<ParamAttrs> {
    sig.inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(pat) => Some(pat),
            syn::FnArg::Receiver(_) => None,
        })
        .enumerate()
        .map(|(i, pat)| param_attrs(pat, i, cx))
        .collect()
}

/// Removes the `#[ffi(..)]` attributes of `sig`'s parameters (read by the macro, unknown to
/// the compiler).
pub fn strip(sig: &mut syn::Signature) {
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(pat) = input {
            pat.attrs.retain(|a| !a.path().is_ident("ffi"));
        }
    }
}
