//! `tirx.transform.ConvertSSA` in Rust: C++'s `IRConvertSSA`, over every `PrimFunc` of a
//! module. A variable defined a second time (a parameter, loop variable, binding, `Let`,
//! buffer or thread index seen before, in this function or an earlier one) is replaced by a
//! fresh variable of the same name and type from that definition on; a buffer whose shape,
//! strides or offset use a replaced variable is rebuilt with a type of its own.
//!
//! `s_tir` blocks (`s_tir.SBlockRealize`, `s_tir.SBlock`, outside the generated namespaces:
//! read by field name) are visited as TVM 0.27's C++ pass visits them, which the tests check:
//! they open no scope and define nothing; their expressions are renamed.

use crate::expr::expr_fields;
use crate::ir::{
    AllocBuffer, AssertStmt, AttrStmt, Bind, BufferStore, BufferType, Call, DeclBuffer, Evaluate,
    Expr, FloatImm, For, IfThenElse, IntImm, Iter, IterVar, Layout, Let, PrimFunc, Range, SeqStmt,
    Stmt, StringImm, TensorLoad, TensorRegion, TileLayout, Var, While,
};
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::object::ObjectType;
use tvm_ffi::{Any, Array, Function, Map, ObjectRef, Result, String};

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

pub(crate) fn key<T: ObjectType>(object: &ObjectRef<T>) -> usize {
    object.as_raw().as_ptr() as usize
}

/// `object` as a `T` when its dynamic type (`index`) is exactly `T`: one comparison, where a
/// failed `downcast_ref` of a subtype-capable type looks the type's ancestry up.
fn exact<T: ObjectType>(index: i32, object: &ObjectRef<impl ObjectType>) -> Option<&ObjectRef<T>> {
    if index == T::type_index() {
        object.downcast_ref::<T>()
    } else {
        None
    }
}

/// Whether two arrays are the same object (C++ `same_as`).
fn same_array<T>(a: &Array<T>, b: &Array<T>) -> bool {
    a.as_object_ref().ptr_eq(b.as_object_ref())
}

/// Whether two optional objects are the same object, or both absent.
fn same_opt<T: ObjectType>(a: &Option<ObjectRef<T>>, b: &Option<ObjectRef<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.ptr_eq(b),
        (None, None) => true,
        _ => false,
    }
}

/// The TVM globals the pass calls, each looked up once per run.
#[derive(Clone, Copy)]
enum Global {
    Let,
    IterVar,
    RangeFromMinExtent,
    Iter,
    TileLayout,
    MatchBufferRegion,
}

#[derive(Default)]
struct Globals([Option<Function>; 6]);

impl Globals {
    fn get(&mut self, which: Global) -> Result<&Function> {
        let name = match which {
            Global::Let => "prim.Let",
            Global::IterVar => "tirx.IterVar",
            Global::RangeFromMinExtent => "ir.Range_from_min_extent",
            Global::Iter => "tirx.Iter",
            Global::TileLayout => "tirx.TileLayout",
            Global::MatchBufferRegion => "s_tir.MatchBufferRegion",
        };
        let slot = &mut self.0[which as usize];
        if slot.is_none() {
            *slot = Some(Function::get_global_required(name)?);
        }
        Ok(slot.as_ref().expect("looked up just above"))
    }
}

/// A buffer of `buf_remap`, with the variables its type uses: what `BufferDependsOnVar` asks
/// at every scope's end, found once (a buffer's type does not change during the pass).
struct RemappedBuffer {
    buffer: ObjectRef<Var>,
    /// The variable that the buffer's own variable was remapped to when it was built: the
    /// buffer itself, but for a definition's buffer rebuilt after its variable was renamed
    /// (see `remapped_buffer_at`).
    built_for: ObjectRef<Var>,
    uses: Vec<usize>,
}

impl RemappedBuffer {
    fn new(buffer: ObjectRef<Var>, built_for: ObjectRef<Var>) -> Result<Self> {
        let mut uses = Vec::new();
        for expr in buffer_exprs(&buffer)? {
            any_var(&expr, &mut |var| {
                uses.push(key(var));
                false
            })?;
        }
        Ok(RemappedBuffer {
            buffer,
            built_for,
            uses,
        })
    }

    /// Whether this is the buffer of a variable now remapped to `var`.
    fn is_for(&self, var: &ObjectRef<Var>) -> bool {
        self.buffer.ptr_eq(var) || self.built_for.ptr_eq(var)
    }

