//! `tirx.transform.RemoveNoOp` in Rust: C++'s `NoOpRemover` (an `IRMutatorWithAnalyzer`),
//! rule for rule, over the generated bindings of TVM's IR.
//!
//! The rules: an `Evaluate` without side effects becomes `Evaluate(0)`; a `SeqStmt` is
//! flattened and loses its `Evaluate(0)`s; a `For` whose extent is provably at most 0, or whose
//! body is a no-op, becomes the side effects of its bounds; an `IfThenElse` with a constant
//! condition becomes its branch, one with a no-op branch loses it (or becomes the side effects
//! of its condition); an `AttrStmt` with a no-op body becomes the side effects of its value
//! (`pragma_debug_skip_region` goes, a negative `async_wait_queue_scope` count unwraps); a
//! `BufferStore` of the value already stored (proved by the analyzer, under the enclosing loop
//! ranges, bindings and conditions) becomes the side effects of its value and indices. Blocks
//! (`s_tir.SBlockRealize`, `s_tir.SBlock`, outside the generated namespaces) are read and rebuilt
//! by field name, their iteration variables bound to their domains.
//!
//! Expressions are kept as they are, as C++ keeps them, except that an `if_then_else` call or a
//! `Select` whose condition is a literal constant is folded to the value it selects in the
//! expressions C++'s analyzer-aware visitor visits (loop bounds, conditions, bindings,
//! assertions, attribute values, and blocks' domains, predicates, iteration values and
//! regions; `Evaluate` and `BufferStore` are handled by the rules alone). Not done: C++ also
//! folds the shape, strides and offset of a buffer at its definition (`AllocBuffer`,
//! `DeclBuffer`, a block's allocated and matched buffers), rebuilding the buffer.

use crate::analyzer::Analyzer;
use crate::expr::{
    as_const_int, dtype_of, evaluate, int_imm, is_const, is_no_op, is_prim, loads_from, Effects,
    PURE, READ_STATE,
};
use crate::fold::Folder;
use crate::ir::{
    AssertStmt, AttrStmt, Bind, BufferStore, Call, Evaluate, Expr, For, IfThenElse, Range, SeqStmt,
    Stmt, TensorLoad, TensorRegion, Var, While,
};
use crate::seq::{flatten, flatten_into};
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{Any, Array, DataType, Function, Map, ObjectRef, Result, String};

/// The pass's configuration (`tirx.RemoveNoOp` of the `PassContext`).
#[derive(Clone, Copy, Default)]
pub struct Config {
    pub max_simplification_steps: i64,
    pub ignore_profiler_call: bool,
}

/// TVM's own operator constructors (with C++'s constant folding and type promotion).
struct Builders {
    sub: Function,
    eq: Function,
    le: Function,
    not: Function,
    buffer_load: Function,
    iter_var: Function,
    get_op: Function,
    /// The operator `likely`.
    likely: Option<ObjectRef<Expr>>,
    add: Function,
    single_point: Function,
    interval: Function,
    int_set: Function,
    interval_max: Function,
    /// An analyzer that never learns anything: `AnalyzerIntSet` with it is C++'s
    /// `arith::EvalSet(expr, dom_map)`.
    eval_set_analyzer: Any,
    pos_inf: ObjectRef<Expr>,
    neg_inf: ObjectRef<Expr>,
}

impl Builders {
    fn new() -> Result<Self> {
        let g = Function::get_global_required;
        let get_op = g("ir.GetOp")?;
        // `prim.likely` in TVM 0.27 (`tirx.likely` in later sources).
        let likely = ["prim.likely", "tirx.likely"].into_iter().find_map(|name| {
            get_op
                .call((String::from(name),))
                .ok()
                .and_then(|op| op.checked_cast::<ObjectRef<Expr>>())
        });
        Ok(Builders {
            likely,
            add: g("prim._OpAdd")?,
            single_point: g("sym.intset_single_point")?,
            interval: g("sym.intset_interval")?,
            int_set: g("sym.AnalyzerIntSet")?,
            interval_max: g("sym.IntervalSetGetMax")?,
            eval_set_analyzer: g("sym.Analyzer")?.call(())?,
            pos_inf: g("sym.PosInf")?.call(())?.cast()?,
            neg_inf: g("sym.NegInf")?.call(())?.cast()?,
            sub: g("prim._OpSub")?,
            eq: g("prim._OpEQ")?,
            le: g("prim._OpLE")?,
            not: g("prim.Not")?,
            buffer_load: g("tirx.BufferLoad")?,
            iter_var: g("tirx.IterVar")?,
            get_op,
        })
    }
}

