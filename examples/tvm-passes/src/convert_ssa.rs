//! `tirx.transform.ConvertSSA` in Rust: C++'s `IRConvertSSA`, over every `PrimFunc` of a
//! module. A variable defined a second time (a parameter, loop variable, binding, `Let`,
//! buffer or thread index seen before, in this function or an earlier one) is replaced by a
//! fresh variable of the same name and type from that definition on; a buffer whose shape,
//! strides or offset use a replaced variable is rebuilt with a type of its own.
//!
//! Not handled (refused with an error naming the statement): `s_tir` blocks.

use crate::ir::{
    AllocBuffer, AssertStmt, AttrStmt, Bind, BufferStore, BufferType, DeclBuffer, Evaluate, Expr,
    For, IfThenElse, Iter, PrimFunc, SeqStmt, Stmt, TensorLoad, Var, While,
};
use std::collections::{HashMap, HashSet};
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{bail, Any, Array, Function, Map, ObjectRef, Result, String};

/// A hasher for object addresses (the keys of every table here): one multiplication.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_usize(&mut self, address: usize) {
        self.0 = (address as u64 >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type Build = std::hash::BuildHasherDefault<AddressHasher>;
pub(crate) type AddressMap<V> = HashMap<usize, V, Build>;

pub(crate) fn key<T: tvm_ffi::object::ObjectType>(object: &ObjectRef<T>) -> usize {
    object.as_raw().as_ptr() as usize
}

/// Fields of the expression types that hold expressions: `(name, is an array)`.
fn expr_fields(type_key: &str) -> &'static [(&'static str, bool)] {
    match type_key {
        "prim.Add" | "prim.Sub" | "prim.Mul" | "prim.Div" | "prim.Mod" | "prim.FloorDiv"
        | "prim.FloorMod" | "prim.Min" | "prim.Max" | "prim.EQ" | "prim.NE" | "prim.LT"
        | "prim.LE" | "prim.GT" | "prim.GE" | "prim.And" | "prim.Or" => {
            &[("a", false), ("b", false)]
        }
        "prim.Not" => &[("a", false)],
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

/// C++ `IRConvertSSA`.
#[derive(Default)]
pub struct ConvertSsa {
    var_remap: AddressMap<Vec<ObjectRef<Var>>>,
    defined: HashSet<usize, Build>,
    buf_remap: AddressMap<Vec<ObjectRef<Var>>>,
    function_scope_var_remap: AddressMap<ObjectRef<Var>>,
    /// The remaps of each open scope: `(old, new)`.
    scopes: Vec<Vec<(ObjectRef<Var>, ObjectRef<Var>)>>,
    /// How many remaps `var_remap` holds: with none (and no thread index remapped), no buffer
    /// type can change.
    active: usize,
}

impl ConvertSsa {
    pub fn new() -> Self {
        ConvertSsa {
            scopes: vec![Vec::new()],
            ..ConvertSsa::default()
        }
    }

    fn make_new_var(old: &ObjectRef<Var>) -> ObjectRef<Var> {
        Var::from_fields(None, old.base.ty(), old.name())
    }

    fn push_remap(&mut self, old: &ObjectRef<Var>, new: &ObjectRef<Var>) {
        self.var_remap
            .entry(key(old))
            .or_default()
            .push(new.clone());
        self.active += 1;
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .push((old.clone(), new.clone()));
    }

    /// Undoes one remap (`PopVarRemap` and a scope's end): the buffers rebuilt on the new
    /// variable are forgotten.
    fn undo(&mut self, old: &ObjectRef<Var>, new: &ObjectRef<Var>) -> Result<()> {
        if let Some(stack) = self.var_remap.get_mut(&key(old)) {
            if stack.pop().is_some() {
                self.active -= 1;
            }
        }
        let keys: Vec<usize> = self.buf_remap.keys().copied().collect();
        for k in keys {
            let depends = match self.buf_remap.get(&k).and_then(|b| b.last()) {
                Some(buffer) => buffer_depends_on(buffer, new)?,
                None => false,
            };
            if depends {
                self.buf_remap.get_mut(&k).expect("present").pop();
            }
        }
        Ok(())
    }

    fn with_scope<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.scopes.push(Vec::new());
        let out = f(self);
        let remaps = self.scopes.pop().expect("a scope is open");
        for (old, new) in remaps.iter().rev() {
            self.undo(old, new)?;
        }
        out
    }

    fn remapped_var(&self, var: &ObjectRef<Var>) -> ObjectRef<Var> {
        if let Some(new) = self.var_remap.get(&key(var)).and_then(|s| s.last()) {
            return new.clone();
        }
        if let Some(new) = self.function_scope_var_remap.get(&key(var)) {
            return new.clone();
        }
        var.clone()
    }

    fn visit_exprs(&mut self, items: &Array<ObjectRef<Expr>>) -> Result<Array<ObjectRef<Expr>>> {
        // The new items, from the first that changed on (none allocated while none changes).
        let mut out: Option<Vec<ObjectRef<Expr>>> = None;
        for (i, item) in items.iter().enumerate() {
            let new = self.visit_expr(&item)?;
            match &mut out {
                Some(out) => out.push(new),
                None if !new.ptr_eq(&item) => {
                    let mut changed = Vec::with_capacity(items.len());
                    changed.extend(items.iter().take(i));
                    changed.push(new);
                    out = Some(changed);
                }
                None => {}
            }
        }
        match out {
            Some(out) => Array::new(out),
            None => Ok(items.clone()),
        }
    }

    pub fn visit_expr(&mut self, expr: &ObjectRef<Expr>) -> Result<ObjectRef<Expr>> {
        if let Some(var) = expr.downcast_ref::<Var>() {
            return Ok(self.remapped_var(var).upcast());
        }
        if expr.is_instance::<crate::ir::IntImm>() || expr.is_instance::<crate::ir::FloatImm>() {
            return Ok(expr.clone());
        }
        if let Some(load) = expr.downcast_ref::<TensorLoad>() {
            let indices = self.visit_exprs(&load.indices())?;
            let source = load.source();
            let buffer = match source.downcast::<Var>() {
                Some(buffer) if is_buffer(&buffer) => self.remapped_buffer(&buffer)?.upcast(),
                _ => self.visit_expr(&source)?,
            };
            if indices
                .as_object_ref()
                .ptr_eq(load.indices().as_object_ref())
                && buffer.ptr_eq(&source)
            {
                return Ok(expr.clone());
            }
            let base = &load.base;
            return Ok(TensorLoad::from_fields(base.span(), base.ty(), buffer, indices).upcast());
        }
        if let Some(let_) = expr.downcast_ref::<crate::ir::Let>() {
            let var = let_.var();
            if self.defined.contains(&key(&var)) {
                let value = self.visit_expr(&let_.value())?;
                let new_var = Self::make_new_var(&var);
                self.push_remap(&var, &new_var);
                let body = self.visit_expr(&let_.body());
                // `PopVarRemap`: this remap only, out of the current scope's list.
                self.undo(&var, &new_var)?;
                if let Some(scope) = self.scopes.last_mut() {
                    if scope.last().is_some_and(|(_, n)| n.ptr_eq(&new_var)) {
                        scope.pop();
                    }
                }
                let body = body?;
                let made = Function::get_global_required("prim.Let")?.call((
                    new_var,
                    value,
                    body,
                    Any::default(),
                ))?;
                return made.cast();
            }
            self.defined.insert(key(&var));
        }
        if let Some(out) = self.visit_binary(expr)? {
            return Ok(out);
        }
        if let Some(call) = expr.downcast_ref::<crate::ir::Call>() {
            let args = self.visit_exprs(&call.args())?;
            if args.as_object_ref().ptr_eq(call.args().as_object_ref()) {
                return Ok(expr.clone());
            }
            return expr.copy_with([("args", Any::new(args))]);
        }
        let fields: &[(&str, bool)] = if expr.type_key() == "prim.Let" {
            &[("value", false), ("body", false)]
        } else {
            expr_fields(expr.type_key())
        };
        let mut replacements = Vec::new();
        for &(name, is_array) in fields {
            if is_array {
                let items = expr.get_field::<Array<ObjectRef<Expr>>>(name)?;
                let new = self.visit_exprs(&items)?;
                if !new.as_object_ref().ptr_eq(items.as_object_ref()) {
                    replacements.push((name, Any::new(new)));
                }
            } else {
                let item = expr.get_field::<ObjectRef<Expr>>(name)?;
                let new = self.visit_expr(&item)?;
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

    /// The binary operators, through their generated types (`None`: not one of them).
    fn visit_binary(&mut self, expr: &ObjectRef<Expr>) -> Result<Option<ObjectRef<Expr>>> {
        macro_rules! binary {
            ($($ty:ident),*) => {
                $(
                    if let Some(node) = expr.downcast_ref::<crate::ir::$ty>() {
                        let (a, b) = (node.a(), node.b());
                        let (new_a, new_b) = (self.visit_expr(&a)?, self.visit_expr(&b)?);
                        if new_a.ptr_eq(&a) && new_b.ptr_eq(&b) {
                            return Ok(Some(expr.clone()));
                        }
                        let base = &node.base;
                        return Ok(Some(
                            crate::ir::$ty::from_fields(base.span(), base.ty(), new_a, new_b)
                                .upcast(),
                        ));
                    }
                )*
            };
        }
        binary!(
            Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or
        );
        Ok(None)
    }

    /// C++ `GetRemappedBuffer`.
    fn remapped_buffer(&mut self, buf: &ObjectRef<Var>) -> Result<ObjectRef<Var>> {
        if self.active == 0 && self.function_scope_var_remap.is_empty() {
            return Ok(buf.clone());
        }
        let new_var = self.remapped_var(buf);
        // C++ checks this cache after visiting the type; for a renamed buffer the answer is
        // the same before, and the visit is saved.
        if !new_var.ptr_eq(buf) {
            if let Some(last) = self.buf_remap.get(&key(buf)).and_then(|b| b.last()) {
                if last.ptr_eq(&new_var) {
                    return Ok(last.clone());
                }
            }
        }
        let Some(ty) = buf.base.ty().and_then(|t| t.downcast::<BufferType>()) else {
            return Ok(new_var);
        };
        let elem_offset = match ty.elem_offset.get() {
            Some(e) => Some(self.visit_expr(&e)?),
            None => None,
        };
        let shape = self.visit_exprs(&ty.shape.get())?;
        let strides = self.visit_exprs(&ty.strides.get())?;
        let new_layout = self.remapped_tile_layout(ty.layout.get())?;
        let same_opt = |a: &Option<ObjectRef<Expr>>, b: &Option<ObjectRef<Expr>>| match (a, b) {
            (Some(a), Some(b)) => a.ptr_eq(b),
            (None, None) => true,
            _ => false,
        };
        let layout_changed = new_layout.is_some();
        let unchanged_fields = |t: &ObjectRef<BufferType>| {
            !layout_changed
                && shape.as_object_ref().ptr_eq(t.shape.get().as_object_ref())
                && strides
                    .as_object_ref()
                    .ptr_eq(t.strides.get().as_object_ref())
                && same_opt(&elem_offset, &t.elem_offset.get())
        };
        if new_var.ptr_eq(buf) && unchanged_fields(&ty) {
            return Ok(buf.clone());
        }
        if let Some(last) = self.buf_remap.get(&key(buf)).and_then(|b| b.last()) {
            if last.ptr_eq(&new_var) {
                return Ok(last.clone());
            }
        }
        if let Some(new_ty) = new_var.base.ty().and_then(|t| t.downcast::<BufferType>()) {
            if unchanged_fields(&new_ty) {
                self.buf_remap
                    .entry(key(buf))
                    .or_default()
                    .push(new_var.clone());
                return Ok(new_var);
            }
        }
        let mut replacements = vec![
            ("shape", Any::new(shape)),
            ("strides", Any::new(strides)),
            ("elem_offset", Any::new(elem_offset)),
        ];
        if let Some(layout) = new_layout {
            replacements.push(("layout", layout));
        }
        let new_ty = ty.copy_with(replacements)?;
        let new_buf = Var::from_fields(buf.base.span(), Some(new_ty.upcast()), new_var.name());
        let k = key(buf);
        if let Some(last) = self.var_remap.get_mut(&k).and_then(|s| s.last_mut()) {
            if last.ptr_eq(&new_var) {
                *last = new_buf.clone();
                self.buf_remap.entry(k).or_default().push(new_buf.clone());
                return Ok(new_buf);
            }
        }
        if let Some(function_var) = self.function_scope_var_remap.get_mut(&k) {
            if function_var.ptr_eq(&new_var) {
                *function_var = new_buf.clone();
                self.buf_remap.entry(k).or_default().push(new_buf.clone());
                return Ok(new_buf);
            }
        }
        self.push_remap(buf, &new_buf);
        self.buf_remap.entry(k).or_default().push(new_buf.clone());
        Ok(new_buf)
    }

    /// A `tirx.TileLayout` whose iterators' extents or strides use a remapped variable, rebuilt
    /// (`None`: the layout is unchanged).
    fn remapped_tile_layout(
        &mut self,
        layout: Option<ObjectRef<crate::ir::Layout>>,
    ) -> Result<Option<Any>> {
        let Some(layout) = layout.filter(|l| l.type_key() == "tirx.TileLayout") else {
            return Ok(None);
        };
        let make_iter = Function::get_global_required("tirx.Iter")?;
        let mut changed = false;
        let mut parts = Vec::new();
        for name in ["shard", "replica"] {
            let iters = layout.get_field::<Array<ObjectRef<Iter>>>(name)?;
            let mut out = Vec::with_capacity(iters.len());
            for it in iters.iter() {
                let extent = self.visit_expr(&it.extent())?;
                let stride = self.visit_expr(&it.stride())?;
                if extent.ptr_eq(&it.extent()) && stride.ptr_eq(&it.stride()) {
                    out.push(Any::new(it));
                } else {
                    changed = true;
                    out.push(make_iter.call((extent, stride, it.axis.get()))?);
                }
            }
            parts.push(Array::new(out)?);
        }
        if !changed {
            return Ok(None);
        }
        let replica = parts.pop().expect("replica");
        let shard = parts.pop().expect("shard");
        let offset = layout.get_field_any("offset")?;
        Ok(Some(
            Function::get_global_required("tirx.TileLayout")?.call((shard, replica, offset))?,
        ))
    }

    fn define(&mut self, var: &ObjectRef<Var>) {
        if self.defined.contains(&key(var)) {
            let new = Self::make_new_var(var);
            self.push_remap(var, &new);
        } else {
            self.defined.insert(key(var));
        }
    }

    pub fn visit_stmt(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        if let Some(seq) = stmt.downcast_ref::<SeqStmt>() {
            let items = seq.seq();
            let mut visited = Vec::with_capacity(items.len());
            for item in items.iter() {
                visited.push(self.visit_stmt(&item)?);
            }
            return crate::seq::flatten(stmt, seq, visited);
        }
        if let Some(eval) = stmt.downcast_ref::<Evaluate>() {
            let value = eval.value();
            let new = self.visit_expr(&value)?;
            if new.ptr_eq(&value) {
                return Ok(stmt.clone());
            }
            return Ok(Evaluate::from_fields(eval.base.span(), new).upcast());
        }
        if let Some(store) = stmt.downcast_ref::<BufferStore>() {
            let value = self.visit_expr(&store.value())?;
            let indices = self.visit_exprs(&store.indices())?;
            let buffer = self.remapped_buffer(&store.buffer())?;
            if value.ptr_eq(&store.value())
                && indices
                    .as_object_ref()
                    .ptr_eq(store.indices().as_object_ref())
                && buffer.ptr_eq(&store.buffer())
            {
                return Ok(stmt.clone());
            }
            return Ok(
                BufferStore::from_fields(store.base.span(), buffer, value, indices).upcast(),
            );
        }
        if let Some(bind) = stmt.downcast_ref::<Bind>() {
            let var = bind.var();
            let value = self.visit_expr(&bind.value())?;
            if self.defined.contains(&key(&var)) {
                let new_var = Self::make_new_var(&var);
                self.push_remap(&var, &new_var);
                return Ok(Bind::from_fields(None, new_var, value).upcast());
            }
            self.defined.insert(key(&var));
            if value.ptr_eq(&bind.value()) {
                return Ok(stmt.clone());
            }
            return Ok(Bind::from_fields(bind.base.span(), var, value).upcast());
        }
        if let Some(decl) = stmt.downcast_ref::<DeclBuffer>() {
            let buffer = decl.buffer();
            self.define(&buffer);
            let data = self.visit_expr(&decl.data())?;
            let new_buffer = self.remapped_buffer(&buffer)?;
            if data.ptr_eq(&decl.data()) && new_buffer.ptr_eq(&buffer) {
                return Ok(stmt.clone());
            }
            return Ok(DeclBuffer::from_fields(decl.base.span(), new_buffer, data).upcast());
        }
        if let Some(alloc) = stmt.downcast_ref::<AllocBuffer>() {
            let buffer = alloc.buffer();
            self.define(&buffer);
            let new_buffer = self.remapped_buffer(&buffer)?;
            if new_buffer.ptr_eq(&buffer) {
                return Ok(stmt.clone());
            }
            return Ok(AllocBuffer::from_fields(
                alloc.base.span(),
                new_buffer,
                alloc.annotations(),
            )
            .upcast());
        }
        if let Some(loop_) = stmt.downcast_ref::<For>() {
            let var = loop_.loop_var();
            let redefined = self.defined.contains(&key(&var));
            if !redefined {
                self.defined.insert(key(&var));
            }
            return self.with_scope(|this| {
                let new_var = if redefined {
                    let new_var = Self::make_new_var(&var);
                    this.push_remap(&var, &new_var);
                    new_var
                } else {
                    var.clone()
                };
                let min = this.visit_expr(&loop_.min())?;
                let extent = this.visit_expr(&loop_.extent())?;
                let step = match loop_.step() {
                    Some(s) => Some(this.visit_expr(&s)?),
                    None => None,
                };
                let body = this.visit_stmt(&loop_.body())?;
                let same_step = match (&step, &loop_.step()) {
                    (Some(a), Some(b)) => a.ptr_eq(b),
                    _ => true,
                };
                if !redefined
                    && min.ptr_eq(&loop_.min())
                    && extent.ptr_eq(&loop_.extent())
                    && same_step
                    && body.ptr_eq(&loop_.body())
                {
                    return Ok(stmt.clone());
                }
                Ok(For::from_fields(
                    loop_.base.span(),
                    new_var,
                    min,
                    extent,
                    loop_.kind(),
                    body,
                    loop_.thread_binding(),
                    loop_.annotations(),
                    step,
                )
                .upcast())
            });
        }
        if let Some(node) = stmt.downcast_ref::<IfThenElse>() {
            let condition = self.visit_expr(&node.condition())?;
            let then_case = self.with_scope(|this| this.visit_stmt(&node.then_case()))?;
            let else_case = match node.else_case() {
                Some(e) => Some(self.with_scope(|this| this.visit_stmt(&e))?),
                None => None,
            };
            let same_else = match (&else_case, &node.else_case()) {
                (Some(a), Some(b)) => a.ptr_eq(b),
                _ => true,
            };
            if condition.ptr_eq(&node.condition())
                && then_case.ptr_eq(&node.then_case())
                && same_else
            {
                return Ok(stmt.clone());
            }
            return Ok(IfThenElse::from_fields(None, condition, then_case, else_case).upcast());
        }
        if let Some(node) = stmt.downcast_ref::<While>() {
            return self.with_scope(|this| {
                let condition = this.visit_expr(&node.condition())?;
                let body = this.visit_stmt(&node.body())?;
                if condition.ptr_eq(&node.condition()) && body.ptr_eq(&node.body()) {
                    return Ok(stmt.clone());
                }
                Ok(While::from_fields(node.base.span(), condition, body).upcast())
            });
        }
        if let Some(assert) = stmt.downcast_ref::<AssertStmt>() {
            let condition = self.visit_expr(&assert.condition())?;
            if condition.ptr_eq(&assert.condition()) {
                return Ok(stmt.clone());
            }
            return stmt.copy_with([("condition", Any::new(condition))]);
        }
        if let Some(attr) = stmt.downcast_ref::<AttrStmt>() {
            return self.visit_attr(stmt, attr);
        }
        match stmt.type_key() {
            key @ ("s_tir.SBlockRealize" | "s_tir.SBlock") => {
                bail!(
                    NotImplementedError,
                    "the Rust ConvertSSA does not handle `{key}`"
                )
            }
            _ => Ok(stmt.clone()),
        }
    }

    fn visit_attr(&mut self, stmt: &ObjectRef<Stmt>, attr: &AttrStmt) -> Result<ObjectRef<Stmt>> {
        let node = attr.node();
        if node.type_key() == "tirx.IterVar" {
            let iter_var = node.cast::<ObjectRef<AnyObject>>()?;
            let dom = iter_var.get_field::<Option<ObjectRef<crate::ir::Range>>>("dom")?;
            let new_dom = match &dom {
                Some(dom) => {
                    let min = self.visit_expr(&dom.min())?;
                    let extent = self.visit_expr(&dom.extent())?;
                    if min.ptr_eq(&dom.min()) && extent.ptr_eq(&dom.extent()) {
                        Some(dom.clone())
                    } else {
                        Some(
                            Function::get_global_required("ir.Range_from_min_extent")?
                                .call((min, extent, Any::default()))?
                                .cast::<ObjectRef<crate::ir::Range>>()?,
                        )
                    }
                }
                None => None,
            };
            let old_var = iter_var.get_field::<ObjectRef<Var>>("var")?;
            let mut var = old_var.clone();
            let mut delayed_define = false;
            if let Some(mapped) = self.function_scope_var_remap.get(&key(&old_var)) {
                var = mapped.clone();
            } else if self.defined.contains(&key(&old_var)) {
                let new_var = Self::make_new_var(&old_var);
                self.function_scope_var_remap
                    .insert(key(&old_var), new_var.clone());
                var = new_var;
            } else {
                delayed_define = true;
            }
            let same_dom = match (&dom, &new_dom) {
                (Some(a), Some(b)) => a.ptr_eq(b),
                _ => true,
            };
            let new_iter_var = if same_dom && var.ptr_eq(&old_var) {
                node.clone()
            } else {
                Function::get_global_required("tirx.IterVar")?.call((
                    new_dom,
                    var.clone(),
                    iter_var.get_field_any("iter_type")?,
                    iter_var.get_field::<String>("thread_tag")?,
                    iter_var.get_field_any("span")?,
                ))?
            };
            let value = self.visit_expr(&attr.value())?;
            let body = self.with_scope(|this| this.visit_stmt(&attr.body()))?;
            let same_node = new_iter_var
                .checked_cast::<ObjectRef<AnyObject>>()
                .is_some_and(|n| n.ptr_eq(&iter_var));
            let output = if same_node && body.ptr_eq(&attr.body()) && value.ptr_eq(&attr.value()) {
                stmt.clone()
            } else {
                AttrStmt::from_fields(
                    iter_var.get_field("span")?,
                    new_iter_var,
                    attr.attr_key(),
                    value,
                    body,
                )
                .upcast()
            };
            if delayed_define && !self.defined.contains(&key(&var)) {
                self.function_scope_var_remap.insert(key(&var), var.clone());
                self.defined.insert(key(&var));
            }
            return Ok(output);
        }
        let node_var = node.checked_cast::<ObjectRef<Var>>();
        let out = self.with_scope(|this| {
            let value = this.visit_expr(&attr.value())?;
            let body = this.visit_stmt(&attr.body())?;
            if value.ptr_eq(&attr.value()) && body.ptr_eq(&attr.body()) {
                return Ok(stmt.clone());
            }
            Ok(
                AttrStmt::from_fields(attr.base.span(), attr.node(), attr.attr_key(), value, body)
                    .upcast(),
            )
        })?;
        if let Some(var) = node_var {
            if let Some(new) = self.var_remap.get(&key(&var)).and_then(|s| s.last()) {
                let out_attr = out.downcast_ref::<AttrStmt>().expect("an AttrStmt");
                return Ok(AttrStmt::from_fields(
                    None,
                    Any::new(new.clone()),
                    out_attr.attr_key(),
                    out_attr.value(),
                    out_attr.body(),
                )
                .upcast());
            }
        }
        Ok(out)
    }

    /// C++ `IRConvertSSA::VisitPrimFunc`.
    pub fn visit_prim_func(&mut self, func: ObjectRef<PrimFunc>) -> Result<ObjectRef<PrimFunc>> {
        let old_params = func.params();
        let mut params = Vec::with_capacity(old_params.len());
        for var in old_params.iter() {
            if self.defined.contains(&key(&var)) {
                let new_var = Self::make_new_var(&var);
                self.push_remap(&var, &new_var);
                params.push(new_var);
            } else {
                self.defined.insert(key(&var));
                params.push(var);
            }
        }
        let defined_params: HashSet<usize> = old_params.iter().map(|v| key(&v)).collect();
        let mut defined_match_vars = HashSet::new();
        for param in old_params.iter() {
            let Some(ty) = param.base.ty().and_then(|t| t.downcast::<BufferType>()) else {
                continue;
            };
            let mut vars = Vec::new();
            for dim in ty.shape.get().iter() {
                collect_vars(&dim, &mut vars)?;
            }
            for stride in ty.strides.get().iter() {
                if let Some(v) = stride.downcast::<Var>() {
                    vars.push(v);
                }
            }
            if let Some(v) = ty.elem_offset.get().and_then(|e| e.downcast::<Var>()) {
                vars.push(v);
            }
            for var in vars {
                if defined_params.contains(&key(&var)) || !defined_match_vars.insert(key(&var)) {
                    continue;
                }
                self.define(&var);
            }
        }
        let mut params_changed = params
            .iter()
            .zip(old_params.iter())
            .any(|(a, b)| !a.ptr_eq(&b));
        for (i, param) in old_params.iter().enumerate() {
            if is_buffer(&param) {
                let new_buffer = self.remapped_buffer(&param)?;
                if !new_buffer.ptr_eq(&param) || !params[i].ptr_eq(&new_buffer) {
                    params_changed = true;
                    params[i] = new_buffer;
                }
            }
        }
        let attrs = func.base.attrs();
        let mut new_attrs = attrs.clone();
        let dict = attrs.__dict__.get();
        let mut entries = Vec::new();
        let mut attrs_changed = false;
        for (k, v) in dict.iter() {
            let mut value = v.clone();
            if let Some(stmt) = v.checked_cast::<ObjectRef<Stmt>>() {
                let new = self.visit_stmt(&stmt)?;
                attrs_changed |= !new.ptr_eq(&stmt);
                value = Any::new(new);
            } else if let Some(expr) = v.checked_cast::<ObjectRef<Expr>>() {
                if crate::expr::is_prim(&expr) {
                    let new = self.visit_expr(&expr)?;
                    attrs_changed |= !new.ptr_eq(&expr);
                    value = Any::new(new);
                }
            }
            entries.push((k, value));
        }
        if attrs_changed {
            let made = Function::get_global_required("ir.DictAttrs")?
                .call((Map::<String, Any>::new(entries)?,))?;
            new_attrs = made.cast::<ObjectRef<crate::ir::DictAttrs>>()?;
        }
        let body = func.body();
        let new_body = self.visit_stmt(&body)?;
        let out = if params_changed || attrs_changed || !new_body.ptr_eq(&body) {
            Function::get_global_required("tirx.PrimFunc")?
                .call((
                    Array::new(params)?,
                    new_body,
                    func.ret_type(),
                    new_attrs,
                    Any::default(),
                ))?
                .cast::<ObjectRef<PrimFunc>>()?
        } else {
            func
        };
        // `PopAllRemapsInCurrentScope` (the function's level) and the function's thread indices.
        let remaps = std::mem::take(self.scopes.last_mut().expect("a scope is open"));
        for (old, new) in remaps.iter().rev() {
            self.undo(old, new)?;
        }
        self.function_scope_var_remap.clear();
        Ok(out)
    }
}

fn is_buffer(var: &ObjectRef<Var>) -> bool {
    var.base.ty().is_some_and(|t| t.is_instance::<BufferType>())
}

/// The variables of an expression, in C++'s post order (`PostOrderVisit`).
fn collect_vars(expr: &ObjectRef<Expr>, out: &mut Vec<ObjectRef<Var>>) -> Result<()> {
    if let Some(var) = expr.downcast::<Var>() {
        out.push(var);
        return Ok(());
    }
    for &(name, is_array) in expr_fields(expr.type_key()) {
        if is_array {
            for item in expr.get_field::<Array<ObjectRef<Expr>>>(name)?.iter() {
                collect_vars(&item, out)?;
            }
        } else {
            collect_vars(&expr.get_field::<ObjectRef<Expr>>(name)?, out)?;
        }
    }
    Ok(())
}

/// C++ `BufferDependsOnVar`: whether the buffer is `var` or its shape, strides or offset use it.
fn buffer_depends_on(buffer: &ObjectRef<Var>, var: &ObjectRef<Var>) -> Result<bool> {
    if buffer.ptr_eq(var) {
        return Ok(true);
    }
    let Some(ty) = buffer.base.ty().and_then(|t| t.downcast::<BufferType>()) else {
        return Ok(false);
    };
    let mut exprs: Vec<ObjectRef<Expr>> = ty.shape.get().iter().collect();
    exprs.extend(ty.strides.get().iter());
    exprs.extend(ty.elem_offset.get());
    if let Some(layout) = ty
        .layout
        .get()
        .filter(|l| l.type_key() == "tirx.TileLayout")
    {
        for name in ["shard", "replica"] {
            for it in layout.get_field::<Array<ObjectRef<Iter>>>(name)?.iter() {
                exprs.push(it.extent());
                exprs.push(it.stride());
            }
        }
    }
    for e in exprs {
        let mut vars = Vec::new();
        collect_vars(&e, &mut vars)?;
        if vars.iter().any(|v| v.ptr_eq(var)) {
            return Ok(true);
        }
    }
    Ok(false)
}
