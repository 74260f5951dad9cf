//! A small expression IR written in Rust: every node is a TVM-FFI object whose children are
//! required object fields, so Python and C++ build, print, compare, copy, pickle and serialize
//! it exactly as they would a C++ IR.
//!
//! - `Expr` is the (abstract) base; `Var` is a free variable, compared by binding
//!   (`structural = "free-var"`), `Const` an integer, `Add`/`Mul` binary nodes, and `Let` binds
//!   a variable (`structural = "def-simple"` on the field: `let x = 1 in x + x` and
//!   `let y = 1 in y + y` are structurally equal).
//! - `ir_example.eval` evaluates an expression with an environment of variable values, from
//!   Rust, walking the tree with downcasts.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{ffi_func, ffi_methods, IsA, Map, Object, ObjectRef, Result};

/// An expression (the base of every node).
#[derive(Object, Clone, Default)]
#[ffi_type(key = "ir_example.Expr", structural = "tree")]
#[repr(C)]
pub struct Expr {}

/// A variable: structurally equal to another variable where both are bound at the same place
/// (or with `map_free_vars`).
#[derive(Object, Clone)]
#[ffi_type(key = "ir_example.Var", final, structural = "free-var")]
#[repr(C)]
pub struct Var {
    #[ffi(base)]
    pub base: Expr,
    /// A name for printing; not part of the variable's identity.
    #[ffi(structural = "ignore")]
    pub name: tvm_ffi::String,
}

/// An integer constant.
#[derive(Object, Clone)]
#[ffi_type(key = "ir_example.Const", final, structural = "tree")]
#[repr(C)]
pub struct Const {
    #[ffi(base)]
    pub base: Expr,
    /// The value.
    pub value: i64,
}

/// `a + b`.
#[derive(Object, Clone)]
#[ffi_type(key = "ir_example.Add", final, structural = "tree")]
#[repr(C)]
pub struct Add {
    #[ffi(base)]
    pub base: Expr,
    /// Left operand.
    pub a: ObjectRef<Expr>,
    /// Right operand.
    pub b: ObjectRef<Expr>,
}

/// `a * b`.
#[derive(Object, Clone)]
#[ffi_type(key = "ir_example.Mul", final, structural = "tree")]
#[repr(C)]
pub struct Mul {
    #[ffi(base)]
    pub base: Expr,
    /// Left operand.
    pub a: ObjectRef<Expr>,
    /// Right operand.
    pub b: ObjectRef<Expr>,
}

/// `let var = value in body`.
#[derive(Object, Clone)]
#[ffi_type(key = "ir_example.Let", final, structural = "tree")]
#[repr(C)]
pub struct Let {
    #[ffi(base)]
    pub base: Expr,
    /// The variable bound in `body` (a definition: bound variables compare by position).
    #[ffi(structural = "def-simple")]
    pub var: ObjectRef<Var>,
    /// Its value.
    pub value: ObjectRef<Expr>,
    /// Where it is bound.
    pub body: ObjectRef<Expr>,
}

impl Var {
    /// A new variable.
    pub fn new(name: &str) -> ObjectRef<Var> {
        ObjectRef::new(Var {
            base: Expr {},
            name: name.into(),
        })
    }
}

impl Const {
    /// A new constant.
    pub fn new(value: i64) -> ObjectRef<Const> {
        ObjectRef::new(Const {
            base: Expr {},
            value,
        })
    }
}

/// `a + b` as an expression (operands of any expression type: `upcast` checks at compile time
/// that they are expressions).
pub fn add<A: IsA<Expr, I>, I, B: IsA<Expr, J>, J>(
    a: ObjectRef<A>,
    b: ObjectRef<B>,
) -> ObjectRef<Expr> {
    ObjectRef::new(Add {
        base: Expr {},
        a: a.upcast(),
        b: b.upcast(),
    })
    .upcast()
}

/// `a * b` as an expression.
pub fn mul<A: IsA<Expr, I>, I, B: IsA<Expr, J>, J>(
    a: ObjectRef<A>,
    b: ObjectRef<B>,
) -> ObjectRef<Expr> {
    ObjectRef::new(Mul {
        base: Expr {},
        a: a.upcast(),
        b: b.upcast(),
    })
    .upcast()
}

