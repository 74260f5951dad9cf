//! Rust declarations of Apache TVM's IR (`ir.*`, `prim.*`, `tirx.*`, `relax.*` and the types they
//! reach), generated from the runtime's reflection by
//! `python -m tvm_ffi_build.rust_mirror` (`generated.rs`, with its coverage report
//! `../coverage.md`, both kept current by `tests/python/test_tvm_bindings.py`), and functions
//! that read real TVM nodes through them. Loaded from Python after `import tvm` (which registers
//! the types): the SDK checks every declaration against the runtime's reflection when this
//! library loads.
#![deny(unsafe_code)]
// The generated declarations carry the one `unsafe impl` each that an `external` type needs.
#[allow(unsafe_code)]
pub mod generated;

use generated::{Add, Expr, For, IntImm, Op, PrimFunc, Ramp, SeqStmt, Stmt, Var};
use tvm_ffi::{ffi_func, Any, Array, Map, ObjectRef, Result, String};

/// The load errors of this library (none when every generated declaration matched).
#[ffi_func(name = "tvm_bindings.load_errors")]
pub fn load_errors() -> Array<String> {
    Array::new(
        tvm_ffi::registry::load_errors()
            .into_iter()
            .map(|e| String::from(e.as_str())),
    )
    .expect("a small array")
}

/// `[loop_var, loop_var.name, min, extent, kind, step, body]` of a `tirx.For`: required fields
/// as values, the C++ `Optional` `step` as an `Option` (`None` when unset).
#[ffi_func(name = "tvm_bindings.read_for")]
pub fn read_for(node: ObjectRef<For>) -> Result<Array<Any>> {
    Array::new([
        Any::new(node.loop_var()),
        Any::new(node.loop_var().name()),
        Any::new(node.min()),
        Any::new(node.extent()),
        Any::new(i64::from(node.kind())),
        Any::new(node.step()),
        Any::new(node.body()),
    ])
}

/// The value of an integer constant, `None` for another expression.
fn int_value(expr: &ObjectRef<Expr>) -> Option<i64> {
    expr.downcast::<IntImm>()
        .and_then(|imm| imm.value().to_i64())
}

/// `[name of each parameter, the extents of the `tirx.For` loops of the body, outermost first
/// (through `tirx.SeqStmt`s), the body's type key]` of a `tirx.PrimFunc`.
#[ffi_func(name = "tvm_bindings.read_prim_func")]
pub fn read_prim_func(func: ObjectRef<PrimFunc>) -> Result<Array<Any>> {
    let params = Array::new(func.params().iter().map(|p| p.name()))?;
    let mut extents = Vec::new();
    let mut pending: Vec<ObjectRef<Stmt>> = vec![func.body()];
    while let Some(stmt) = pending.pop() {
        if let Some(loop_) = stmt.downcast::<For>() {
            extents.push(int_value(&loop_.extent()).unwrap_or(-1));
            pending.push(loop_.body());
        } else if let Some(seq) = stmt.downcast::<SeqStmt>() {
            pending.extend(seq.seq().iter().rev());
        }
    }
    Array::new([
        Any::new(params),
        Any::new(Array::new(extents)?),
        Any::new(String::from(func.body().type_key())),
    ])
}

/// `[base, stride, lanes]` of a `prim.Ramp` (whose C++ field `base` sits beside the generated
/// parent field, `base_`), each an integer constant's value or -1.
#[ffi_func(name = "tvm_bindings.read_ramp")]
pub fn read_ramp(ramp: ObjectRef<Ramp>) -> Result<Array<i64>> {
    let _parent: &Expr = &ramp.base_;
    Array::new([ramp.base(), ramp.stride(), ramp.lanes()].map(|e| int_value(&e).unwrap_or(-1)))
}

/// `[a, b]` of a `prim.Add`'s operands as integer constants (-1 for another expression).
#[ffi_func(name = "tvm_bindings.read_add")]
pub fn read_add(add: ObjectRef<Add>) -> Result<Array<i64>> {
    Array::new([add.a(), add.b()].map(|e| int_value(&e).unwrap_or(-1)))
}

/// The type key of an opaque `ir.Op`, read through its typed handle, its parent's field
/// (`ir.Expr.span` is `None` for a registered operator, read in place) and its own `name`
/// (read through the getter C++ registered).
#[ffi_func(name = "tvm_bindings.op_handle")]
pub fn op_handle(op: ObjectRef<Op>) -> Result<Array<Any>> {
    Array::new([
        Any::new(String::from(op.type_key())),
        Any::new(op.base.span()),
        Any::new(Op::name(&op)?),
    ])
}

/// A `tirx.For` allocated by Rust from its fields (`For::from_fields`): no span, no thread
/// binding, no annotations.
#[ffi_func(name = "tvm_bindings.make_for")]
pub fn make_for(
    loop_var: ObjectRef<Var>,
    min: ObjectRef<Expr>,
    extent: ObjectRef<Expr>,
    kind: i32,
    body: ObjectRef<Stmt>,
    step: Option<ObjectRef<Expr>>,
) -> Result<ObjectRef<For>> {
    let annotations = Map::new([])?;
    Ok(For::from_fields(
        None,
        loop_var,
        min,
        extent,
        kind,
        body,
        None,
        annotations,
        step,
    ))
}

/// A copy of a `prim.Add` allocated by Rust from the fields of the original.
#[ffi_func(name = "tvm_bindings.copy_add")]
pub fn copy_add(add: ObjectRef<Add>) -> ObjectRef<Add> {
    Add::from_fields(add.base.span(), add.base.ty(), add.a(), add.b())
}

/// Rebuilds a statement bottom-up in Rust: every `tirx.For` and `tirx.SeqStmt` is allocated
/// anew (`from_fields`, every field carried over), the other statements are kept.
fn rebuild(stmt: ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
    if let Some(loop_) = stmt.downcast::<For>() {
        let node = For::from_fields(
            loop_.base.span(),
            loop_.loop_var(),
            loop_.min(),
            loop_.extent(),
            loop_.kind(),
            rebuild(loop_.body())?,
            loop_.thread_binding(),
            loop_.annotations(),
            loop_.step(),
        );
        return Ok(node.upcast());
    }
    if let Some(seq) = stmt.downcast::<SeqStmt>() {
        let items = Array::new(seq.seq().iter().map(rebuild).collect::<Result<Vec<_>>>()?)?;
        return Ok(SeqStmt::from_fields(seq.base.span(), items).upcast());
    }
    Ok(stmt)
}

/// A `tirx.PrimFunc` whose loop nest is rebuilt by Rust (`rebuild`), the function itself
/// allocated by Rust from the original's fields.
#[ffi_func(name = "tvm_bindings.rebuild_prim_func")]
pub fn rebuild_prim_func(func: ObjectRef<PrimFunc>) -> Result<ObjectRef<PrimFunc>> {
    let base_func = &func.base;
    Ok(PrimFunc::from_fields(
        base_func.base.span(),
        base_func.base.ty(),
        base_func.attrs(),
        func.params(),
        func.ret_type(),
        rebuild(func.body())?,
    ))
}
