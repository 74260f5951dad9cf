//! `#[ffi_func]`: parse → [`FuncModel`] → generated registration and exports.
//!
//! The expansion is deliberately thin: one `__invoke` function (the only per-signature code:
//! arity check, one conversion per argument, the call, the result conversion) and descriptors
//! and one-line `extern "C"` shims that hand `__invoke` to the runtime's generic helpers
//! (`Function::from_invoke` for the global, `tvm_ffi::export` for the module export). Both
//! entry points therefore share one argument/return implementation.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;

use crate::callable::Params;
use crate::diagnostics::{with_original, Diagnostics};

/// A validated `#[ffi_func]`.
struct FuncModel {
    /// Path of the runtime crate (`crate = "..."`, default `::tvm_ffi`).
    krate: TokenStream,
    /// Global name (`name = "..."`), if registered globally.
    name: Option<syn::LitStr>,
    /// Export name (`export = "..."`), if exported as a module symbol.
    export: Option<syn::LitStr>,
    doc: String,
    ident: syn::Ident,
    params: Params,
    ret: Option<syn::Type>,
}

const OPTIONS: &str = "`name = \"pkg.func\"`, `export = \"c_identifier\"`, `crate = \"path\"`";

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[ffi_func] applies to a free function: `fn name(args) -> R { ... }`",
            );
            return with_original(err, item);
        }
    };
    match build_model(attr, &func) {
        Ok(model) => {
            let generated = generate(&model);
            quote! { #func #generated }
        }
        Err(err) => with_original(err, item),
    }
}

/// Parses `key = "literal"` for a string-valued option, rejecting a second occurrence.
fn string_option(
    meta: &syn::meta::ParseNestedMeta<'_>,
    slot: &mut Option<syn::LitStr>,
    given: &mut bool,
    key: &str,
    example: &str,
) -> syn::Result<()> {
    let first = !*given;
    *given = true;
    let lit: syn::LitStr = meta.value()?.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` takes a string literal, e.g. `{key} = \"{example}\"`"),
        )
    })?;
    if !first {
        return Err(meta.error(format!("duplicate `{key}` option")));
    }
    *slot = Some(lit);
    Ok(())
}

fn build_model(attr: TokenStream, func: &syn::ItemFn) -> syn::Result<FuncModel> {
    let mut diag = Diagnostics::default();
    let mut name: Option<syn::LitStr> = None;
    let mut export: Option<syn::LitStr> = None;
    let (mut name_given, mut export_given) = (false, false);
    let mut krate = crate::crate_path::default_crate();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let lit: syn::LitStr = meta.value()?.parse()?;
            krate = crate::crate_path::parse(&lit)?;
            Ok(())
        } else if meta.path.is_ident("name") {
            string_option(&meta, &mut name, &mut name_given, "name", "my_ext.add")
        } else if meta.path.is_ident("export") {
            string_option(&meta, &mut export, &mut export_given, "export", "add_one")
        } else {
            let key = meta
                .path
                .get_ident()
                .map(|i| i.to_string())
                .unwrap_or_else(|| "?".into());
            Err(meta.error(format!(
                "unknown #[ffi_func] option `{key}`; valid options: {OPTIONS}"
            )))
        }
    });
    if let Err(err) = parser.parse2(attr) {
        diag.push(err);
    }
    if let Some(lit) = &name {
        let value = lit.value();
        if !valid_global_name(&value) {
            diag.error(lit, format!("invalid global function name `{value}`: use dot-separated identifiers such as `my_ext.add`"));
        }
    }
    if let Some(lit) = &export {
        if let Err(why) = check_export_name(&lit.value()) {
            diag.error(lit, why);
        }
    }
    if !name_given && !export_given {
        diag.push(syn::Error::new(
            Span::call_site(),
            "#[ffi_func] needs a global name, a module export, or both: `#[ffi_func(name = \"my_ext.add\")]`, `#[ffi_func(export = \"add\")]`",
        ));
    }
    let sig = &func.sig;
    crate::callable::check_signature(sig, "function", "write a wrapper per type", &mut diag);
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => diag.error(r, "#[ffi_func] is for free functions; use #[ffi_methods] on an impl block for methods"),
            syn::FnArg::Typed(pat) => params.push((*pat.ty).clone()),
        }
    }
    let params = match params.iter().position(crate::callable::is_packed_args) {
        Some(_) if params.len() == 1 => Params::Packed,
        Some(i) => {
            diag.error(&params[i], "`&[AnyView]` receives all the arguments of a packed (variadic) function, so it must be the only parameter; convert the others from it (`args[1].cast::<i64>()?`)");
            Params::Typed(params)
        }
        None => Params::Typed(params),
    };
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => Some((**ty).clone()),
    };
    diag.finish(FuncModel {
        krate,
        name,
        export,
        doc: crate::docs::collect(&func.attrs),
        ident: sig.ident.clone(),
        params,
        ret,
    })
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