/// C++ `NoOpRemover`.
pub struct NoOpRemover {
    analyzer: Analyzer,
    effects: Effects,
    build: Builders,
    /// `Evaluate(0)`, shared.
    nop: ObjectRef<Stmt>,
    /// The profiler operators rendered as no-ops (`ignore_profiler_call`).
    profiler_ops: Vec<ObjectRef<Expr>>,
    /// `(loop variable, min, extent)` of the enclosing loops (C++'s `var_range_map_`).
    loops: Vec<(ObjectRef<Var>, ObjectRef<Expr>, ObjectRef<Expr>)>,
    /// The folding of literal conditionals in the expressions C++ visits.
    folder: Folder,
}

impl NoOpRemover {
    pub fn new(config: Config) -> Result<Self> {
        let build = Builders::new()?;
        let mut profiler_ops = Vec::new();
        if config.ignore_profiler_call {
            for name in [
                "tirx.timer_init_cuda",
                "tirx.timer_start_cuda",
                "tirx.timer_end_cuda",
                "tirx.timer_finalize_cuda",
            ] {
                if let Ok(op) = build.get_op.call((String::from(name),)) {
                    if let Ok(op) = op.cast::<ObjectRef<Expr>>() {
                        profiler_ops.push(op);
                    }
                }
            }
        }
        let folder = Folder::new(&build.get_op);
        Ok(NoOpRemover {
            folder,
            analyzer: Analyzer::new(config.max_simplification_steps)?,
            effects: Effects::new()?,
            build,
            nop: evaluate(int_imm(DataType::INT32, 0)),
            profiler_ops,
            loops: Vec::new(),
        })
    }

    fn nop(&self) -> ObjectRef<Stmt> {
        self.nop.clone()
    }

    /// C++ `MakeEvaluate(value)`.
    fn make_evaluate(&mut self, value: ObjectRef<Expr>) -> Result<ObjectRef<Stmt>> {
        if self.effects.side_effect(&value)? > READ_STATE {
            Ok(evaluate(value))
        } else {
            Ok(self.nop())
        }
    }

    /// C++ `MakeEvaluate(values)`.
    fn make_evaluate_all(&mut self, values: &[ObjectRef<Expr>]) -> Result<ObjectRef<Stmt>> {
        let mut stmts = Vec::new();
        for value in values {
            if self.effects.side_effect(value)? > READ_STATE {
                stmts.push(evaluate(value.clone()));
            }
        }
        Ok(match stmts.len() {
            0 => self.nop(),
            1 => stmts.pop().expect("one statement"),
            _ => SeqStmt::from_fields(None, Array::new(stmts)?).upcast(),
        })
    }

    /// C++ `HasSideEffect` (of an `Evaluate`'s value).
    fn has_side_effect(&mut self, value: &ObjectRef<Expr>) -> Result<bool> {
        if !is_prim(value) && !value.is_instance::<crate::ir::IntImm>() {
            return Ok(value.is_instance::<Call>());
        }
        if !self.profiler_ops.is_empty() {
            if let Some(call) = value.downcast_ref::<Call>() {
                let callee = call.op();
                if self.profiler_ops.iter().any(|op| op.ptr_eq(&callee)) {
                    return Ok(false);
                }
            }
        }
        Ok(self.effects.side_effect(value)? > READ_STATE)
    }

