//! Apache TVM passes written in Rust, over the generated declarations of TVM's IR.
//!
//! Loaded with `tvm_ffi.load_module` into a process that imported `tvm`, this library registers
//! `tvm_passes.RemoveNoOp()`, `tvm_passes.ConvertSSA()` and
//! `tvm_passes.DeadCodeElimination(entry_functions=None)`: factories with the parameters of
//! TVM's own `tvm.tirx.transform.RemoveNoOp()`, `ConvertSSA()` and
//! `tvm.relax.transform.DeadCodeElimination()` that return real `tvm.transform.Pass`es (made by
//! TVM's `tirx.transform.CreatePrimFuncPass` and `transform.MakeModulePass`, with a Rust
//! `Function` as the pass function). The passes reimplement C++'s `NoOpRemover`,
//! `IRConvertSSA` and Relax's `DeadCodeElimination` in Rust; `RemoveNoOp` asks TVM's
//! arithmetic analyzer (`sym.Analyzer*`) what it cannot decide itself, `DeadCodeElimination`
//! asks an operator's purity (`ir.OpGetAttr`), never the C++ pass. Tested against the C++
//! passes, input for input, by `tests/python/test_tvm_passes.py`; measured by
//! `benches/tvm_passes.py`.
#![deny(unsafe_code)]

// The declarations of TVM's IR: the one generated file of `tests/tvm-bindings` (kept current
// there by `tests/python/test_tvm_bindings.py`), compiled into this library as well rather than
// copied. They carry the one `unsafe impl` each that an `external` type needs.
#[allow(unsafe_code, dead_code)]
#[path = "../../../tests/tvm-bindings/src/generated.rs"]
pub mod ir;

mod analyzer;
mod convert_ssa;
mod dead_code_elimination;
mod expr;
mod fold;
mod remove_no_op;
mod seq;

use ir::{IRModule, PrimFunc, RemoveNoOpConfig};
use remove_no_op::{Config, NoOpRemover};
use tvm_ffi::{ffi_func, Any, Array, Function, Map, Moved, ObjectRef, Result, String};

/// The pass's configuration from the `PassContext` (`tirx.RemoveNoOp`), defaults otherwise.
fn remove_no_op_config(ctx: &Any) -> Config {
    let config = ctx
        .checked_cast::<ObjectRef<tvm_ffi::builtin::AnyObject>>()
        .and_then(|ctx| ctx.get_field::<Map<String, Any>>("config").ok())
        .and_then(|config| config.get(String::from("tirx.RemoveNoOp")))
        .and_then(|config| config.checked_cast::<ObjectRef<RemoveNoOpConfig>>());
    match config {
        Some(config) => Config {
            max_simplification_steps: config.max_simplification_steps(),
            ignore_profiler_call: config.ignore_profiler_call(),
        },
        None => Config::default(),
    }
}

/// A `tvm.transform.Pass` over each `PrimFunc` of a module, made by TVM's
/// `tirx.transform.CreatePrimFuncPass` from `pass_func` (`(func, module, ctx) -> func`).
pub fn prim_func_pass(pass_func: Function, opt_level: i32, name: &str) -> Result<Any> {
    let info = Function::get_global_required("transform.PassInfo")?.call((
        opt_level,
        String::from(name),
        Array::<String>::new([])?,
        false,
    ))?;
    Function::get_global_required("tirx.transform.CreatePrimFuncPass")?.call((pass_func, info))
}

/// `tvm.tirx.transform.RemoveNoOp()` in Rust: removes the statements that do nothing.
#[ffi_func(name = "tvm_passes.RemoveNoOp")]
pub fn remove_no_op_pass() -> Result<Any> {
    let pass_func = Function::from_typed(
        // TVM moves the function in (C++ `RValueRef`): this pass holds it.
        |func: Moved<ObjectRef<PrimFunc>>, _module: Any, ctx: Any| -> Result<ObjectRef<PrimFunc>> {
            let func = func.into_inner();
            let mut remover = NoOpRemover::new(remove_no_op_config(&ctx))?;
            let body = func.body();
            let new_body = remover.visit(&body)?;
            if new_body.ptr_eq(&body) {
                return Ok(func);
            }
            let base = &func.base;
            Ok(PrimFunc::from_fields(
                base.base.span(),
                base.base.ty(),
                base.attrs(),
                func.params(),
                func.ret_type(),
                new_body,
            ))
        },
    );
    prim_func_pass(pass_func, 0, "tirx.RemoveNoOp")
}

/// `tvm.tirx.transform.ConvertSSA()` in Rust: gives every variable defined more than once, in
/// a function or across the module's functions, a fresh variable per definition.
#[ffi_func(name = "tvm_passes.ConvertSSA")]
pub fn convert_ssa_pass() -> Result<Any> {
    let pass_func = Function::from_typed(
        |module: Moved<ObjectRef<tvm_ffi::builtin::AnyObject>>,
         _ctx: Any|
         -> Result<ObjectRef<tvm_ffi::builtin::AnyObject>> {
            let module = module.into_inner();
            let functions = module.get_field::<Map<Any, Any>>("functions")?;
            let mut converter = convert_ssa::ConvertSsa::new();
            let mut entries = Vec::new();
            let mut changed = false;
            for (gvar, func) in functions.iter() {
                match func.checked_cast::<ObjectRef<PrimFunc>>() {
                    Some(prim) => {
                        let new = converter.visit_prim_func(prim.clone())?;
                        changed |= !new.ptr_eq(&prim);
                        entries.push((gvar, Any::new(new)));
                    }
                    None => entries.push((gvar, func)),
                }
            }
            if !changed {
                return Ok(module);
            }
            module.copy_with([("functions", Any::new(Map::<Any, Any>::new(entries)?))])
        },
    );
    let info = Function::get_global_required("transform.PassInfo")?.call((
        0i32,
        String::from("tirx.ConvertSSA"),
        Array::<String>::new([])?,
        false,
    ))?;
    Function::get_global_required("transform.MakeModulePass")?.call((pass_func, info))
}

/// `tvm.relax.transform.DeadCodeElimination(entry_functions=None)` in Rust: removes the Relax
/// bindings nothing needs and the functions no entry function reaches (the named
/// `entry_functions`, every `ExternFunc` and every function with a `global_symbol`).
#[ffi_func(name = "tvm_passes.DeadCodeElimination")]
pub fn dead_code_elimination_pass(
    #[ffi(default = None)] entry_functions: Option<Array<String>>,
) -> Result<Any> {
    let entry_functions: Vec<String> = entry_functions
        .map(|names| names.to_vec())
        .unwrap_or_default();
    let pass_func = Function::from_typed(
        move |module: Moved<ObjectRef<IRModule>>, _ctx: Any| -> Result<ObjectRef<IRModule>> {
            dead_code_elimination::dead_code_elimination(module.into_inner(), &entry_functions)
        },
    );
    // C++: `CreateModulePass(pass_func, 1, "DeadCodeElimination", {})`.
    let info = Function::get_global_required("transform.PassInfo")?.call((
        1i32,
        String::from("DeadCodeElimination"),
        Array::<String>::new([])?,
        false,
    ))?;
    Function::get_global_required("transform.MakeModulePass")?.call((pass_func, info))
}
