//! What the passes ask of an expression: its side effects (C++ `tirx::SideEffect`), whether it
//! reads a buffer, and the constants and nodes they build.

use crate::convert_ssa::key;
use crate::ir::{
    Call, Evaluate, Expr, FloatImm, IntImm, Op, PrimType, Stmt, StringImm, TensorLoad, Type, Var,
};
use std::collections::HashMap;
use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
use tvm_ffi::{Any, BigInt, DataType, Function, ObjectRef, Result, String};

/// C++ `CallEffectKind::kPure`.
pub const PURE: i64 = 1;
/// C++ `CallEffectKind::kReadState`.
pub const READ_STATE: i64 = 2;
/// C++ `CallEffectKind::kUpdateState` (and `kOpaque`).
pub const UPDATE_STATE: i64 = 3;

/// The value of an integer constant.
pub fn as_const_int(expr: &ObjectRef<Expr>) -> Option<i64> {
    expr.downcast_ref::<IntImm>()
        .and_then(|imm| imm.value().to_i64())
}

/// C++ `is_const_int(x, value)`.
pub fn is_const(expr: &ObjectRef<Expr>, value: i64) -> bool {
    as_const_int(expr) == Some(value)
}

/// C++ `is_no_op`: an `Evaluate` of an integer constant, or an empty `SeqStmt`.
pub fn is_no_op(stmt: &ObjectRef<Stmt>) -> bool {
    if let Some(eval) = stmt.downcast_ref::<Evaluate>() {
        return eval.value().is_instance::<IntImm>();
    }
    if let Some(seq) = stmt.downcast_ref::<crate::ir::SeqStmt>() {
        return seq.seq().is_empty();
    }
    false
}

/// Whether `expr` is a primitive (scalar or vector) expression.
pub fn is_prim(expr: &ObjectRef<Expr>) -> bool {
    expr.ty().is_some_and(|ty| ty.is_instance::<PrimType>())
}

/// Leaves that hold no call and no load: their side effect is `kPure`.
fn is_leaf(expr: &ObjectRef<Expr>) -> bool {
    expr.is_instance::<IntImm>()
        || expr.is_instance::<Var>()
        || expr.is_instance::<FloatImm>()
        || expr.is_instance::<StringImm>()
}

/// The side effects of expressions, with the effect kind of each operator cached.
pub struct Effects {
    op_get_attr: Function,
    kinds: HashMap<usize, i64>,
}

impl Effects {
    pub fn new() -> Result<Self> {
        Ok(Effects {
            op_get_attr: Function::get_global_required("ir.OpGetAttr")?,
            kinds: HashMap::new(),
        })
    }

    /// The `TCallEffectKind` of a call's callee (`kOpaque` for anything but an operator).
    fn call_kind(&mut self, callee: &ObjectRef<Expr>) -> Result<i64> {
        if !callee.is_instance::<Op>() {
            return Ok(UPDATE_STATE);
        }
        let key = callee.as_raw().as_ptr() as usize;
        if let Some(kind) = self.kinds.get(&key) {
            return Ok(*kind);
        }
        let attr = self
            .op_get_attr
            .call((callee.clone(), String::from("TCallEffectKind")))?;
        let kind = attr.checked_cast::<i64>().unwrap_or(UPDATE_STATE);
        self.kinds.insert(key, kind);
        Ok(kind)
    }

    /// C++ `SideEffect(expr)`: the strongest effect of its calls and loads (`kPure` for none).
    pub fn side_effect(&mut self, expr: &ObjectRef<Expr>) -> Result<i64> {
        if is_leaf(expr) {
            return Ok(PURE);
        }
        let mut kind = PURE;
        self.side_effect_into(expr, &mut kind)?;
        Ok(kind)
    }

    fn side_effect_into(&mut self, expr: &ObjectRef<Expr>, kind: &mut i64) -> Result<()> {
        if *kind >= UPDATE_STATE || is_leaf(expr) {
            return Ok(());
        }
        if let Some(call) = expr.downcast_ref::<Call>() {
            *kind = (*kind).max(self.call_kind(&call.op())?);
            for arg in call.args().iter() {
                self.side_effect_into(&arg, kind)?;
            }
            return Ok(());
        }
        if let Some(load) = expr.downcast_ref::<TensorLoad>() {
            *kind = (*kind).max(READ_STATE);
            for index in load.indices().iter() {
                self.side_effect_into(&index, kind)?;
            }
            return Ok(());
        }
        // Any other expression: its calls and loads (the others hold none), through TVM's own
        // traversal.
        for e in outermost(expr, |e| {
            e.is_instance::<Call>() || e.is_instance::<TensorLoad>()
        })? {
            self.side_effect_into(&e, kind)?;
        }
        Ok(())
    }
}