    /// Visits a statement.
    pub fn visit(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        if let Some(seq) = stmt.downcast_ref::<SeqStmt>() {
            return self.visit_seq(stmt, seq);
        }
        if let Some(store) = stmt.downcast_ref::<BufferStore>() {
            return self.visit_store(stmt, store);
        }
        if let Some(eval) = stmt.downcast_ref::<Evaluate>() {
            return if self.has_side_effect(&eval.value())? {
                Ok(stmt.clone())
            } else {
                Ok(self.nop())
            };
        }
        if let Some(loop_) = stmt.downcast_ref::<For>() {
            return self.visit_for(stmt, loop_);
        }
        if let Some(cond) = stmt.downcast_ref::<IfThenElse>() {
            let out = self.visit_if(stmt, cond)?;
            return self.remove_if_branches(out);
        }
        if let Some(attr) = stmt.downcast_ref::<AttrStmt>() {
            return self.visit_attr(stmt, attr);
        }
        if let Some(bind) = stmt.downcast_ref::<Bind>() {
            let old_value = bind.value();
            let value = self.folder.fold(&old_value)?;
            if is_prim(&value) && self.effects.side_effect(&value)? <= PURE {
                self.analyzer.bind_value(bind.var(), value.clone());
            }
            if value.ptr_eq(&old_value) {
                return Ok(stmt.clone());
            }
            return Ok(Bind::from_fields(bind.base.span(), bind.var(), value).upcast());
        }
        if let Some(assert) = stmt.downcast_ref::<AssertStmt>() {
            let old_condition = assert.condition();
            let condition = self.folder.fold(&old_condition)?;
            if self.effects.side_effect(&condition)? <= PURE {
                self.analyzer.constrain(condition.clone());
            }
            if condition.ptr_eq(&old_condition) {
                return Ok(stmt.clone());
            }
            return stmt.copy_with([("condition", Any::new(condition))]);
        }
        if let Some(while_) = stmt.downcast_ref::<While>() {
            let old_condition = while_.condition();
            let condition = self.folder.fold(&old_condition)?;
            let body = while_.body();
            let new_body = self.visit(&body)?;
            if condition.ptr_eq(&old_condition) && new_body.ptr_eq(&body) {
                return Ok(stmt.clone());
            }
            let span = while_.base.span();
            return Ok(While::from_fields(span, condition, new_body).upcast());
        }
        match stmt.type_key() {
            "s_tir.SBlockRealize" => return self.visit_block_realize(stmt),
            "s_tir.SBlock" => return self.visit_block(stmt),
            _ => {}
        }
        // Statements without nested statements (`DeclBuffer`, `AllocBuffer`, `Break`, ...).
        Ok(stmt.clone())
    }

    /// An `s_tir.SBlockRealize` (outside the generated namespaces: read by field name): its
    /// iteration values and predicate folded, its block visited.
    fn visit_block_realize(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        let mut replacements = Vec::new();
        let values = stmt.get_field::<Array<ObjectRef<Expr>>>("iter_values")?;
        let new_values = self.folder.fold_all(&values)?;
        if !new_values.as_object_ref().ptr_eq(values.as_object_ref()) {
            replacements.push(("iter_values", Any::new(new_values)));
        }
        let predicate = stmt.get_field::<ObjectRef<Expr>>("predicate")?;
        let new_predicate = self.folder.fold(&predicate)?;
        if !new_predicate.ptr_eq(&predicate) {
            replacements.push(("predicate", Any::new(new_predicate)));
        }
        let block = stmt.get_field::<ObjectRef<Stmt>>("block")?;
        let new_block = self.visit(&block)?;
        if !new_block.ptr_eq(&block) {
            replacements.push(("block", Any::new(new_block)));
        }
        if replacements.is_empty() {
            return Ok(stmt.clone());
        }
        stmt.copy_with(replacements)
    }

