//! TVM's arithmetic analyzer (`sym.Analyzer`), driven through its global functions, with the
//! scopes of C++'s `IRMutatorWithAnalyzer`: loop and let bindings are permanent, constraints
//! (an `if`'s condition, an `assert`) last until their scope ends.
//!
//! The analyzer is lazy: a binding or a constraint is recorded, and handed to TVM, in the order
//! it was made, only before the first question that needs it. A constraint whose scope ends
//! before any question is never entered at all. The answers are those of an eager analyzer
//! (the same bindings and constraints, in the same order, are in place when a question is
//! asked); the calls saved are most of them on IR with few questions.

use crate::ir::{Expr, Var};
use tvm_ffi::{Any, Function, ObjectRef, Result};

/// One of the analyzer's global functions, looked up once.
fn global(name: &str) -> Result<Function> {
    Function::get_global_required(name)
}

/// A constraint, as it is to be handed to TVM.
enum Constraint {
    /// The expression itself.
    Plain(ObjectRef<Expr>),
    /// The negation of the expression, first rewritten by the analyzer (an `else` branch).
    Negated(ObjectRef<Expr>),
}

/// What is still to be handed to TVM, in order.
enum Pending {
    /// `Bind(var, value)`: an expression.
    Bind(ObjectRef<Var>, Any),
    /// `Bind(var, Range::FromMinExtent(min, extent))`.
    BindRange(ObjectRef<Var>, ObjectRef<Expr>, ObjectRef<Expr>),
    /// A constraint of the scope at this depth.
    Constraint(usize, Constraint),
}

/// A scope: the exits of the constraints entered in it, in order.
#[derive(Default)]
struct Scope {
    exits: Vec<Function>,
    /// How many of its constraints are recorded (entered or pending).
    constraints: usize,
}

/// TVM's `arith::Analyzer`, with lazy bindings and constraint scopes.
pub struct Analyzer {
    handle: Any,
    bind: Function,
    can_prove: Function,
    can_prove_equal: Function,
    simplify: Function,
    rewrite_simplify: Function,
    enter: Function,
    range: Function,
    not: Function,
    pending: Vec<Pending>,
    scopes: Vec<Scope>,
}

impl Analyzer {
    /// A new analyzer whose rewrite simplifier stops after `max_steps` steps (0: unlimited).
    pub fn new(max_steps: i64) -> Result<Self> {
        let handle = global("sym.Analyzer")?.call(())?;
        if max_steps != 0 {
            global("sym.AnalyzerSetMaximumRewriteSteps")?.call((handle.clone(), max_steps))?;
        }
        Ok(Analyzer {
            handle,
            bind: global("sym.AnalyzerBind")?,
            can_prove: global("sym.AnalyzerCanProve")?,
            can_prove_equal: global("sym.AnalyzerCanProveEqual")?,
            simplify: global("sym.AnalyzerSimplify")?,
            rewrite_simplify: global("sym.AnalyzerRewriteSimplify")?,
            enter: global("sym.AnalyzerEnterConstraintContext")?,
            range: global("ir.Range_from_min_extent")?,
            not: global("prim.Not")?,
            pending: Vec::new(),
            scopes: vec![Scope::default()],
        })
    }

    /// Binds `var` to the range `[min, min + extent)` (a loop variable).
    pub fn bind_range(
        &mut self,
        var: ObjectRef<Var>,
        min: ObjectRef<Expr>,
        extent: ObjectRef<Expr>,
    ) {
        self.pending.push(Pending::BindRange(var, min, extent));
    }

    /// Binds `var` to the value of `value` (a pure `Bind`).
    pub fn bind_value(&mut self, var: ObjectRef<Var>, value: ObjectRef<Expr>) {
        self.pending.push(Pending::Bind(var, Any::new(value)));
    }

    /// Opens a scope for constraints.
    pub fn push_scope(&mut self) {
        self.scopes.push(Scope::default());
    }

    /// Closes the innermost scope: its constraints no longer hold.
    pub fn pop_scope(&mut self) -> Result<()> {
        let depth = self.scopes.len() - 1;
        let scope = self.scopes.pop().expect("a scope is open");
        if scope.constraints > scope.exits.len() {
            self.pending
                .retain(|p| !matches!(p, Pending::Constraint(d, _) if *d == depth));
        }
        for exit in scope.exits.into_iter().rev() {
            exit.call(())?;
        }
        Ok(())
    }

    /// Adds `condition` to the constraints of the innermost scope.
    pub fn constrain(&mut self, condition: ObjectRef<Expr>) {
        self.add(Constraint::Plain(condition));
    }

    /// Adds the negation of `condition` (rewritten by the analyzer, as C++ does for an `else`
    /// branch) to the constraints of the innermost scope.
    pub fn constrain_not(&mut self, condition: ObjectRef<Expr>) {
        self.add(Constraint::Negated(condition));
    }

    fn add(&mut self, constraint: Constraint) {
        let depth = self.scopes.len() - 1;
        self.scopes[depth].constraints += 1;
        self.pending.push(Pending::Constraint(depth, constraint));
    }

    /// Hands what is pending to TVM, in order.
    fn flush(&mut self) -> Result<()> {
        for pending in std::mem::take(&mut self.pending) {
            match pending {
                Pending::Bind(var, value) => {
                    self.bind.call((self.handle.clone(), var, value, false))?;
                }
                Pending::BindRange(var, min, extent) => {
                    let range = self.range.call((min, extent, Any::default()))?;
                    self.bind.call((self.handle.clone(), var, range, false))?;
                }
                Pending::Constraint(depth, constraint) => {
                    let expr = match constraint {
                        Constraint::Plain(e) => Any::new(e),
                        Constraint::Negated(e) => {
                            let not = self.not.call((e, Any::default()))?;
                            self.rewrite_simplify.call((self.handle.clone(), not))?
                        }
                    };
                    let exit = self.enter.call((self.handle.clone(), expr))?;
                    self.scopes[depth].exits.push(exit.cast::<Function>()?);
                }
            }
        }
        Ok(())
    }

    /// Whether the analyzer proves `expr` (a boolean expression) true.
    pub fn can_prove(&mut self, expr: Any) -> Result<bool> {
        self.flush()?;
        self.can_prove
            .call((self.handle.clone(), expr, 0i32))?
            .cast::<bool>()
    }

    /// Whether the analyzer proves `a == b`.
    pub fn can_prove_equal(&mut self, a: &ObjectRef<Expr>, b: &ObjectRef<Expr>) -> Result<bool> {
        if a.ptr_eq(b) {
            return Ok(true);
        }
        self.flush()?;
        self.can_prove_equal
            .call((self.handle.clone(), a.clone(), b.clone()))?
            .cast::<bool>()
    }

    /// `Simplify(expr)` with C++'s default of two rounds.
    pub fn simplify(&mut self, expr: Any) -> Result<Any> {
        self.flush()?;
        self.simplify.call((self.handle.clone(), expr, 2i32))
    }
}