/// The outermost sub-expressions of `expr` (not `expr` itself) that `pick` takes, found by
/// TVM's own traversal of its fields; variables, operators and types are not entered.
pub fn outermost(
    expr: &ObjectRef<Expr>,
    pick: impl Fn(&ObjectRef<Expr>) -> bool,
) -> Result<Vec<ObjectRef<Expr>>> {
    let root = key(expr);
    let mut found = Vec::new();
    structural::walk(
        Any::new(expr.clone()),
        |value: &VisitValue| {
            if let Some(e) = value.as_object::<Expr>() {
                if key(e) == root {
                    return WalkResult::Advance;
                }
                if pick(e) {
                    found.push(e.clone());
                    return WalkResult::Skip;
                }
                if e.is_instance::<Var>() || e.is_instance::<Op>() {
                    return WalkResult::Skip;
                }
                return WalkResult::Advance;
            }
            if value.as_object::<Type>().is_some() {
                return WalkResult::Skip;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )?;
    Ok(found)
}

/// Whether `expr` loads from `buffer` anywhere.
pub fn loads_from(expr: &ObjectRef<Expr>, buffer: &ObjectRef<Var>) -> Result<bool> {
    if is_leaf(expr) {
        return Ok(false);
    }
    if let Some(load) = expr.downcast_ref::<TensorLoad>() {
        if load.source().ptr_eq(buffer) {
            return Ok(true);
        }
        for index in load.indices().iter() {
            if loads_from(&index, buffer)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if let Some(call) = expr.downcast_ref::<Call>() {
        for arg in call.args().iter() {
            if loads_from(&arg, buffer)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    for e in outermost(expr, |e| {
        e.is_instance::<Call>() || e.is_instance::<TensorLoad>()
    })? {
        if loads_from(&e, buffer)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A new integer constant `value` of type `dtype`.
pub fn int_imm(dtype: DataType, value: i64) -> ObjectRef<Expr> {
    let ty = PrimType::from_fields(None, dtype);
    IntImm::from_fields(None, Some(ty.upcast()), BigInt::from(value)).upcast()
}

/// The `DataType` of a primitive expression.
pub fn dtype_of(expr: &ObjectRef<Expr>) -> Option<DataType> {
    expr.ty()
        .and_then(|ty| ty.downcast::<PrimType>())
        .map(|ty| ty.dtype())
}

/// `Evaluate(value)`, allocated by Rust.
pub fn evaluate(value: ObjectRef<Expr>) -> ObjectRef<Stmt> {
    Evaluate::from_fields(None, value).upcast()
}

/// Fields of the expression types that hold expressions: `(name, is an array)`.
pub fn expr_fields(type_key: &str) -> &'static [(&'static str, bool)] {
    match type_key {
        "prim.Add" | "prim.Sub" | "prim.Mul" | "prim.Div" | "prim.Mod" | "prim.FloorDiv"
        | "prim.FloorMod" | "prim.Min" | "prim.Max" | "prim.EQ" | "prim.NE" | "prim.LT"
        | "prim.LE" | "prim.GT" | "prim.GE" | "prim.And" | "prim.Or" | "prim.BitwiseAnd"
        | "prim.BitwiseOr" | "prim.BitwiseXor" | "prim.LShift" | "prim.RShift" => {
            &[("a", false), ("b", false)]
        }
        "prim.Not" | "prim.BitwiseNot" => &[("a", false)],
        "prim.Select" => &[
            ("condition", false),
            ("true_value", false),
            ("false_value", false),
        ],
        "prim.Cast" => &[("value", false)],
        "prim.Ramp" => &[("base", false), ("stride", false), ("lanes", false)],
        "prim.Broadcast" => &[("value", false), ("lanes", false)],
        "prim.Shuffle" => &[("vectors", true), ("indices", true)],
        "ir.Call" => &[("args", true)],
        _ => &[],
    }
}