    /// An `s_tir.SBlock`, as C++'s `IRMutatorWithAnalyzer`: its iteration variables bound to
    /// their domains in a scope of their own, its domains and read and write regions folded,
    /// its `init` and `body` visited.
    fn visit_block(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        self.analyzer.push_scope();
        let out = self.visit_block_scoped(stmt);
        self.analyzer.pop_scope()?;
        out
    }

    fn visit_block_scoped(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        let iter_vars = stmt.get_field::<Array<ObjectRef<AnyObject>>>("iter_vars")?;
        for iter_var in iter_vars.iter() {
            let var = iter_var.get_field::<ObjectRef<Var>>("var")?;
            let dom = iter_var.get_field::<ObjectRef<Range>>("dom")?;
            self.analyzer.bind_range(var, dom.min(), dom.extent());
        }
        let mut replacements = Vec::new();
        let mut new_iter_vars = Vec::with_capacity(iter_vars.len());
        let mut changed = false;
        for iter_var in iter_vars.iter() {
            let dom = iter_var.get_field::<ObjectRef<Range>>("dom")?;
            let new_dom = self.fold_range(&dom)?;
            if new_dom.ptr_eq(&dom) {
                new_iter_vars.push(Any::new(iter_var));
                continue;
            }
            changed = true;
            new_iter_vars.push(self.build.iter_var.call((
                new_dom,
                iter_var.get_field_any("var")?,
                iter_var.get_field_any("iter_type")?,
                iter_var.get_field_any("thread_tag")?,
                Any::default(),
            ))?);
        }
        if changed {
            replacements.push(("iter_vars", Any::new(Array::new(new_iter_vars)?)));
        }
        for name in ["reads", "writes"] {
            let regions = stmt.get_field::<Array<ObjectRef<TensorRegion>>>(name)?;
            let mut new_regions = Vec::with_capacity(regions.len());
            let mut changed = false;
            for region in regions.iter() {
                let ranges = region.region();
                let mut new_ranges = Vec::with_capacity(ranges.len());
                let mut ranges_changed = false;
                for range in ranges.iter() {
                    let new = self.fold_range(&range)?;
                    ranges_changed |= !new.ptr_eq(&range);
                    new_ranges.push(new);
                }
                if ranges_changed {
                    changed = true;
                    let base = &region.base;
                    let source = region.source();
                    let new_ranges = Array::new(new_ranges)?;
                    new_regions.push(TensorRegion::from_fields(
                        base.span(),
                        base.ty(),
                        source,
                        new_ranges,
                    ));
                } else {
                    new_regions.push(region);
                }
            }
            if changed {
                replacements.push((name, Any::new(Array::new(new_regions)?)));
            }
        }
        if let Some(init) = stmt.get_field::<Option<ObjectRef<Stmt>>>("init")? {
            let new_init = self.visit(&init)?;
            if !new_init.ptr_eq(&init) {
                replacements.push(("init", Any::new(new_init)));
            }
        }
        let body = stmt.get_field::<ObjectRef<Stmt>>("body")?;
        let new_body = self.visit(&body)?;
        if !new_body.ptr_eq(&body) {
            replacements.push(("body", Any::new(new_body)));
        }
        if replacements.is_empty() {
            return Ok(stmt.clone());
        }
        stmt.copy_with(replacements)
    }

    /// A range with its bounds folded (C++ `Range::FromMinExtent` when one changed).
    fn fold_range(&self, range: &ObjectRef<Range>) -> Result<ObjectRef<Range>> {
        let (min, extent) = (range.min(), range.extent());
        let (new_min, new_extent) = (self.folder.fold(&min)?, self.folder.fold(&extent)?);
        if new_min.ptr_eq(&min) && new_extent.ptr_eq(&extent) {
            return Ok(range.clone());
        }
        Ok(Range::from_fields(new_min, new_extent, None))
    }

