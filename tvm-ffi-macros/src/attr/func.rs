//! Attribute parsing of `#[ffi_func(..)]`: `name`, `export`, `crate`, and the form of their
//! values (a global name, a C identifier for the export).
use proc_macro2::TokenStream;
use syn::parse::Parser;

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

const OPTIONS: &str = "`name = \"pkg.func\"`, `export = \"c_identifier\"`, `metadata(key = <literal>, ..)`, `crate = \"path\"`";

pub struct FuncAttrs {
    pub krate: Attr<TokenStream>,
    /// Global name, if registered globally.
    pub name: Attr<syn::LitStr>,
    /// Export name, if exported as a module symbol.
    pub export: Attr<syn::LitStr>,
    /// User metadata keys.
    pub metadata: Attr<Vec<(String, syn::Lit)>>,
}

pub fn func_attrs(attr: TokenStream, cx: &Ctxt) -> FuncAttrs {
    let mut out = FuncAttrs {
        krate: Attr::none("crate"),
        name: Attr::none("name"),
        export: Attr::none("export"),
        metadata: Attr::none("metadata"),
    };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let path = attr::crate_path(&meta)?;
            out.krate.set(&meta, path, cx);
        } else if meta.path.is_ident("name") {
            out.name.mark_written();
            let lit = attr::string(
                &meta,
                "`name` takes a string literal, e.g. `name = \"my_ext.add\"`",
            )?;
            out.name.set(&meta, lit, cx);
        } else if meta.path.is_ident("export") {
            out.export.mark_written();
            let lit = attr::string(
                &meta,
                "`export` takes a string literal, e.g. `export = \"add_one\"`",
            )?;
            out.export.set(&meta, lit, cx);
        } else if meta.path.is_ident("metadata") {
            let entries = attr::literal_list(&meta, "metadata", cx)?;
            out.metadata.set(&meta, entries, cx);
        } else {
            attr::unknown(&meta, "#[ffi_func]", OPTIONS, cx)?;
        }
        Ok(())
    });
    if let Err(err) = parser.parse2(attr) {
        cx.push(err);
    }
    // A global name, a module export, or both.
    if !out.name.is_written() && !out.export.is_written() {
        cx.push(syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[ffi_func] needs a global name, a module export, or both: `#[ffi_func(name = \"my_ext.add\")]`, `#[ffi_func(export = \"add\")]`",
        ));
    }
    if let Some(lit) = out.name.get() {
        if !valid_global_name(&lit.value()) {
            cx.error(lit, format!("invalid global function name `{}`: use dot-separated identifiers such as `my_ext.add`", lit.value()));
        }
    }
    if let Some(lit) = out.export.get() {
        if let Err(why) = check_export_name(&lit.value()) {
            cx.error(lit, why);
        }
    }
    out
}

fn valid_global_name(name: &str) -> bool {
    !name.is_empty() && name.split('.').all(is_identifier)
}

fn is_identifier(part: &str) -> bool {
    let mut chars = part.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An export name becomes part of C symbol names (`__tvm_ffi_<name>`), so it must be a C
/// identifier. A leading underscore is refused as well: `__tvm_ffi__<rest>` is the runtime's
/// namespace for the metadata and doc symbols of other exports (`__tvm_ffi__metadata_f`,
/// `__tvm_ffi__doc_f`) and for `__tvm_ffi__library_ctx`, so such a name could collide with them.
fn check_export_name(name: &str) -> Result<(), String> {
    if !is_identifier(name) {
        Err(format!("invalid export name `{name}`: the symbol is `__tvm_ffi_<name>`, so use a C identifier such as `add_one` (letters, digits, `_`; no dots)"))
    } else if name.starts_with('_') {
        Err(format!("invalid export name `{name}`: it must not start with `_`, since `__tvm_ffi__*` symbols are reserved for export metadata and docs (`__tvm_ffi__metadata_<name>`, `__tvm_ffi__doc_<name>`)"))
    } else {
        Ok(())
    }
}