fn generate(model: &FuncModel) -> TokenStream {
    let krate = &model.krate;
    let ident = &model.ident;
    let doc = &model.doc;
    let unit: syn::Type = syn::parse_quote!(());
    let ret = model.ret.as_ref().unwrap_or(&unit);
    let ret_desc = quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::DESC };
    let ret_convert =
        quote_spanned! {ret.span()=> <#ret as #krate::__private::FfiReturn>::into_ffi_result };

    // The per-function code (shared with #[ffi_methods]); everything else below is
    // descriptors and calls into the runtime.
    let call = match &model.params {
        Params::Typed(params) => {
            let args = crate::callable::arg_idents(params.len());
            quote!(#ident(#(#args),*))
        }
        Params::Packed => quote!(#ident(__args)),
    };
    let callable = crate::callable::generate(&crate::callable::Callable {
        krate: krate.clone(),
        params: match &model.params {
            Params::Typed(params) => Params::Typed(params.clone()),
            Params::Packed => Params::Packed,
        },
        call,
        ret_desc,
        convert: ret_convert,
    });

    let global = model.name.as_ref().map(|lit| {
        let name = lit.value();
        // One symbol per global name: registering a name twice in one crate is then a compile
        // error ("symbol `tvm_ffi_global_function.<name>` is already defined") at the second
        // name, instead of a load-time error. Not `__tvm_ffi_*`: that prefix is for exports.
        let claim_symbol = format!("tvm_ffi_global_function.{name}");
        // Spanned at the attribute (call site), not the user's literal: `unsafe_code` treats
        // `export_name` as unsafe, and a user's `#![forbid(unsafe_code)]` must still compile.
        let claim = quote! {
            #[export_name = #claim_symbol]
            #[used]
            static __GLOBAL_NAME_CLAIM: u8 = 0;
        };
        quote! {
            #claim
            static __GLOBAL: #krate::__private::FnSignature =
                __signature(::std::borrow::Cow::Borrowed(#name));
            fn __make() -> #krate::Function {
                #krate::__private::function_from_invoke(&__GLOBAL, __invoke)
            }
            #[#krate::__private::linkme::distributed_slice(#krate::__private::FUNCTIONS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __ENTRY: #krate::__private::FunctionEntry = #krate::__private::FunctionEntry {
                name: #name,
                doc: #doc,
                make: __make,
                metadata: __metadata,
            };
        }
    });

    let export = model.export.as_ref().map(|lit| {
        let name = lit.value();
        let span = lit.span();
        let call_symbol = format_ident!("__tvm_ffi_{}", name, span = span);
        let metadata_symbol = format_ident!("__tvm_ffi__metadata_{}", name, span = span);
        let doc_symbol = format_ident!("__tvm_ffi__doc_{}", name, span = span);
        let metadata_context = format!("__tvm_ffi__metadata_{name}");
        let doc_context = format!("__tvm_ffi__doc_{name}");
        // As C++ (TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC is opt-in), the doc symbol exists only for a
        // documented function, so `get_function_doc` returns None rather than "" otherwise.
        let doc_export = (!doc.is_empty()).then(|| {
            quote! {
                #[no_mangle]
                pub unsafe extern "C" fn #doc_symbol(
                    _self: *mut ::std::ffi::c_void,
                    _args: *const #krate::__private::sys::TVMFFIAny,
                    _num_args: i32,
                    result: *mut #krate::__private::sys::TVMFFIAny,
                ) -> i32 {
                    // SAFETY: called as a TVMFFISafeCallType, whose caller provides a writable
                    // result slot initialised to None.
                    unsafe { #krate::__private::export_string(#doc_context, result, || #doc) }
                }
            }
        });
        // Spanned at the attribute (call site) rather than the export literal: `unsafe_code`
        // treats `#[no_mangle]` as unsafe, and a user's `#![forbid(unsafe_code)]` must still
        // compile. A duplicate export ("symbol ... is already defined") points at the attribute.
        quote! {
            static __EXPORT: #krate::__private::FnSignature =
                __signature(::std::borrow::Cow::Borrowed(#name));
            #[no_mangle]
            pub unsafe extern "C" fn #call_symbol(
                _self: *mut ::std::ffi::c_void,
                args: *const #krate::__private::sys::TVMFFIAny,
                num_args: i32,
                result: *mut #krate::__private::sys::TVMFFIAny,
            ) -> i32 {
                // SAFETY: called as a TVMFFISafeCallType: `args` holds `num_args` borrowed values
                // alive during the call, `result` is a writable slot initialised to None.
                unsafe { #krate::__private::export_call(&__EXPORT, __invoke, args, num_args, result) }
            }
            #[no_mangle]
            pub unsafe extern "C" fn #metadata_symbol(
                _self: *mut ::std::ffi::c_void,
                _args: *const #krate::__private::sys::TVMFFIAny,
                _num_args: i32,
                result: *mut #krate::__private::sys::TVMFFIAny,
            ) -> i32 {
                // SAFETY: called as a TVMFFISafeCallType, whose caller provides a writable
                // result slot initialised to None.
                unsafe { #krate::__private::export_string(#metadata_context, result, __metadata) }
            }
            #doc_export
        }
    });

    quote! {
        const _: () = {
            #callable
            #global
            #export
        };
    }
}