    /// C++ `StmtMutator::VisitStmt_(SeqStmt)`: visits each statement, then `SeqStmt::Flatten`
    /// (nested sequences inlined, `Evaluate(0)`s dropped).
    fn visit_seq(&mut self, stmt: &ObjectRef<Stmt>, seq: &SeqStmt) -> Result<ObjectRef<Stmt>> {
        let items = seq.seq();
        let mut visited = Vec::with_capacity(items.len());
        for item in items.iter() {
            visited.push(self.visit(&item)?);
        }
        flatten(stmt, seq, visited)
    }

    fn visit_for(&mut self, stmt: &ObjectRef<Stmt>, loop_: &For) -> Result<ObjectRef<Stmt>> {
        let extent = loop_.extent();
        match as_const_int(&extent) {
            Some(n) if n <= 0 => return Ok(self.nop()),
            Some(_) => {}
            None => {
                if self.extent_is_never_positive(&extent)? {
                    return Ok(self.nop());
                }
            }
        }
        self.loops
            .push((loop_.loop_var(), loop_.min(), extent.clone()));
        self.analyzer.push_scope();
        self.analyzer
            .bind_range(loop_.loop_var(), loop_.min(), extent.clone());
        let body = loop_.body();
        let new_body = self.visit(&body);
        self.loops.pop();
        self.analyzer.pop_scope()?;
        let new_body = new_body?;
        // C++ visits the bounds with the body (`StmtExprMutator`), folding them.
        let (old_min, old_step) = (loop_.min(), loop_.step());
        let min = self.folder.fold(&old_min)?;
        let new_extent = self.folder.fold(&extent)?;
        let step = match &old_step {
            Some(step) => Some(self.folder.fold(step)?),
            None => None,
        };
        if is_const(&new_extent, 0) {
            return Ok(self.nop());
        }
        if is_no_op(&new_body) {
            return self.make_evaluate_all(&[min, new_extent]);
        }
        let same_step = match (&step, &old_step) {
            (Some(a), Some(b)) => a.ptr_eq(b),
            _ => true,
        };
        if new_body.ptr_eq(&body) && min.ptr_eq(&old_min) && new_extent.ptr_eq(&extent) && same_step
        {
            return Ok(stmt.clone());
        }
        Ok(For::from_fields(
            loop_.base.span(),
            loop_.loop_var(),
            min,
            new_extent,
            loop_.kind(),
            new_body,
            loop_.thread_binding(),
            loop_.annotations(),
            step,
        )
        .upcast())
    }

    /// C++'s test of a symbolic loop extent: the upper bound of its value over the ranges of
    /// the enclosing loops (`arith::EvalSet`, interval arithmetic), when finite, proved at
    /// most 0 by the analyzer.
    fn extent_is_never_positive(&mut self, extent: &ObjectRef<Expr>) -> Result<bool> {
        let b = &self.build;
        let mut entries = Vec::with_capacity(self.loops.len());
        for (var, min, ext) in &self.loops {
            let set = if is_const(ext, 1) {
                b.single_point.call((min.clone(),))?
            } else {
                let end = b.add.call((ext.clone(), min.clone(), Any::default()))?;
                let last = b.sub.call((end, 1i32, Any::default()))?;
                b.interval.call((min.clone(), last))?
            };
            entries.push((var.clone(), set));
        }
        let dom_map = Map::<ObjectRef<Var>, Any>::new(entries)?;
        let set = b
            .int_set
            .call((b.eval_set_analyzer.clone(), extent.clone(), dom_map))?;
        let max = b.interval_max.call((set,))?.cast::<ObjectRef<Expr>>()?;
        if max.ptr_eq(&b.pos_inf) || max.ptr_eq(&b.neg_inf) {
            return Ok(false);
        }
        let zero = int_imm(dtype_of(&max).unwrap_or(DataType::INT32), 0);
        let le = b.le.call((max, zero, Any::default()))?;
        self.analyzer.can_prove(le)
    }

    /// C++ `IRMutatorWithAnalyzer::VisitStmt_(IfThenElse)`.
    fn visit_if(&mut self, stmt: &ObjectRef<Stmt>, node: &IfThenElse) -> Result<ObjectRef<Stmt>> {
        self.analyzer.push_scope();
        let out = self.visit_if_scoped(stmt, node);
        self.analyzer.pop_scope()?;
        out
    }

