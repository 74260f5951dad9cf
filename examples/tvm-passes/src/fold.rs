//! What C++'s `IRMutatorWithAnalyzer` does to the expressions it visits: an `if_then_else` call
//! or a `Select` whose condition is a literal constant becomes the value it selects
//! (`is_one`/`is_zero` of the visited condition), at any depth. Everything else is kept; a node
//! is rebuilt only when a sub-expression changed, and an expression with nothing to fold is
//! returned as the same object.

use crate::expr::expr_fields;
use crate::ir::{Broadcast, Call, Expr, FloatImm, IntImm, Let, Select, StringImm, TensorLoad, Var};
use tvm_ffi::object::ObjectType;
use tvm_ffi::{Any, Array, Function, ObjectRef, Result, String};

/// C++ `is_const_int(expr, value)`: an integer literal, or a broadcast of one.
fn is_literal(expr: &ObjectRef<Expr>, value: i64) -> bool {
    let imm = match expr.downcast_ref::<Broadcast>() {
        Some(broadcast) => broadcast.value.get(),
        None => Some(expr.clone()),
    };
    imm.as_ref()
        .and_then(|e| e.downcast_ref::<IntImm>())
        .and_then(|imm| imm.value().to_i64())
        == Some(value)
}

/// The branch a literal condition selects (`None`: the condition is not a literal).
fn select(
    condition: &ObjectRef<Expr>,
    true_value: &ObjectRef<Expr>,
    false_value: &ObjectRef<Expr>,
) -> Option<ObjectRef<Expr>> {
    if is_literal(condition, 0) {
        Some(false_value.clone())
    } else if is_literal(condition, 1) {
        Some(true_value.clone())
    } else {
        None
    }
}

/// Folds the literal conditionals of expressions.
pub struct Folder {
    /// The operator `if_then_else`.
    if_then_else: Option<ObjectRef<Expr>>,
}

impl Folder {
    pub fn new(get_op: &Function) -> Self {
        // `prim.if_then_else` in TVM 0.27 (`tirx.if_then_else` in later sources).
        let if_then_else = ["prim.if_then_else", "tirx.if_then_else"]
            .into_iter()
            .find_map(|name| {
                get_op
                    .call((String::from(name),))
                    .ok()
                    .and_then(|op| op.checked_cast::<ObjectRef<Expr>>())
            });
        Folder { if_then_else }
    }

    /// `expr` with its literal conditionals folded (the same object when there is none).
    pub fn fold(&self, expr: &ObjectRef<Expr>) -> Result<ObjectRef<Expr>> {
        let index = expr.type_index();
        if index == Var::type_index()
            || index == IntImm::type_index()
            || index == FloatImm::type_index()
            || index == StringImm::type_index()
        {
            return Ok(expr.clone());
        }
        if let Some(node) = expr.downcast_ref::<Select>() {
            let (c, t, f) = (node.condition(), node.true_value(), node.false_value());
            let (new_c, new_t, new_f) = (self.fold(&c)?, self.fold(&t)?, self.fold(&f)?);
            if let Some(chosen) = select(&new_c, &new_t, &new_f) {
                return Ok(chosen);
            }
            if new_c.ptr_eq(&c) && new_t.ptr_eq(&t) && new_f.ptr_eq(&f) {
                return Ok(expr.clone());
            }
            let base = &node.base;
            return Ok(Select::from_fields(base.span(), base.ty(), new_c, new_t, new_f).upcast());
        }
        if let Some(call) = expr.downcast_ref::<Call>() {
            let args = call.args();
            let new_args = self.fold_all(&args)?;
            let is_if_then_else = self
                .if_then_else
                .as_ref()
                .is_some_and(|op| op.ptr_eq(&call.op()));
            if is_if_then_else && new_args.len() == 3 {
                let arg = |i: usize| new_args.get(i).expect("three arguments");
                if let Some(chosen) = select(&arg(0), &arg(1), &arg(2)) {
                    return Ok(chosen);
                }
            }
            if new_args.as_object_ref().ptr_eq(args.as_object_ref()) {
                return Ok(expr.clone());
            }
            // Through reflection: `attrs` may be null, which `Call::from_fields` cannot take.
            return expr.copy_with([("args", Any::new(new_args))]);
        }
        if let Some(load) = expr.downcast_ref::<TensorLoad>() {
            let indices = load.indices();
            let new_indices = self.fold_all(&indices)?;
            if new_indices.as_object_ref().ptr_eq(indices.as_object_ref()) {
                return Ok(expr.clone());
            }
            let base = &load.base;
            let load = TensorLoad::from_fields(base.span(), base.ty(), load.source(), new_indices);
            return Ok(load.upcast());
        }
        if let Some(let_) = expr.downcast_ref::<Let>() {
            let (value, body) = (let_.value(), let_.body());
            let (new_value, new_body) = (self.fold(&value)?, self.fold(&body)?);
            if new_value.ptr_eq(&value) && new_body.ptr_eq(&body) {
                return Ok(expr.clone());
            }
            let base = &let_.base;
            let made = Let::from_fields(base.span(), base.ty(), let_.var(), new_value, new_body);
            return Ok(made.upcast());
        }
        let mut replacements = Vec::new();
        for &(name, is_array) in expr_fields(expr.type_key()) {
            if is_array {
                let items = expr.get_field::<Array<ObjectRef<Expr>>>(name)?;
                let new = self.fold_all(&items)?;
                if !new.as_object_ref().ptr_eq(items.as_object_ref()) {
                    replacements.push((name, Any::new(new)));
                }
            } else {
                let item = expr.get_field::<ObjectRef<Expr>>(name)?;
                let new = self.fold(&item)?;
                if !new.ptr_eq(&item) {
                    replacements.push((name, Any::new(new)));
                }
            }
        }
        if replacements.is_empty() {
            return Ok(expr.clone());
        }
        expr.copy_with(replacements)
    }

    /// Each item folded (the same array when none changed).
    pub fn fold_all(&self, items: &Array<ObjectRef<Expr>>) -> Result<Array<ObjectRef<Expr>>> {
        let mut out = Vec::with_capacity(items.len());
        let mut changed = false;
        for item in items.iter() {
            let new = self.fold(&item)?;
            changed |= !new.ptr_eq(&item);
            out.push(new);
        }
        if changed {
            Array::new(out)
        } else {
            Ok(items.clone())
        }
    }
}
