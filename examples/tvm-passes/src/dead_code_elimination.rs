//! `relax.transform.DeadCodeElimination` in Rust: C++'s `relax::DeadCodeElimination`
//! (`src/relax/transform/dead_code_elimination.cc`) with the parts of TVM it is built from,
//! `RemoveAllUnused` and `RemoveUnusedVars` (`src/relax/ir/binding_rewrite.cc`), the use-def
//! chains of `CollectVarUsage` (`src/relax/analysis/udchain.cc`), `ContainsImpureCall`
//! (`src/relax/analysis/analysis.cc`) and what TVM's normalizer does to the blocks of a
//! rewritten `SeqExpr` (`NormalizeBlocks`: empty blocks dropped, neighbouring blocks of one kind
//! merged, a binding to a `SeqExpr` flattened).
//!
//! 1. The entry functions: those named, every `ExternFunc`, every function with a
//!    `global_symbol`.
//! 2. The functions no entry reaches through its calls (every `GlobalVar` a Relax function
//!    mentions, every `GlobalVar` a `PrimFunc` calls) are removed, unless some reached
//!    `GlobalVar` is not in the module (then none is).
//! 3. In each Relax function, a binding whose variable nothing needs is removed: a variable is
//!    needed when the function's result (or anything outside a binding) uses it, when its value
//!    calls something impure, or when a needed binding uses it.
//! 4. The functions no entry reaches any more are removed.
//!
//! The only thing asked of TVM is an operator's purity (`ir.OpGetAttr(op, "FPurity")`, then
//! `"TCallEffectKind"`), once per operator.
//!
//! Not reproduced, as no normalized input needs it: C++ rebuilds every Relax function through a
//! normalizing `BlockBuilder`, which also applies operators' `FNormalize` (a `call_tir` whose
//! arguments are a variable rather than an in-line tuple; the Python API refuses to build one)
//! and gives a `SeqExpr` without a type its body's type with the symbolic variables defined
//! inside erased (here: its body's type as it is).

use crate::convert_ssa::{key, AddressMap, Build};
use crate::expr::{outermost, PURE};
use crate::ir::{
    BaseFunc, Binding, BindingBlock, Call, Constant, DataflowBlock, Expr, ExternFunc, FloatImm,
    GlobalVar, IRModule, If, IntImm, MatchCast, Op, PrimFunc, RelaxExprFunction, RelaxFuncType,
    SeqExpr, ShapeExpr, ShapeType, StringImm, TensorType, Tuple, TupleGetItem, TupleType, Type,
    Var, VarBinding,
};
use std::collections::HashSet;
use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
use tvm_ffi::{bail, Any, Array, Function, Map, ObjectRef, Result, String};

type AddressSet = HashSet<usize, Build>;

/// C++ `IsImpureCall` and `ContainsImpureCall`, with each operator's purity asked of TVM once.
pub struct Purity {
    op_get_attr: Function,
    impure_ops: AddressMap<bool>,
}

impl Purity {
    pub fn new() -> Result<Self> {
        Ok(Purity {
            op_get_attr: Function::get_global_required("ir.OpGetAttr")?,
            impure_ops: AddressMap::default(),
        })
    }

    /// C++ `IsImpureCall`: an operator's `FPurity` (or, for TIR operators, its
    /// `TCallEffectKind` beyond `kPure`); any other callee's `FuncType` purity.
    fn is_impure_call(&mut self, call: &Call) -> Result<bool> {
        let Some(callee) = call.op.get() else {
            bail!(InternalError, "a call without a callee")
        };
        if let Some(op) = callee.downcast_ref::<Op>() {
            let k = key(&callee);
            if let Some(impure) = self.impure_ops.get(&k) {
                return Ok(*impure);
            }
            let purity = self
                .op_get_attr
                .call((callee.clone(), String::from("FPurity")))?;
            let impure = match purity.checked_cast::<bool>() {
                Some(pure) => !pure,
                None => {
                    let effect = self
                        .op_get_attr
                        .call((callee.clone(), String::from("TCallEffectKind")))?;
                    match effect.checked_cast::<i64>() {
                        Some(kind) => kind > PURE,
                        None => {
                            bail!(
                                InternalError,
                                "Cannot find the registered purity or call effect of this op: {}",
                                Op::name(op)?
                            )
                        }
                    }
                }
            };
            self.impure_ops.insert(k, impure);
            return Ok(impure);
        }
        match callee.ty().and_then(|ty| ty.downcast::<RelaxFuncType>()) {
            Some(func_ty) => Ok(!func_ty.purity.get()),
            None => bail!(
                InternalError,
                "the callee of a Relax call has no function type: {}",
                callee.type_key()
            ),
        }
    }