    fn visit_if_scoped(
        &mut self,
        stmt: &ObjectRef<Stmt>,
        node: &IfThenElse,
    ) -> Result<ObjectRef<Stmt>> {
        let old_condition = node.condition();
        let condition = self.folder.fold(&old_condition)?;
        let mut real = condition.clone();
        if let Some(call) = condition.downcast_ref::<Call>() {
            let callee = call.op();
            if self
                .build
                .likely
                .as_ref()
                .is_some_and(|op| op.ptr_eq(&callee))
            {
                if let Some(arg) = call.args().get(0) {
                    real = arg;
                }
            }
        }
        // As C++'s `ConstraintContext`, only a pure condition constrains the analyzer.
        let pure = self.effects.side_effect(&real)? <= PURE;
        let then_case = node.then_case();
        self.analyzer.push_scope();
        if pure {
            self.analyzer.constrain(real.clone());
        }
        let new_then = self.visit(&then_case);
        self.analyzer.pop_scope()?;
        let new_then = new_then?;
        let else_case = node.else_case();
        let new_else = match &else_case {
            Some(else_case) => {
                self.analyzer.push_scope();
                if pure {
                    self.analyzer.constrain_not(real.clone());
                }
                let out = self.visit(else_case);
                self.analyzer.pop_scope()?;
                Some(out?)
            }
            None => None,
        };
        if is_const(&real, 1) {
            return Ok(new_then);
        }
        if is_const(&real, 0) {
            return Ok(new_else.unwrap_or_else(|| self.nop()));
        }
        let same_else = match (&else_case, &new_else) {
            (Some(a), Some(b)) => a.ptr_eq(b),
            _ => true,
        };
        if condition.ptr_eq(&old_condition) && new_then.ptr_eq(&then_case) && same_else {
            return Ok(stmt.clone());
        }
        Ok(IfThenElse::from_fields(node.base.span(), condition, new_then, new_else).upcast())
    }

    /// `NoOpRemover::VisitStmt_(IfThenElse)` after the visit: no-op branches.
    fn remove_if_branches(&mut self, stmt: ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        let Some(node) = stmt.downcast_ref::<IfThenElse>() else {
            return Ok(stmt);
        };
        let condition = node.condition();
        let then_case = node.then_case();
        match node.else_case() {
            Some(else_case) => {
                let no_op_else = is_no_op(&else_case);
                let no_op_then = is_no_op(&then_case);
                if no_op_else && no_op_then {
                    self.make_evaluate(condition)
                } else if no_op_else {
                    Ok(IfThenElse::from_fields(None, condition, then_case, None).upcast())
                } else if no_op_then {
                    let negated = self.logical_not(condition)?;
                    Ok(IfThenElse::from_fields(None, negated, else_case, None).upcast())
                } else {
                    Ok(stmt)
                }
            }
            None if is_no_op(&then_case) => self.make_evaluate(condition),
            None => Ok(stmt),
        }
    }

    /// C++ `!expr` (`logical_not`, folded for a constant).
    fn logical_not(&mut self, expr: ObjectRef<Expr>) -> Result<ObjectRef<Expr>> {
        if let Some(value) = as_const_int(&expr) {
            return Ok(int_imm(DataType::BOOL, i64::from(value == 0)));
        }
        self.build
            .not
            .call((expr, Any::default()))?
            .cast::<ObjectRef<Expr>>()
    }

