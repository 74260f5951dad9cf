//! C++ `SeqStmt::Flatten`, which every visit of a `SeqStmt` ends with in TVM's `StmtMutator`.

use crate::expr::{evaluate, int_imm, is_const};
use crate::ir::{Evaluate, SeqStmt, Stmt};
use tvm_ffi::{Array, DataType, ObjectRef, Result};

/// Nested sequences inlined, `Evaluate` of integer 0 dropped (C++ `SeqStmt::Flattener`).
pub fn flatten_into(out: &mut Vec<ObjectRef<Stmt>>, stmt: ObjectRef<Stmt>) {
    if let Some(seq) = stmt.downcast_ref::<SeqStmt>() {
        for item in seq.seq().iter() {
            flatten_into(out, item);
        }
        return;
    }
    if let Some(eval) = stmt.downcast_ref::<Evaluate>() {
        if is_const(&eval.value(), 0) {
            return;
        }
    }
    out.push(stmt);
}

/// The statement a visited sequence becomes: `Evaluate(0)` for none, the statement itself for
/// one, the original `stmt` where flattening the `visited` statements gives back its own,
/// a new `SeqStmt` otherwise.
pub fn flatten(
    stmt: &ObjectRef<Stmt>,
    seq: &SeqStmt,
    visited: Vec<ObjectRef<Stmt>>,
) -> Result<ObjectRef<Stmt>> {
    let mut flat = Vec::with_capacity(visited.len());
    for item in visited {
        flatten_into(&mut flat, item);
    }
    match flat.len() {
        0 => return Ok(evaluate(int_imm(DataType::INT32, 0))),
        1 => return Ok(flat.pop().expect("one statement")),
        _ => {}
    }
    let items = seq.seq();
    if flat.len() == items.len() && flat.iter().zip(items.iter()).all(|(a, b)| a.ptr_eq(&b)) {
        return Ok(stmt.clone());
    }
    Ok(SeqStmt::from_fields(seq.base.span(), Array::new(flat)?).upcast())
}