    /// C++ `ContainsImpureCall(expr)`: whether evaluating `expr` calls something impure (for a
    /// function, its body; functions inside it are not entered).
    pub fn contains_impure_call(&mut self, expr: &ObjectRef<Expr>) -> Result<bool> {
        if let Some(func) = expr.downcast_ref::<RelaxExprFunction>() {
            return self.find(&func.body().upcast());
        }
        self.find(expr)
    }

    fn find(&mut self, expr: &ObjectRef<Expr>) -> Result<bool> {
        if is_leaf(expr) || expr.is_instance::<RelaxExprFunction>() {
            return Ok(false);
        }
        if let Some(call) = expr.downcast_ref::<Call>() {
            if self.is_impure_call(call)? {
                return Ok(true);
            }
            if let Some(callee) = call.op.get() {
                if self.find(&callee)? {
                    return Ok(true);
                }
            }
            for arg in call.args.get().iter() {
                if self.find(&arg)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(tuple) = expr.downcast_ref::<Tuple>() {
            for field in tuple.fields.get().iter() {
                if self.find(&field)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(item) = expr.downcast_ref::<TupleGetItem>() {
            return match item.tuple_value.get() {
                Some(tuple) => self.find(&tuple),
                None => Ok(false),
            };
        }
        if let Some(seq) = expr.downcast_ref::<SeqExpr>() {
            for block in seq.blocks().iter() {
                for binding in block.bindings().iter() {
                    if let Some(value) = bound_value(&binding) {
                        if self.find(&value)? {
                            return Ok(true);
                        }
                    }
                }
            }
            return self.find(&seq.body());
        }
        if let Some(branch) = expr.downcast_ref::<If>() {
            return Ok(self.find(&branch.cond())?
                || self.find(&branch.true_branch().upcast())?
                || self.find(&branch.false_branch().upcast())?);
        }
        // Anything else (a shape, a primitive expression): the calls inside it.
        for call in outermost(expr, |e| e.is_instance::<Call>())? {
            if self.find(&call)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Expressions that hold no other expression a visitor looks into.
fn is_leaf(expr: &ObjectRef<Expr>) -> bool {
    expr.is_instance::<Var>()
        || expr.is_instance::<GlobalVar>()
        || expr.is_instance::<Op>()
        || expr.is_instance::<Constant>()
        || expr.is_instance::<IntImm>()
        || expr.is_instance::<FloatImm>()
        || expr.is_instance::<StringImm>()
        || expr.is_instance::<ExternFunc>()
}

/// C++ `Type::IsMissing`: no type, or the bare `ir.Type` that stands for none.
fn is_missing(ty: &ObjectRef<Type>) -> bool {
    ty.type_key() == "ir.Type"
}

fn bound_value(binding: &ObjectRef<Binding>) -> Option<ObjectRef<Expr>> {
    if let Some(b) = binding.downcast_ref::<VarBinding>() {
        return b.value.get();
    }
    binding
        .downcast_ref::<MatchCast>()
        .and_then(|b| b.value.get())
}

/// C++ `UDChain` (`CollectVarUsage`) over one Relax function: for each variable, how many
/// distinct bindings use it; for each binding, the variables it uses; the variables used
/// outside any binding (the outputs); the value of each `VarBinding`. Also collects the
/// `GlobalVar`s the function mentions (C++ `RelaxCalleeCollector`), in first-seen order.
#[derive(Default)]
pub struct UseDef {
    cur_user: Option<usize>,
    bound: AddressMap<ObjectRef<Expr>>,
    /// Every variable defined or used: how many distinct users it has.
    users: AddressMap<usize>,
    /// `(used, user)` pairs seen.
    pairs: HashSet<(usize, usize), Build>,
    /// For each user, the variables it uses.
    uses: AddressMap<Vec<usize>>,
    outputs: AddressSet,
    forward: AddressSet,
    callees: Vec<ObjectRef<GlobalVar>>,
    callee_set: AddressSet,
}

impl UseDef {
    pub fn collect(func: &ObjectRef<RelaxExprFunction>) -> Result<Self> {
        let mut chain = UseDef::default();
        chain.visit_function(func)?;
        Ok(chain)
    }

    fn callee(&mut self, gvar: &ObjectRef<Expr>) {
        if self.callee_set.insert(key(gvar)) {
            if let Some(g) = gvar.downcast::<GlobalVar>() {
                self.callees.push(g);
            }
        }
    }

    fn use_var(&mut self, var: usize) {
        match self.cur_user {
            Some(user) => {
                if self.pairs.insert((var, user)) {
                    *self.users.entry(var).or_insert(0) += 1;
                    self.uses.entry(user).or_default().push(var);
                } else {
                    self.users.entry(var).or_insert(0);
                }
            }
            None => {
                self.users.entry(var).or_insert(0);
                self.outputs.insert(var);
            }
        }
    }

    fn define(&mut self, var: &ObjectRef<Var>) -> Result<()> {
        let k = key(var);
        if self.users.contains_key(&k) {
            bail!(
                InternalError,
                "Variable {} was used before its definition",
                var.name()
            );
        }
        self.users.insert(k, 0);
        Ok(())
    }

    fn var_def(&mut self, var: &ObjectRef<Var>) -> Result<()> {
        if !self.forward.remove(&key(var)) {
            self.define(var)?;
        }
        Ok(())
    }

    fn visit_function(&mut self, func: &RelaxExprFunction) -> Result<()> {
        self.cur_user = None;
        for param in func.params().iter() {
            self.var_def(&param)?;
        }
        self.visit_seq(&func.body())
    }

    fn visit_seq(&mut self, seq: &SeqExpr) -> Result<()> {
        for block in seq.blocks().iter() {
            for binding in block.bindings().iter() {
                self.visit_binding(&binding)?;
            }
        }
        self.visit(&seq.body())?;
        self.visit_type(seq.base.ty())
    }

    fn visit_binding(&mut self, binding: &ObjectRef<Binding>) -> Result<()> {
        let Some(var) = binding.var.get() else {
            bail!(InternalError, "a binding without a variable")
        };
        if let Some(b) = binding.downcast_ref::<VarBinding>() {
            let Some(value) = b.value.get() else {
                bail!(InternalError, "a binding of {} without a value", var.name())
            };
            let k = key(&var);
            if self.bound.insert(k, value.clone()).is_some() {
                bail!(
                    InternalError,
                    "Variable {} was defined multiple times",
                    var.name()
                );
            }
            let cache = self.cur_user.replace(k);
            if value.is_instance::<RelaxExprFunction>() {
                // A local function may call itself: its variable is defined before its value.
                self.define(&var)?;
                self.forward.insert(k);
            }
            self.visit(&value)?;
            self.var_def(&var)?;
            self.cur_user = cache;
            return Ok(());
        }
        if let Some(b) = binding.downcast_ref::<MatchCast>() {
            if let Some(value) = b.value.get() {
                self.visit(&value)?;
            }
            self.visit_type(b.ty.get())?;
            return self.var_def(&var);
        }
        bail!(TypeError, "Invalid type: {}", binding.type_key())
    }

    fn visit(&mut self, expr: &ObjectRef<Expr>) -> Result<()> {
        if expr.is_instance::<Var>() {
            self.use_var(key(expr));
            return Ok(());
        }
        if expr.is_instance::<GlobalVar>() {
            self.callee(expr);
            return Ok(());
        }
        if is_leaf(expr) {
            return Ok(());
        }
        if let Some(call) = expr.downcast_ref::<Call>() {
            if let Some(callee) = call.op.get() {
                self.visit(&callee)?;
            }
            for ty in call.ty_args.get().iter() {
                self.visit_type(Some(ty))?;
            }
            for arg in call.args.get().iter() {
                self.visit(&arg)?;
            }
            return self.visit_type(call.base.ty());
        }
        if let Some(tuple) = expr.downcast_ref::<Tuple>() {
            for field in tuple.fields.get().iter() {
                self.visit(&field)?;
            }
            return self.visit_type(tuple.base.ty());
        }
        if let Some(item) = expr.downcast_ref::<TupleGetItem>() {
            if let Some(tuple) = item.tuple_value.get() {
                self.visit(&tuple)?;
            }
            return self.visit_type(item.base.ty());
        }
        if let Some(seq) = expr.downcast_ref::<SeqExpr>() {
            return self.visit_seq(seq);
        }
        if let Some(branch) = expr.downcast_ref::<If>() {
            self.visit(&branch.cond())?;
            self.visit_seq(&branch.true_branch())?;
            self.visit_seq(&branch.false_branch())?;
            return self.visit_type(branch.base.ty());
        }
        if let Some(func) = expr.downcast_ref::<RelaxExprFunction>() {
            return self.visit_function(func);
        }
        if let Some(shape) = expr.downcast_ref::<ShapeExpr>() {
            for value in shape.values().iter() {
                if !value.is_instance::<IntImm>() {
                    self.visit(&value)?;
                }
            }
            return Ok(());
        }
        // A primitive expression: the variables and global variables inside it.
        for e in outermost(expr, |e| {
            e.is_instance::<Var>() || e.is_instance::<GlobalVar>()
        })? {
            self.visit(&e)?;
        }
        Ok(())
    }

    /// The expressions inside a type (C++ `DefaultTypeFieldVisitor`): a tensor's shape, a
    /// shape's values, a tuple's fields; function types hold none.
    fn visit_type(&mut self, ty: Option<ObjectRef<Type>>) -> Result<()> {
        let Some(ty) = ty else { return Ok(()) };
        if let Some(tensor) = ty.downcast_ref::<TensorType>() {
            if let Some(shape) = tensor.shape.get() {
                self.visit(&shape)?;
            }
        } else if let Some(tuple) = ty.downcast_ref::<TupleType>() {
            for field in tuple.fields.get().iter() {
                self.visit_type(Some(field))?;
            }
        } else if let Some(shape) = ty.downcast_ref::<ShapeType>() {
            if let Some(values) = shape.values.get() {
                for value in values.iter() {
                    if !value.is_instance::<IntImm>() {
                        self.visit(&value)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// C++ `GetUnusedVars` over `RemoveAllUnused`'s outputs (the variables used outside a
    /// binding and those bound to a value with an impure call): the variables left without a
    /// user when the unused ones are removed, one after another. Only bound variables can be
    /// removed, so only they are looked at; impurity is asked only of those left unused.
    pub fn unused(&self, purity: &mut Purity) -> Result<AddressSet> {
        let mut remaining: AddressMap<usize> = AddressMap::default();
        let mut work = Vec::new();
        for k in self.bound.keys() {
            let count = self.users.get(k).copied().unwrap_or(0);
            remaining.insert(*k, count);
            if count == 0 && !self.outputs.contains(k) {
                work.push(*k);
            }
        }
        let mut unused = AddressSet::default();
        while let Some(k) = work.pop() {
            let Some(value) = self.bound.get(&k) else {
                continue;
            };
            if purity.contains_impure_call(value)? {
                continue;
            }
            unused.insert(k);
            for used in self.uses.get(&k).into_iter().flatten() {
                if let Some(count) = remaining.get_mut(used) {
                    *count = count.saturating_sub(1);
                    if *count == 0 && !self.outputs.contains(used) {
                        work.push(*used);
                    }
                }
            }
        }
        Ok(unused)
    }
}

/// A block being rebuilt: its kind, its bindings, the original where it is kept whole.
struct Block {
    dataflow: bool,
    bindings: Vec<ObjectRef<Binding>>,
    original: Option<ObjectRef<BindingBlock>>,
    span: Option<ObjectRef<crate::ir::Span>>,
}

impl Block {
    fn build(self) -> Result<ObjectRef<BindingBlock>> {
        if let Some(original) = self.original {
            return Ok(original);
        }
        let bindings = Array::new(self.bindings)?;
        Ok(if self.dataflow {
            DataflowBlock::from_fields(bindings, self.span).upcast()
        } else {
            BindingBlock::from_fields(bindings, self.span).upcast()
        })
    }
}

/// C++ `RemoveUnusedVars` (an `ExprMutator`) with the normalizer's block rules: removes the
/// `VarBinding`s of the unused variables, and collects the `GlobalVar`s the result mentions.
pub struct Remover<'a> {
    unused: &'a AddressSet,
    callees: Vec<ObjectRef<GlobalVar>>,
    callee_set: AddressSet,
}

impl<'a> Remover<'a> {
    pub fn new(unused: &'a AddressSet) -> Self {
        Remover {
            unused,
            callees: Vec::new(),
            callee_set: AddressSet::default(),
        }
    }

    pub fn into_callees(self) -> Vec<ObjectRef<GlobalVar>> {
        self.callees
    }

    pub fn function(
        &mut self,
        func: &ObjectRef<RelaxExprFunction>,
    ) -> Result<ObjectRef<RelaxExprFunction>> {
        let body = func.body();
        let new_body = self.seq(&body)?;
        if new_body.ptr_eq(&body) {
            return Ok(func.clone());
        }
        let base = &func.base;
        Ok(RelaxExprFunction::from_fields(
            base.base.span(),
            base.base.ty(),
            base.attrs(),
            func.params(),
            new_body,
            func.ret_ty(),
            func.is_pure(),
        ))
    }

    /// The `GlobalVar`s of an expression that holds no binding.
    fn mentions(&mut self, expr: &ObjectRef<Expr>) -> Result<()> {
        if let Some(gvar) = expr.downcast_ref::<GlobalVar>() {
            if self.callee_set.insert(key(gvar)) {
                self.callees.push(gvar.clone());
            }
            return Ok(());
        }
        if is_leaf(expr) {
            return Ok(());
        }
        if let Some(call) = expr.downcast_ref::<Call>() {
            if let Some(callee) = call.op.get() {
                self.mentions(&callee)?;
            }
            for arg in call.args.get().iter() {
                self.mentions(&arg)?;
            }
            return Ok(());
        }
        if let Some(tuple) = expr.downcast_ref::<Tuple>() {
            for field in tuple.fields.get().iter() {
                self.mentions(&field)?;
            }
            return Ok(());
        }
        if let Some(item) = expr.downcast_ref::<TupleGetItem>() {
            if let Some(tuple) = item.tuple_value.get() {
                self.mentions(&tuple)?;
            }
            return Ok(());
        }
        for e in outermost(expr, |e| e.is_instance::<GlobalVar>())? {
            self.mentions(&e)?;
        }
        Ok(())
    }

    /// The value of a kept binding, rewritten where it holds bindings.
    fn value(&mut self, value: &ObjectRef<Expr>) -> Result<ObjectRef<Expr>> {
        if let Some(seq) = value.downcast::<SeqExpr>() {
            return Ok(self.seq(&seq)?.upcast());
        }
        if let Some(branch) = value.downcast_ref::<If>() {
            let cond = branch.cond();
            self.mentions(&cond)?;
            let true_branch = branch.true_branch();
            let false_branch = branch.false_branch();
            let new_true = self.seq(&true_branch)?;
            let new_false = self.seq(&false_branch)?;
            if new_true.ptr_eq(&true_branch) && new_false.ptr_eq(&false_branch) {
                return Ok(value.clone());
            }
            return Ok(If::from_fields(
                branch.base.span(),
                branch.base.ty(),
                cond,
                new_true,
                new_false,
            )
            .upcast());
        }
        if let Some(func) = value.downcast_ref::<RelaxExprFunction>() {
            return Ok(self.function(func)?.upcast());
        }
        self.mentions(value)?;
        Ok(value.clone())
    }

    /// A `SeqExpr` without the unused bindings, its blocks normalized as TVM's normalizer does
    /// (`NormalizeBlocks`); the same object where nothing changes.
    fn seq(&mut self, seq: &ObjectRef<SeqExpr>) -> Result<ObjectRef<SeqExpr>> {
        let mut blocks: Vec<Block> = Vec::new();
        let mut changed = false;
        for block in seq.blocks().iter() {
            let dataflow = block.is_instance::<DataflowBlock>();
            let mut current = Block {
                dataflow,
                bindings: Vec::new(),
                original: None,
                span: block.span(),
            };
            let mut block_changed = false;
            for binding in block.bindings().iter() {
                if let Some(b) = binding.downcast_ref::<VarBinding>() {
                    let Some(var) = binding.var.get() else {
                        bail!(InternalError, "a binding without a variable")
                    };
                    if self.unused.contains(&key(&var)) {
                        block_changed = true;
                        continue;
                    }
                    let Some(value) = b.value.get() else {
                        bail!(InternalError, "a binding of {} without a value", var.name())
                    };
                    let new_value = self.value(&value)?;
                    if let Some(inner) = new_value.downcast_ref::<SeqExpr>() {
                        // A binding to a `SeqExpr` is flattened: its blocks before, the
                        // binding of its body after (C++ `FlattenBlocks`).
                        block_changed = true;
                        blocks.push(std::mem::replace(
                            &mut current,
                            Block {
                                dataflow,
                                bindings: Vec::new(),
                                original: None,
                                span: None,
                            },
                        ));
                        for inner_block in inner.blocks().iter() {
                            blocks.push(Block {
                                dataflow: inner_block.is_instance::<DataflowBlock>(),
                                bindings: Vec::new(),
                                original: Some(inner_block),
                                span: None,
                            });
                        }
                        current.bindings.push(
                            VarBinding::from_fields(binding.span(), var, inner.body()).upcast(),
                        );
                        continue;
                    }
                    if new_value.ptr_eq(&value) {
                        current.bindings.push(binding);
                    } else {
                        block_changed = true;
                        current
                            .bindings
                            .push(VarBinding::from_fields(binding.span(), var, new_value).upcast());
                    }
                } else {
                    if let Some(value) = bound_value(&binding) {
                        self.mentions(&value)?;
                    }
                    current.bindings.push(binding);
                }
            }
            if !block_changed {
                current.original = Some(block);
            } else {
                changed = true;
            }
            blocks.push(current);
        }
        let body = seq.body();
        self.mentions(&body)?;
        // `NormalizeBlocks`: empty blocks dropped, a block merged into the one before it when
        // both are dataflow blocks or both are not.
        let mut normalized: Vec<Block> = Vec::with_capacity(blocks.len());
        for block in blocks {
            let len = match &block.original {
                Some(original) => original.bindings().len(),
                None => block.bindings.len(),
            };
            if len == 0 {
                changed = true;
                continue;
            }
            match normalized.last_mut() {
                Some(last) if last.dataflow == block.dataflow => {
                    changed = true;
                    if let Some(original) = last.original.take() {
                        last.span = original.span();
                        last.bindings = original.bindings().to_vec();
                    }
                    match block.original {
                        Some(original) => last.bindings.extend(original.bindings().iter()),
                        None => last.bindings.extend(block.bindings),
                    }
                }
                _ => normalized.push(block),
            }
        }
        // A `SeqExpr` built without a type (not normalized) gets its body's, as the normalizer
        // gives it (C++ erases from it the symbolic variables defined inside, which such an
        // input rarely has).
        let ty = seq.base.ty().filter(|ty| !is_missing(ty));
        if !changed && ty.is_some() {
            return Ok(seq.clone());
        }
        let ty = ty.or_else(|| body.ty());
        let blocks = normalized
            .into_iter()
            .map(Block::build)
            .collect::<Result<Vec<_>>>()?;
        Ok(SeqExpr::from_fields(
            seq.base.span(),
            ty,
            Array::new(blocks)?,
            body,
        ))
    }
}

/// The `GlobalVar`s a `PrimFunc` calls (C++ `TIRxCalleeCollector`), in first-seen order.
fn prim_func_callees(func: &ObjectRef<PrimFunc>) -> Result<Vec<ObjectRef<GlobalVar>>> {
    let mut callees = Vec::new();
    let mut seen = AddressSet::default();
    structural::walk(
        Any::new(func.body()),
        |value: &VisitValue| {
            if let Some(call) = value.as_object::<Call>() {
                if let Some(gvar) = call.op.get().and_then(|op| op.downcast::<GlobalVar>()) {
                    if seen.insert(key(&gvar)) {
                        callees.push(gvar);
                    }
                }
                return WalkResult::Advance;
            }
            if value.as_object::<Type>().is_some() || value.as_object::<Op>().is_some() {
                return WalkResult::Skip;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )?;
    Ok(callees)
}

/// C++ `RemoveUnusedFunctions`' reachability: the functions reached from `entries`, or `None`
/// when a reached `GlobalVar` is not in the module (then nothing is removed).
fn reachable(
    entries: &[usize],
    callees: &AddressMap<Vec<ObjectRef<GlobalVar>>>,
) -> Option<AddressSet> {
    let mut reached: AddressSet = entries.iter().copied().collect();
    let mut to_visit: Vec<usize> = reached.iter().copied().collect();
    let mut all_in_module = true;
    while let Some(visiting) = to_visit.pop() {
        match callees.get(&visiting) {
            Some(called) => {
                for callee in called {
                    if reached.insert(key(callee)) {
                        to_visit.push(key(callee));
                    }
                }
            }
            None => all_in_module = false,
        }
    }
    all_in_module.then_some(reached)
}

/// C++ `DeadCodeElimination(mod, entry_function_names)`.
pub fn dead_code_elimination(
    module: ObjectRef<IRModule>,
    entry_function_names: &[String],
) -> Result<ObjectRef<IRModule>> {
    let functions = module.functions();
    let names = module.global_var_map_();

    // S0: the entry functions.
    let mut entries = Vec::new();
    for name in entry_function_names {
        match names.get(name.clone()) {
            Some(gvar) => entries.push(key(&gvar)),
            None => {
                // TVM's own error (`IRModule::GetGlobalVar`) names the candidates.
                Function::get_global_required("ir.Module_GetGlobalVar")?
                    .call((module.clone(), name.clone()))?;
                bail!(
                    ValueError,
                    "Cannot find global var \"{name}\" in the Module"
                )
            }
        }
    }
    let mut order: Vec<(ObjectRef<GlobalVar>, ObjectRef<BaseFunc>)> = Vec::new();
    for (gvar, func) in functions.iter() {
        if func.is_instance::<ExternFunc>() || has_global_symbol(&func) {
            entries.push(key(&gvar));
        }
        order.push((gvar, func));
    }

    // The callees of each function, and the use-def chains of each Relax function.
    let mut callees: AddressMap<Vec<ObjectRef<GlobalVar>>> = AddressMap::default();
    let mut chains: AddressMap<UseDef> = AddressMap::default();
    for (gvar, func) in &order {
        let called = if let Some(relax) = func.downcast_ref::<RelaxExprFunction>() {
            let chain = UseDef::collect(relax)?;
            let called = chain.callees.clone();
            chains.insert(key(gvar), chain);
            called
        } else if let Some(prim) = func.downcast_ref::<PrimFunc>() {
            prim_func_callees(prim)?
        } else {
            Vec::new()
        };
        callees.insert(key(gvar), called);
    }

    // S1: the functions no entry reaches are removed.
    let kept = reachable(&entries, &callees);
    let mut removed = false;
    let mut live: Vec<(ObjectRef<GlobalVar>, ObjectRef<BaseFunc>)> = Vec::new();
    for (gvar, func) in order {
        if kept
            .as_ref()
            .is_some_and(|kept| !kept.contains(&key(&gvar)))
        {
            removed = true;
            callees.remove(&key(&gvar));
            continue;
        }
        live.push((gvar, func));
    }

    // S2: the unused bindings of each Relax function are removed.
    let mut purity = Purity::new()?;
    let mut updated = false;
    for (gvar, func) in live.iter_mut() {
        let (Some(chain), Some(relax)) =
            (chains.get(&key(gvar)), func.downcast::<RelaxExprFunction>())
        else {
            continue;
        };
        let unused = chain.unused(&mut purity)?;
        let mut remover = Remover::new(&unused);
        let new_func = remover.function(&relax)?;
        if !new_func.ptr_eq(&relax) {
            updated = true;
            callees.insert(key(gvar), remover.into_callees());
            *func = new_func.upcast();
        }
    }

    // S3: the functions no entry reaches any more are removed.
    let kept = reachable(&entries, &callees);
    if let Some(kept) = &kept {
        let before = live.len();
        live.retain(|(gvar, _)| kept.contains(&key(gvar)));
        removed |= live.len() != before;
    }

    if !removed && !updated {
        return Ok(module);
    }
    // C++ `IRModule::Remove` drops the removed functions' names too.
    let live_set: AddressSet = live.iter().map(|(gvar, _)| key(gvar)).collect();
    let global_var_map: Vec<(String, ObjectRef<GlobalVar>)> = names
        .iter()
        .filter(|(_, gvar)| live_set.contains(&key(gvar)) || functions.get(gvar.clone()).is_none())
        .collect();
    module.copy_with([
        ("functions", Any::new(Map::new(live)?)),
        ("global_var_map_", Any::new(Map::new(global_var_map)?)),
    ])
}

/// C++ `GetLinkageType() == kExternal`: the function has a `global_symbol` string.
fn has_global_symbol(func: &ObjectRef<BaseFunc>) -> bool {
    func.attrs
        .get()
        .and_then(|attrs| attrs.__dict__.get().get(String::from("global_symbol")))
        .is_some_and(|symbol| symbol.checked_cast::<String>().is_some())
}