    fn visit_attr(&mut self, stmt: &ObjectRef<Stmt>, attr: &AttrStmt) -> Result<ObjectRef<Stmt>> {
        let key = attr.attr_key();
        match key.as_str() {
            "pragma_debug_skip_region" => return Ok(self.nop()),
            "async_wait_queue_scope" => {
                if let Some(inner) = attr.body().downcast_ref::<AttrStmt>() {
                    let count = inner.value();
                    let negative = match as_const_int(&count) {
                        Some(n) => n < 0,
                        None => {
                            let mut fresh = Analyzer::new(0)?;
                            let zero = int_imm(dtype_of(&count).unwrap_or(DataType::INT32), 0);
                            let lt = Function::get_global_required("prim._OpLT")?.call((
                                count.clone(),
                                zero,
                                Any::default(),
                            ))?;
                            fresh.can_prove(lt)?
                        }
                    };
                    if negative {
                        return self.visit(&inner.body());
                    }
                }
            }
            _ => {}
        }
        self.analyzer.push_scope();
        if key.as_str() == "thread_extent" || key.as_str() == "virtual_thread" {
            if let Ok(iter_var) = attr.node().cast::<ObjectRef<tvm_ffi::builtin::AnyObject>>() {
                if let Ok(var) = iter_var.get_field::<ObjectRef<Var>>("var") {
                    let value = attr.value();
                    let zero = int_imm(dtype_of(&value).unwrap_or(DataType::INT32), 0);
                    self.analyzer.bind_range(var, zero, value);
                }
            }
        }
        let body = attr.body();
        let new_body = self.visit(&body);
        self.analyzer.pop_scope()?;
        let new_body = new_body?;
        let old_value = attr.value();
        let value = self.folder.fold(&old_value)?;
        if is_no_op(&new_body) {
            return self.make_evaluate(value);
        }
        if new_body.ptr_eq(&body) && value.ptr_eq(&old_value) {
            return Ok(stmt.clone());
        }
        Ok(AttrStmt::from_fields(attr.base.span(), attr.node(), key, value, new_body).upcast())
    }

    fn visit_store(
        &mut self,
        stmt: &ObjectRef<Stmt>,
        store: &BufferStore,
    ) -> Result<ObjectRef<Stmt>> {
        let buffer = store.buffer();
        let value = store.value();
        let indices = store.indices();
        // The analyzer only knows pure facts (loop ranges, pure bindings, pure conditions):
        // unless the value itself reads the buffer, nothing can cancel the load of
        // `value - buffer[indices] == 0`, so the question is skipped.
        if loads_from(&value, &buffer)? {
            let load =
                self.build
                    .buffer_load
                    .call((buffer.clone(), indices.clone(), Any::default()))?;
            let diff = self.build.sub.call((value.clone(), load, Any::default()))?;
            let eq = self.build.eq.call((diff, 0i32, Any::default()))?;
            let simplified = self.analyzer.simplify(eq)?;
            if simplified
                .checked_cast::<ObjectRef<Expr>>()
                .is_some_and(|e| is_const(&e, 1))
            {
                return self.only_side_effects(&value, &indices);
            }
        }
        if let Some(load) = value.downcast_ref::<TensorLoad>() {
            if load.source().ptr_eq(&buffer) {
                let load_indices = load.indices();
                if load_indices.len() == indices.len() {
                    let mut equal = true;
                    for (a, b) in load_indices.iter().zip(indices.iter()) {
                        if !self.analyzer.can_prove_equal(&a, &b)? {
                            equal = false;
                            break;
                        }
                    }
                    if equal {
                        return self.only_side_effects(&value, &indices);
                    }
                }
            }
        }
        Ok(stmt.clone())
    }

    /// The side effects of evaluating a store's value and indices, without the store.
    fn only_side_effects(
        &mut self,
        value: &ObjectRef<Expr>,
        indices: &Array<ObjectRef<Expr>>,
    ) -> Result<ObjectRef<Stmt>> {
        let mut items = vec![self.make_evaluate(value.clone())?];
        for index in indices.iter() {
            items.push(self.make_evaluate(index)?);
        }
        let mut flat = Vec::new();
        for item in items {
            let visited = self.visit(&item)?;
            flatten_into(&mut flat, visited);
        }
        Ok(match flat.len() {
            0 => self.nop(),
            1 => flat.pop().expect("one statement"),
            _ => SeqStmt::from_fields(None, Array::new(flat)?).upcast(),
        })
    }
}
