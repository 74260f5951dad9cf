//! Checks of an `#[ffi_func]`: its signature can be called through the ABI, it is a free
//! function, and a packed parameter stands alone.
use crate::ast::func::FuncModel;
use crate::ast::Params;
use crate::ctxt::Ctxt;

pub fn check(model: &FuncModel, cx: &Ctxt) {
    // The signature rules shared with `#[ffi_methods]`.
    crate::check::signature(&model.sig, "function", "write a wrapper per type", cx);
    for input in &model.sig.inputs {
        if let syn::FnArg::Receiver(r) = input {
            cx.error(
                r,
                "#[ffi_func] is for free functions; use #[ffi_methods] on an impl block for methods",
            );
        }
    }
    match &model.params {
        Params::Typed(_) => crate::check::param_defaults(&model.names, cx),
        Params::Packed => {
            if let Some(attr) = model.names.iter().find_map(|p| p.attr.as_ref()) {
                cx.error(
                    attr,
                    "a packed function (`&[AnyView]`) receives its arguments as they come, so it has no parameters to give defaults; read `args.get(i)` and use a value when it is missing",
                );
            }
        }
    }
    // `&[AnyView]` is the packed form only as the sole parameter.
    if let Params::Typed(params) = &model.params {
        if let Some(packed) = params.iter().find(|ty| crate::ast::is_packed_args(ty)) {
            cx.error(packed, "`&[AnyView]` receives all the arguments of a packed (variadic) function, so it must be the only parameter; convert the others from it (`args[1].cast::<i64>()?`)");
        }
    }
}