    /// C++ `BufferDependsOnVar`: whether the buffer is `var` or its type uses it.
    fn depends_on(&self, var: &ObjectRef<Var>) -> bool {
        self.buffer.ptr_eq(var) || self.uses.contains(&key(var))
    }
}

/// What `GetRemappedBuffer` needs to know of a buffer's type when the buffer itself is not
/// renamed: the variables its expressions use, if visiting them does nothing but rename those
/// (`None` otherwise). The buffer is held so that its address stays its own.
struct TypeVars {
    _buffer: ObjectRef<Var>,
    vars: Option<Vec<usize>>,
}

impl TypeVars {
    fn new(buffer: &ObjectRef<Var>) -> Result<Self> {
        let mut vars = Vec::new();
        for expr in buffer_exprs(buffer)? {
            if !renames_only(&expr)? {
                return Ok(TypeVars {
                    _buffer: buffer.clone(),
                    vars: None,
                });
            }
            any_var(&expr, &mut |var| {
                vars.push(key(var));
                false
            })?;
        }
        Ok(TypeVars {
            _buffer: buffer.clone(),
            vars: Some(vars),
        })
    }
}

/// C++ `IRConvertSSA`.
#[derive(Default)]
pub struct ConvertSsa {
    var_remap: AddressMap<Vec<ObjectRef<Var>>>,
    defined: HashSet<usize, Build>,
    buf_remap: AddressMap<Vec<RemappedBuffer>>,
    /// Per buffer seen by `remapped_buffer`: see `TypeVars`.
    type_vars: AddressMap<TypeVars>,
    function_scope_var_remap: AddressMap<ObjectRef<Var>>,
    /// The remaps of each open scope: `(old, new)`.
    scopes: Vec<Vec<(ObjectRef<Var>, ObjectRef<Var>)>>,
    /// How many remaps `var_remap` holds: with none (and no thread index remapped), no buffer
    /// type can change.
    active: usize,
    globals: Globals,
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
    fn undo(&mut self, old: &ObjectRef<Var>, new: &ObjectRef<Var>) {
        if let Some(stack) = self.var_remap.get_mut(&key(old)) {
            if stack.pop().is_some() {
                self.active -= 1;
            }
        }
        for buffers in self.buf_remap.values_mut() {
            if buffers.last().is_some_and(|b| b.depends_on(new)) {
                buffers.pop();
            }
        }
    }