/// `let var = value in body` as an expression.
pub fn let_in<V: IsA<Expr, I>, I, B: IsA<Expr, J>, J>(
    var: ObjectRef<Var>,
    value: ObjectRef<V>,
    body: ObjectRef<B>,
) -> ObjectRef<Expr> {
    ObjectRef::new(Let {
        base: Expr {},
        var,
        value: value.upcast(),
        body: body.upcast(),
    })
    .upcast()
}

/// Evaluates `expr`, reading free variables from `env`.
pub fn evaluate(expr: &ObjectRef<Expr>, env: &[(ObjectRef<Var>, i64)]) -> Result<i64> {
    if let Some(c) = expr.clone().downcast::<Const>() {
        return Ok(c.value);
    }
    if let Some(v) = expr.clone().downcast::<Var>() {
        return match env.iter().rev().find(|(bound, _)| bound.ptr_eq(&v)) {
            Some((_, value)) => Ok(*value),
            None => tvm_ffi::bail!(ValueError, "unbound variable `{}`", v.name),
        };
    }
    if let Some(node) = expr.clone().downcast::<Add>() {
        return Ok(evaluate(&node.a, env)?.wrapping_add(evaluate(&node.b, env)?));
    }
    if let Some(node) = expr.clone().downcast::<Mul>() {
        return Ok(evaluate(&node.a, env)?.wrapping_mul(evaluate(&node.b, env)?));
    }
    if let Some(node) = expr.clone().downcast::<Let>() {
        let value = evaluate(&node.value, env)?;
        let mut inner = env.to_vec();
        inner.push((node.var.clone(), value));
        return evaluate(&node.body, &inner);
    }
    tvm_ffi::bail!(TypeError, "cannot evaluate a `{}`", expr.type_key())
}

#[ffi_methods]
impl Expr {
    /// The value of this expression, with free variables read from `env`.
    pub fn eval(this: &ObjectRef<Self>, env: Map<ObjectRef<Var>, i64>) -> Result<i64> {
        evaluate(this, &env.entries())
    }
}

/// Evaluates `expr` with free variables read from `env` (a global function, for C++).
#[ffi_func(name = "ir_example.eval")]
pub fn eval(expr: ObjectRef<Expr>, env: Map<ObjectRef<Var>, i64>) -> Result<i64> {
    evaluate(&expr, &env.entries())
}

/// The free variables of `expr`, in order of first use.
#[ffi_func(name = "ir_example.free_vars")]
pub fn free_vars(expr: ObjectRef<Expr>) -> Result<tvm_ffi::Array<ObjectRef<Var>>> {
    fn walk(
        expr: &ObjectRef<Expr>,
        bound: &mut Vec<ObjectRef<Var>>,
        out: &mut Vec<ObjectRef<Var>>,
    ) {
        if let Some(v) = expr.clone().downcast::<Var>() {
            if !bound.iter().any(|b| b.ptr_eq(&v)) && !out.iter().any(|o| o.ptr_eq(&v)) {
                out.push(v);
            }
        } else if let Some(n) = expr.clone().downcast::<Add>() {
            walk(&n.a, bound, out);
            walk(&n.b, bound, out);
        } else if let Some(n) = expr.clone().downcast::<Mul>() {
            walk(&n.a, bound, out);
            walk(&n.b, bound, out);
        } else if let Some(n) = expr.clone().downcast::<Let>() {
            walk(&n.value, bound, out);
            bound.push(n.var.clone());
            walk(&n.body, bound, out);
            bound.pop();
        }
    }
    let mut out = Vec::new();
    walk(&expr, &mut Vec::new(), &mut out);
    tvm_ffi::Array::new(out)
}

/// Whether `value` is an expression of this IR.
#[ffi_func(name = "ir_example.is_expr")]
pub fn is_expr(value: ObjectRef<AnyObject>) -> bool {
    value.downcast::<Expr>().is_some()
}
