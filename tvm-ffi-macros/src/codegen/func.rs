//! Code generation for `#[ffi_func]`, deliberately thin: one `__tvm_ffi_invoke` function (the only
//! per-signature code: arity check, one conversion per argument, the call, the result
//! conversion, shared with `#[ffi_methods]` through `super::shared`) and descriptors and
//! one-line `extern "C"` shims that hand `__tvm_ffi_invoke` to the runtime's generic helpers (the
//! global's function object, the module export's trampoline). Both entry points therefore share
//! one argument/return implementation.
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::func::FuncModel;
use crate::ast::Params;
use crate::codegen::shared::{arg_idents, invoke_fn, param_descs, Callable};

pub fn generate(model: &FuncModel) -> TokenStream {
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
            let args = arg_idents(params.len());
            quote!(#ident(#(#args),*))
        }
        Params::Packed => quote!(#ident(__tvm_ffi_args)),
    };
    let callable = Callable {
        krate: krate.clone(),
        params: match &model.params {
            Params::Typed(params) => Params::Typed(params.clone()),
            Params::Packed => Params::Packed,
        },
        call,
        ret_desc,
        convert: ret_convert,
        convert_is_unsafe: false,
    };
    let invoke_fn = invoke_fn(&callable, &format_ident!("__tvm_ffi_invoke"));
    let params = param_descs(&callable);
    let ret_desc = &callable.ret_desc;
    let extra = crate::codegen::shared::metadata_values(krate, &model.metadata);
    let metadata = match &model.params {
        Params::Typed(_) => {
            quote!(__tvm_ffi_signature("").metadata_with(&[#(#extra),*]))
        }
        Params::Packed => quote!(#krate::__private::packed_metadata(&[#(#extra),*])),
    };
    let (names, default_checks) = match &model.params {
        Params::Typed(_) => crate::codegen::shared::param_names(krate, false, &model.names),
        Params::Packed => (quote!(&[]), quote!()),
    };
    let callable = quote! {
        #default_checks
        const __tvm_ffi_PARAMS: &[#krate::__private::TypeDesc] = #params;
        const __tvm_ffi_NAMES: &[#krate::__private::Param] = #names;
        const fn __tvm_ffi_signature(name: &'static str) -> #krate::__private::FnSignature {
            #krate::__private::FnSignature {
                owner: "",
                name: #krate::__private::std::borrow::Cow::Borrowed(name),
                params: #krate::__private::std::borrow::Cow::Borrowed(__tvm_ffi_PARAMS),
                ret: #ret_desc,
                names: __tvm_ffi_NAMES,
            }
        }
        #invoke_fn
        fn __tvm_ffi_metadata() -> #krate::__private::std::string::String {
            #metadata
        }
    };

    // A typed function's arguments are bound to its parameters by the runtime; a packed
    // function's are passed as they came.
    let (from_invoke, export_call) = match &model.params {
        Params::Typed(_) => (quote!(function_from_invoke), quote!(export_call)),
        Params::Packed => (
            quote!(function_from_packed_invoke),
            quote!(export_call_packed),
        ),
    };
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
            static __tvm_ffi_GLOBAL_NAME_CLAIM: u8 = 0;
        };
        quote! {
            #claim
            static __tvm_ffi_GLOBAL: #krate::__private::FnSignature =
                __tvm_ffi_signature(#name);
            fn __tvm_ffi_make() -> #krate::Function {
                // SAFETY: the signature is generated from this function's own Rust signature,
                // as is the invoke function; the result is registered under it.
                unsafe { #krate::__private::#from_invoke(&__tvm_ffi_GLOBAL, __tvm_ffi_invoke) }
            }
            #[#krate::__private::linkme::distributed_slice(#krate::__private::FUNCTIONS)]
            #[linkme(crate = #krate::__private::linkme)]
            static __tvm_ffi_ENTRY: #krate::__private::FunctionEntry = #krate::__private::FunctionEntry {
                name: #name,
                doc: #doc,
                make: __tvm_ffi_make,
                metadata: __tvm_ffi_metadata,
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
                    _self: *mut #krate::__private::std::ffi::c_void,
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
            static __tvm_ffi_EXPORT: #krate::__private::FnSignature =
                __tvm_ffi_signature(#name);
            #[no_mangle]
            pub unsafe extern "C" fn #call_symbol(
                _self: *mut #krate::__private::std::ffi::c_void,
                args: *const #krate::__private::sys::TVMFFIAny,
                num_args: i32,
                result: *mut #krate::__private::sys::TVMFFIAny,
            ) -> i32 {
                // SAFETY: called as a TVMFFISafeCallType: `args` holds `num_args` borrowed values
                // alive during the call, `result` is a writable slot initialised to None.
                unsafe { #krate::__private::#export_call(&__tvm_ffi_EXPORT, __tvm_ffi_invoke, args, num_args, result) }
            }
            #[no_mangle]
            pub unsafe extern "C" fn #metadata_symbol(
                _self: *mut #krate::__private::std::ffi::c_void,
                _args: *const #krate::__private::sys::TVMFFIAny,
                _num_args: i32,
                result: *mut #krate::__private::sys::TVMFFIAny,
            ) -> i32 {
                // SAFETY: called as a TVMFFISafeCallType, whose caller provides a writable
                // result slot initialised to None.
                unsafe { #krate::__private::export_string(#metadata_context, result, __tvm_ffi_metadata) }
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