    fn with_scope<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.scopes.push(Vec::new());
        let out = f(self);
        let remaps = self.scopes.pop().expect("a scope is open");
        for (old, new) in remaps.iter().rev() {
            self.undo(old, new);
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
        // One read of the dynamic type, compared with each type's index (the common types are
        // final, so equality is the test); subtypes and rare types take the general path.
        let index = expr.type_index();
        if let Some(var) = exact::<Var>(index, expr) {
            return Ok(self.remapped_var(var).upcast());
        }
        if index == IntImm::type_index()
            || index == FloatImm::type_index()
            || index == StringImm::type_index()
        {
            return Ok(expr.clone());
        }
        if let Some(out) = self.visit_binary(index, expr)? {
            return Ok(out);
        }
        if let Some(load) = exact::<TensorLoad>(index, expr) {
            let old_indices = load.indices();
            let indices = self.visit_exprs(&old_indices)?;
            let source = load.source();
            let buffer = match source.downcast_ref::<Var>() {
                Some(buffer) if is_buffer(buffer) => self.remapped_buffer(buffer)?.upcast(),
                _ => self.visit_expr(&source)?,
            };
            if same_array(&indices, &old_indices) && buffer.ptr_eq(&source) {
                return Ok(expr.clone());
            }
            let base = &load.base;
            return Ok(TensorLoad::from_fields(base.span(), base.ty(), buffer, indices).upcast());
        }
        if let Some(call) = exact::<Call>(index, expr) {
            let old_args = call.args();
            let args = self.visit_exprs(&old_args)?;
            if same_array(&args, &old_args) {
                return Ok(expr.clone());
            }
            // Through reflection: `attrs` may be null, which `Call::from_fields` cannot take.
            return expr.copy_with([("args", Any::new(args))]);
        }
        if let Some(let_) = exact::<Let>(index, expr) {
            return self.visit_let(expr, let_);
        }
        if let Some(var) = expr.downcast_ref::<Var>() {
            return Ok(self.remapped_var(var).upcast());
        }
        let fields = expr_fields(expr.type_key());
        let mut replacements = Vec::new();
        for &(name, is_array) in fields {
            if is_array {
                let items = expr.get_field::<Array<ObjectRef<Expr>>>(name)?;
                let new = self.visit_exprs(&items)?;
                if !same_array(&new, &items) {
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

    /// C++ `VisitExpr_(const LetNode*)`: a variable bound again gets a new one for the body.
    fn visit_let(&mut self, expr: &ObjectRef<Expr>, let_: &Let) -> Result<ObjectRef<Expr>> {
        let var = let_.var();
        let old_value = let_.value();
        let old_body = let_.body();
        if self.defined.contains(&key(&var)) {
            let value = self.visit_expr(&old_value)?;
            let new_var = Self::make_new_var(&var);
            self.push_remap(&var, &new_var);
            let body = self.visit_expr(&old_body);
            // `PopVarRemap`: this remap only, out of the current scope's list.
            self.undo(&var, &new_var);
            if let Some(scope) = self.scopes.last_mut() {
                if scope.last().is_some_and(|(_, n)| n.ptr_eq(&new_var)) {
                    scope.pop();
                }
            }
            let made =
                self.globals
                    .get(Global::Let)?
                    .call((new_var, value, body?, Any::default()))?;
            return made.cast();
        }
        self.defined.insert(key(&var));
        let value = self.visit_expr(&old_value)?;
        let body = self.visit_expr(&old_body)?;
        if value.ptr_eq(&old_value) && body.ptr_eq(&old_body) {
            return Ok(expr.clone());
        }
        let base = &let_.base;
        Ok(Let::from_fields(base.span(), base.ty(), var, value, body).upcast())
    }

    /// The binary operators, through their generated types (`None`: not one of them).
    fn visit_binary(
        &mut self,
        index: i32,
        expr: &ObjectRef<Expr>,
    ) -> Result<Option<ObjectRef<Expr>>> {
        macro_rules! binary {
            ($($ty:ident),*) => {
                $(
                    if let Some(node) = exact::<crate::ir::$ty>(index, expr) {
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
            Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or,
            BitwiseAnd, BitwiseOr, BitwiseXor, LShift, RShift
        );
        Ok(None)
    }
    /// C++ `GetRemappedBuffer`.
    fn remapped_buffer(&mut self, buf: &ObjectRef<Var>) -> Result<ObjectRef<Var>> {
        self.remapped_buffer_at(buf, false)
    }

    /// [`Self::remapped_buffer`], at a buffer's definition (`AllocBuffer`, `DeclBuffer`) or a
    /// use. A buffer renamed and rebuilt at its definition leaves its plain uses on the renamed
    /// variable (not the rebuilt buffer) as TVM 0.27's C++ pass does (its base mutator rebuilds
    /// the definition's buffer); loads and stores still find the rebuilt buffer.
    fn remapped_buffer_at(
        &mut self,
        buf: &ObjectRef<Var>,
        definition: bool,
    ) -> Result<ObjectRef<Var>> {
        let new_var = self.remapped_var(buf);
        if new_var.ptr_eq(buf) {
            // C++ visits the type and returns `buf` when every visit gave back its input: known
            // without the visits when they would only rename variables that are not remapped.
            if !self.type_may_change(buf)? {
                return Ok(buf.clone());
            }
        } else if let Some(last) = self.buf_remap.get(&key(buf)).and_then(|b| b.last()) {
            // C++ checks this cache after visiting the type; for a renamed buffer the answer
            // is the same before, and the visit is saved.
            if last.is_for(&new_var) {
                return Ok(last.buffer.clone());
            }
        }
        let Some(ty) = buf.base.ty().and_then(|t| t.downcast::<BufferType>()) else {
            return Ok(new_var);
        };
        let (old_elem_offset, old_shape, old_strides) =
            (ty.elem_offset.get(), ty.shape.get(), ty.strides.get());
        let elem_offset = match &old_elem_offset {
            Some(e) => Some(self.visit_expr(e)?),
            None => None,
        };
        let shape = self.visit_exprs(&old_shape)?;
        let strides = self.visit_exprs(&old_strides)?;
        let new_layout = self.remapped_tile_layout(ty.layout.get())?;
        let layout_changed = new_layout.is_some();
        let unchanged_fields = |t: &ObjectRef<BufferType>| {
            !layout_changed
                && same_array(&shape, &t.shape.get())
                && same_array(&strides, &t.strides.get())
                && same_opt(&elem_offset, &t.elem_offset.get())
        };
        if new_var.ptr_eq(buf)
            && !layout_changed
            && same_array(&shape, &old_shape)
            && same_array(&strides, &old_strides)
            && same_opt(&elem_offset, &old_elem_offset)
        {
            return Ok(buf.clone());
        }
        if let Some(last) = self.buf_remap.get(&key(buf)).and_then(|b| b.last()) {
            if last.is_for(&new_var) {
                return Ok(last.buffer.clone());
            }
        }
        if let Some(new_ty) = new_var.base.ty().and_then(|t| t.downcast::<BufferType>()) {
            if unchanged_fields(&new_ty) {
                self.remember_buffer(key(buf), new_var.clone(), new_var.clone())?;
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
                if !definition {
                    *last = new_buf.clone();
                }
                let built_for = last.clone();
                self.remember_buffer(k, new_buf.clone(), built_for)?;
                return Ok(new_buf);
            }
        }
        if let Some(function_var) = self.function_scope_var_remap.get_mut(&k) {
            if function_var.ptr_eq(&new_var) {
                *function_var = new_buf.clone();
                self.remember_buffer(k, new_buf.clone(), new_buf.clone())?;
                return Ok(new_buf);
            }
        }
        self.push_remap(buf, &new_buf);
        self.remember_buffer(k, new_buf.clone(), new_buf.clone())?;
        Ok(new_buf)
    }

    /// Whether visiting the type of `buf` may give anything but the same objects: it uses a
    /// variable remapped now, or its visit does more than rename.
    fn type_may_change(&mut self, buf: &ObjectRef<Var>) -> Result<bool> {
        let entry = match self.type_vars.entry(key(buf)) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(TypeVars::new(buf)?),
        };
        let Some(vars) = &entry.vars else {
            return Ok(true);
        };
        if self.active == 0 && self.function_scope_var_remap.is_empty() {
            return Ok(false);
        }
        Ok(vars.iter().any(|&v| {
            self.var_remap.get(&v).is_some_and(|s| !s.is_empty())
                || self
                    .function_scope_var_remap
                    .get(&v)
                    .is_some_and(|n| key(n) != v)
        }))
    }

    /// Pushes the buffer that `old` (an address) stands for in the current scope.
    fn remember_buffer(
        &mut self,
        old: usize,
        buffer: ObjectRef<Var>,
        built_for: ObjectRef<Var>,
    ) -> Result<()> {
        let remapped = RemappedBuffer::new(buffer, built_for)?;
        self.buf_remap.entry(old).or_default().push(remapped);
        Ok(())
    }

    /// A `tirx.TileLayout` whose iterators' extents or strides use a remapped variable, rebuilt
    /// (`None`: the layout is unchanged).
    fn remapped_tile_layout(&mut self, layout: Option<ObjectRef<Layout>>) -> Result<Option<Any>> {
        let Some(layout) = tile_layout(layout) else {
            return Ok(None);
        };
        let mut changed = false;
        let mut parts = Vec::new();
        for name in ["shard", "replica"] {
            let iters = layout.get_field::<Array<ObjectRef<Iter>>>(name)?;
            let mut out = Vec::with_capacity(iters.len());
            for it in iters.iter() {
                let (old_extent, old_stride) = (it.extent(), it.stride());
                let extent = self.visit_expr(&old_extent)?;
                let stride = self.visit_expr(&old_stride)?;
                if extent.ptr_eq(&old_extent) && stride.ptr_eq(&old_stride) {
                    out.push(Any::new(it));
                } else {
                    changed = true;
                    let made = self.globals.get(Global::Iter)?;
                    out.push(made.call((extent, stride, it.axis.get()))?);
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
            self.globals
                .get(Global::TileLayout)?
                .call((shard, replica, offset))?,
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
        let index = stmt.type_index();
        if let Some(seq) = exact::<SeqStmt>(index, stmt) {
            let items = seq.seq();
            let mut visited = Vec::with_capacity(items.len());
            for item in items.iter() {
                visited.push(self.visit_stmt(&item)?);
            }
            return crate::seq::flatten(stmt, seq, visited);
        }
        if let Some(eval) = exact::<Evaluate>(index, stmt) {
            let value = eval.value();
            let new = self.visit_expr(&value)?;
            if new.ptr_eq(&value) {
                return Ok(stmt.clone());
            }
            return Ok(Evaluate::from_fields(eval.base.span(), new).upcast());
        }
        if let Some(store) = exact::<BufferStore>(index, stmt) {
            let (old_value, old_indices, old_buffer) =
                (store.value(), store.indices(), store.buffer());
            let value = self.visit_expr(&old_value)?;
            let indices = self.visit_exprs(&old_indices)?;
            let buffer = self.remapped_buffer(&old_buffer)?;
            if value.ptr_eq(&old_value)
                && same_array(&indices, &old_indices)
                && buffer.ptr_eq(&old_buffer)
            {
                return Ok(stmt.clone());
            }
            return Ok(
                BufferStore::from_fields(store.base.span(), buffer, value, indices).upcast(),
            );
        }
        if let Some(bind) = exact::<Bind>(index, stmt) {
            let var = bind.var();
            let old_value = bind.value();
            let value = self.visit_expr(&old_value)?;
            if self.defined.contains(&key(&var)) {
                let new_var = Self::make_new_var(&var);
                self.push_remap(&var, &new_var);
                return Ok(Bind::from_fields(None, new_var, value).upcast());
            }
            self.defined.insert(key(&var));
            if value.ptr_eq(&old_value) {
                return Ok(stmt.clone());
            }
            return Ok(Bind::from_fields(bind.base.span(), var, value).upcast());
        }
        if let Some(decl) = exact::<DeclBuffer>(index, stmt) {
            let buffer = decl.buffer();
            self.define(&buffer);
            let old_data = decl.data();
            let data = self.visit_expr(&old_data)?;
            let new_buffer = self.remapped_buffer_at(&buffer, true)?;
            if data.ptr_eq(&old_data) && new_buffer.ptr_eq(&buffer) {
                return Ok(stmt.clone());
            }
            return Ok(DeclBuffer::from_fields(decl.base.span(), new_buffer, data).upcast());
        }
        if let Some(alloc) = exact::<AllocBuffer>(index, stmt) {
            let buffer = alloc.buffer();
            self.define(&buffer);
            let new_buffer = self.remapped_buffer_at(&buffer, true)?;
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
        if let Some(loop_) = exact::<For>(index, stmt) {
            return self.visit_for(stmt, loop_);
        }
        if let Some(node) = exact::<IfThenElse>(index, stmt) {
            let (old_condition, old_then, old_else) =
                (node.condition(), node.then_case(), node.else_case());
            let condition = self.visit_expr(&old_condition)?;
            let then_case = self.with_scope(|this| this.visit_stmt(&old_then))?;
            let else_case = match &old_else {
                Some(e) => Some(self.with_scope(|this| this.visit_stmt(e))?),
                None => None,
            };
            if condition.ptr_eq(&old_condition)
                && then_case.ptr_eq(&old_then)
                && same_opt(&else_case, &old_else)
            {
                return Ok(stmt.clone());
            }
            return Ok(IfThenElse::from_fields(None, condition, then_case, else_case).upcast());
        }
        if let Some(node) = exact::<While>(index, stmt) {
            return self.with_scope(|this| {
                let (old_condition, old_body) = (node.condition(), node.body());
                let condition = this.visit_expr(&old_condition)?;
                let body = this.visit_stmt(&old_body)?;
                if condition.ptr_eq(&old_condition) && body.ptr_eq(&old_body) {
                    return Ok(stmt.clone());
                }
                Ok(While::from_fields(node.base.span(), condition, body).upcast())
            });
        }
        if let Some(assert) = exact::<AssertStmt>(index, stmt) {
            let old_condition = assert.condition();
            let condition = self.visit_expr(&old_condition)?;
            if condition.ptr_eq(&old_condition) {
                return Ok(stmt.clone());
            }
            return stmt.copy_with([("condition", Any::new(condition))]);
        }
        if let Some(attr) = exact::<AttrStmt>(index, stmt) {
            return self.visit_attr(stmt, attr);
        }
        match stmt.type_key() {
            "s_tir.SBlock" => self.visit_block(stmt),
            "s_tir.SBlockRealize" => self.visit_block_realize(stmt),
            _ => Ok(stmt.clone()),
        }
    }

    /// An `s_tir.SBlock`, as TVM 0.27's C++ pass visits it (`StmtExprMutator`'s visit, checked
    /// against it): no scope of its own and no definitions (its iteration variables, allocated
    /// and matched buffers are left as they are); the expressions of its iteration domains,
    /// regions (read, written, matched) and its `init` and body are visited.
    fn visit_block(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        let mut replacements = Vec::new();
        let iter_vars = stmt.get_field::<Array<ObjectRef<IterVar>>>("iter_vars")?;
        let mut new_iter_vars = Vec::with_capacity(iter_vars.len());
        let mut changed = false;
        for iter_var in iter_vars.iter() {
            let dom = IterVar::dom(&iter_var)?;
            let new_dom = self.visit_range(&dom)?;
            if new_dom.ptr_eq(&dom) {
                new_iter_vars.push(iter_var);
                continue;
            }
            changed = true;
            new_iter_vars.push(
                self.globals
                    .get(Global::IterVar)?
                    .call((
                        new_dom,
                        IterVar::var(&iter_var)?,
                        IterVar::iter_type(&iter_var)?,
                        IterVar::thread_tag(&iter_var)?,
                        Any::default(),
                    ))?
                    .cast()?,
            );
        }
        if changed {
            replacements.push(("iter_vars", Any::new(Array::new(new_iter_vars)?)));
        }
        for name in ["reads", "writes"] {
            let regions = stmt.get_field::<Array<ObjectRef<TensorRegion>>>(name)?;
            let mut new_regions = Vec::with_capacity(regions.len());
            let mut changed = false;
            for region in regions.iter() {
                let new = self.visit_region(&region)?;
                changed |= !new.ptr_eq(&region);
                new_regions.push(new);
            }
            if changed {
                replacements.push((name, Any::new(Array::new(new_regions)?)));
            }
        }
        let matches = stmt.get_field::<Array<ObjectRef<AnyObject>>>("match_buffers")?;
        let mut new_matches = Vec::with_capacity(matches.len());
        let mut changed = false;
        for matched in matches.iter() {
            let source = matched.get_field::<ObjectRef<TensorRegion>>("source")?;
            let new_source = self.visit_region(&source)?;
            if new_source.ptr_eq(&source) {
                new_matches.push(matched);
                continue;
            }
            changed = true;
            let buffer = matched.get_field_any("buffer")?;
            new_matches.push(
                self.globals
                    .get(Global::MatchBufferRegion)?
                    .call((buffer, new_source))?
                    .cast()?,
            );
        }
        if changed {
            replacements.push(("match_buffers", Any::new(Array::new(new_matches)?)));
        }
        if let Some(init) = stmt.get_field::<Option<ObjectRef<Stmt>>>("init")? {
            let new_init = self.visit_stmt(&init)?;
            if !new_init.ptr_eq(&init) {
                replacements.push(("init", Any::new(new_init)));
            }
        }
        let body = stmt.get_field::<ObjectRef<Stmt>>("body")?;
        let new_body = self.visit_stmt(&body)?;
        if !new_body.ptr_eq(&body) {
            replacements.push(("body", Any::new(new_body)));
        }
        if replacements.is_empty() {
            return Ok(stmt.clone());
        }
        stmt.copy_with(replacements)
    }

    /// A range with its bounds visited (C++ `Range::FromMinExtent` when one changed).
    fn visit_range(&mut self, range: &ObjectRef<Range>) -> Result<ObjectRef<Range>> {
        let (old_min, old_extent) = (range.min(), range.extent());
        let min = self.visit_expr(&old_min)?;
        let extent = self.visit_expr(&old_extent)?;
        if min.ptr_eq(&old_min) && extent.ptr_eq(&old_extent) {
            return Ok(range.clone());
        }
        Ok(Range::from_fields(min, extent, None))
    }

    /// A block's region: its source visited as an expression (a renamed buffer gives its new
    /// variable; unlike a load or store, the buffer is not rebuilt), and its ranges.
    fn visit_region(
        &mut self,
        region: &ObjectRef<TensorRegion>,
    ) -> Result<ObjectRef<TensorRegion>> {
        let source = region.source();
        let new_source = self.visit_expr(&source)?;
        let ranges = region.region();
        let mut new_ranges = Vec::with_capacity(ranges.len());
        let mut changed = false;
        for range in ranges.iter() {
            let new = self.visit_range(&range)?;
            changed |= !new.ptr_eq(&range);
            new_ranges.push(new);
        }
        if !changed && new_source.ptr_eq(&source) {
            return Ok(region.clone());
        }
        let ranges = if changed {
            Array::new(new_ranges)?
        } else {
            ranges
        };
        let base = &region.base;
        Ok(TensorRegion::from_fields(
            base.span(),
            base.ty(),
            new_source,
            ranges,
        ))
    }

    /// `StmtMutator`'s visit of an `s_tir.SBlockRealize`: its iteration values, predicate and
    /// block.
    fn visit_block_realize(&mut self, stmt: &ObjectRef<Stmt>) -> Result<ObjectRef<Stmt>> {
        let values = stmt.get_field::<Array<ObjectRef<Expr>>>("iter_values")?;
        let predicate = stmt.get_field::<ObjectRef<Expr>>("predicate")?;
        let block = stmt.get_field::<ObjectRef<Stmt>>("block")?;
        let new_values = self.visit_exprs(&values)?;
        let new_predicate = self.visit_expr(&predicate)?;
        let new_block = self.visit_stmt(&block)?;
        let mut replacements = Vec::new();
        if !same_array(&new_values, &values) {
            replacements.push(("iter_values", Any::new(new_values)));
        }
        if !new_predicate.ptr_eq(&predicate) {
            replacements.push(("predicate", Any::new(new_predicate)));
        }
        if !new_block.ptr_eq(&block) {
            replacements.push(("block", Any::new(new_block)));
        }
        if replacements.is_empty() {
            return Ok(stmt.clone());
        }
        stmt.copy_with(replacements)
    }

    /// C++ `VisitStmt_(const ForNode*)`: a loop variable defined again gets a new one.
    fn visit_for(&mut self, stmt: &ObjectRef<Stmt>, loop_: &For) -> Result<ObjectRef<Stmt>> {
        let var = loop_.loop_var();
        let redefined = self.defined.contains(&key(&var));
        if !redefined {
            self.defined.insert(key(&var));
        }
        self.with_scope(|this| {
            let new_var = if redefined {
                let new_var = Self::make_new_var(&var);
                this.push_remap(&var, &new_var);
                new_var
            } else {
                var.clone()
            };
            let (old_min, old_extent, old_step, old_body) =
                (loop_.min(), loop_.extent(), loop_.step(), loop_.body());
            let min = this.visit_expr(&old_min)?;
            let extent = this.visit_expr(&old_extent)?;
            let step = match &old_step {
                Some(s) => Some(this.visit_expr(s)?),
                None => None,
            };
            let body = this.visit_stmt(&old_body)?;
            if !redefined
                && min.ptr_eq(&old_min)
                && extent.ptr_eq(&old_extent)
                && same_opt(&step, &old_step)
                && body.ptr_eq(&old_body)
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
        })
    }

    fn visit_attr(&mut self, stmt: &ObjectRef<Stmt>, attr: &AttrStmt) -> Result<ObjectRef<Stmt>> {
        let node = attr.node();
        if node.checked_cast::<ObjectRef<IterVar>>().is_some() {
            let iter_var = node.cast::<ObjectRef<AnyObject>>()?;
            let dom = iter_var.get_field::<Option<ObjectRef<crate::ir::Range>>>("dom")?;
            let new_dom = match &dom {
                Some(dom) => {
                    let (old_min, old_extent) = (dom.min(), dom.extent());
                    let min = self.visit_expr(&old_min)?;
                    let extent = self.visit_expr(&old_extent)?;
                    if min.ptr_eq(&old_min) && extent.ptr_eq(&old_extent) {
                        Some(dom.clone())
                    } else {
                        Some(
                            self.globals
                                .get(Global::RangeFromMinExtent)?
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
                self.globals.get(Global::IterVar)?.call((
                    new_dom,
                    var.clone(),
                    iter_var.get_field_any("iter_type")?,
                    iter_var.get_field::<String>("thread_tag")?,
                    iter_var.get_field_any("span")?,
                ))?
            };
            let (old_value, old_body) = (attr.value(), attr.body());
            let value = self.visit_expr(&old_value)?;
            let body = self.with_scope(|this| this.visit_stmt(&old_body))?;
            let same_node = new_iter_var
                .checked_cast::<ObjectRef<AnyObject>>()
                .is_some_and(|n| n.ptr_eq(&iter_var));
            let output = if same_node && body.ptr_eq(&old_body) && value.ptr_eq(&old_value) {
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
            let (old_value, old_body) = (attr.value(), attr.body());
            let value = this.visit_expr(&old_value)?;
            let body = this.visit_stmt(&old_body)?;
            if value.ptr_eq(&old_value) && body.ptr_eq(&old_body) {
                return Ok(stmt.clone());
            }
            Ok(
                AttrStmt::from_fields(attr.base.span(), node, attr.attr_key(), value, body)
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
            self.undo(old, new);
        }
        self.function_scope_var_remap.clear();
        Ok(out)
    }
}

fn is_buffer(var: &ObjectRef<Var>) -> bool {
    var.base.ty().is_some_and(|t| t.is_instance::<BufferType>())
}

/// Calls `each` on the variables of an expression in C++'s post order (`PostOrderVisit`),
/// stopping at the first for which it answers `true` (the answer returned).
fn any_var(expr: &ObjectRef<Expr>, each: &mut impl FnMut(&ObjectRef<Var>) -> bool) -> Result<bool> {
    let index = expr.type_index();
    if let Some(var) = exact::<Var>(index, expr) {
        return Ok(each(var));
    }
    if index == IntImm::type_index() || index == FloatImm::type_index() {
        return Ok(false);
    }
    macro_rules! binary {
        ($($ty:ident),*) => {
            $(
                if let Some(node) = exact::<crate::ir::$ty>(index, expr) {
                    return Ok(any_var(&node.a(), each)? || any_var(&node.b(), each)?);
                }
            )*
        };
    }
    binary!(Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max);
    if let Some(var) = expr.downcast_ref::<Var>() {
        return Ok(each(var));
    }
    for &(name, is_array) in expr_fields(expr.type_key()) {
        if is_array {
            for item in expr.get_field::<Array<ObjectRef<Expr>>>(name)?.iter() {
                if any_var(&item, each)? {
                    return Ok(true);
                }
            }
        } else if any_var(&expr.get_field::<ObjectRef<Expr>>(name)?, each)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The variables of an expression, in C++'s post order (`PostOrderVisit`).
fn collect_vars(expr: &ObjectRef<Expr>, out: &mut Vec<ObjectRef<Var>>) -> Result<()> {
    any_var(expr, &mut |var| {
        out.push(var.clone());
        false
    })?;
    Ok(())
}

/// The layout when it is a `tirx.TileLayout` (the only kind whose iterators hold expressions).
fn tile_layout(layout: Option<ObjectRef<Layout>>) -> Option<ObjectRef<Layout>> {
    layout.filter(|l| l.is_instance::<TileLayout>())
}

/// The expressions of a buffer's type that C++ `GetRemappedBuffer` visits and
/// `BufferDependsOnVar` looks in: its offset, shape, strides and tile layout's iterators.
fn buffer_exprs(buffer: &ObjectRef<Var>) -> Result<Vec<ObjectRef<Expr>>> {
    let Some(ty) = buffer.base.ty().and_then(|t| t.downcast::<BufferType>()) else {
        return Ok(Vec::new());
    };
    let mut exprs: Vec<ObjectRef<Expr>> = ty.elem_offset.get().into_iter().collect();
    exprs.extend(ty.shape.get().iter());
    exprs.extend(ty.strides.get().iter());
    if let Some(layout) = tile_layout(ty.layout.get()) {
        for name in ["shard", "replica"] {
            for it in layout.get_field::<Array<ObjectRef<Iter>>>(name)?.iter() {
                exprs.push(it.extent());
                exprs.push(it.stride());
            }
        }
    }
    Ok(exprs)
}

/// Whether visiting `expr` does nothing but rename variables: it holds no `Let` (which defines
/// one) and no load (whose buffer is remapped in turn).
fn renames_only(expr: &ObjectRef<Expr>) -> Result<bool> {
    if expr.is_instance::<Let>() || expr.is_instance::<TensorLoad>() {
        return Ok(false);
    }
    for &(name, is_array) in expr_fields(expr.type_key()) {
        if is_array {
            for item in expr.get_field::<Array<ObjectRef<Expr>>>(name)?.iter() {
                if !renames_only(&item)? {
                    return Ok(false);
                }
            }
        } else if !renames_only(&expr.get_field::<ObjectRef<Expr>>(name)?)? {
            return Ok(false);
        }
    }
    Ok(true)
}
