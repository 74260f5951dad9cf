//! Rust declarations of Apache TVM's IR (`ir.*`, `prim.*`, `tirx.*`, `relax.*` and the types they
//! reach), generated from the runtime's reflection by
//! `python -m tvm_ffi_build.rust_mirror` (`generated.rs`, with its coverage report
//! `../coverage.md`, both kept current by `tests/python/test_tvm_bindings.py`), functions
//! that read real TVM nodes through them, and functions that rewrite and walk real TVM IR with
//! `structural::map`, `mutate` and `walk` (through TVM's C++ `__s_mutate__` and `__s_visit__`
//! hooks). Loaded from Python after `import tvm` (which registers
//! the types): the SDK checks every declaration against the runtime's reflection when this
//! library loads.
#![deny(unsafe_code)]
// The generated declarations carry the one `unsafe impl` each that an `external` type needs.
#[allow(unsafe_code)]
pub mod generated;

use generated::{
    Add, Expr, For, ForKind, IntImm, Op, PrimFunc, PrimType, Ramp, SeqStmt, Stmt, Type, Var,
};
use tvm_ffi::structural::{
    self, DefRegionKind, MapValue, Mutator, UnchangedOr, VarRemap, VisitValue, WalkOrder,
    WalkResult,
};
use tvm_ffi::{
    bail, ensure, ffi_func, Any, Array, BigInt, DataType, Map, ObjectRef, Result, String,
};

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
        Any::new(i64::from(node.kind().0)),
        // The C++ enum's name (`--enum tirx.For.kind=tvm.tirx.ForKind`), `None` where unnamed.
        Any::new(node.kind().name().map(String::from)),
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
        ForKind(kind),
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

// Semantic constructors: checks, defaults and derived fields, written on top of `from_fields`
// (the generated constructor takes every field as it is stored).

/// The data type of a primitive expression (`None` for another).
fn dtype_of(expr: &ObjectRef<Expr>) -> Option<DataType> {
    expr.ty()?.downcast::<PrimType>().map(|ty| ty.dtype())
}

/// An integer constant of `dtype`, its type derived (a `PrimType`), its value checked to fit.
#[ffi_func(name = "tvm_bindings.int_imm")]
pub fn int_imm(dtype: DataType, value: i64) -> Result<ObjectRef<IntImm>> {
    let bits = u32::from(dtype.bits());
    let fits = dtype.code() == DataType::INT32.code()
        && (bits >= 64 || (-(1i64 << (bits - 1))..(1i64 << (bits - 1))).contains(&value));
    ensure!(
        fits,
        ValueError,
        "tirx.IntImm: {value} is not a value of `{dtype}`"
    );
    let ty: ObjectRef<Type> = PrimType::from_fields(None, dtype).upcast();
    Ok(IntImm::from_fields(None, Some(ty), BigInt::from(value)))
}

/// `a + b`: both operands of one primitive type, which the sum has too.
#[ffi_func(name = "tvm_bindings.add")]
pub fn add(a: ObjectRef<Expr>, b: ObjectRef<Expr>) -> Result<ObjectRef<Add>> {
    let (ta, tb) = (dtype_of(&a), dtype_of(&b));
    if ta.is_none() || ta != tb {
        let name = |t: Option<DataType>| t.map_or("non-primitive".into(), |t| t.to_string());
        bail!(
            TypeError,
            "tirx.Add: operands of different types: `{}` and `{}`",
            name(ta),
            name(tb)
        );
    }
    let ty = a.ty();
    Ok(Add::from_fields(None, ty, a, b))
}

/// A serial loop `for var in range(extent)`: `min` defaults to a zero of the variable's type.
#[ffi_func(name = "tvm_bindings.serial_loop")]
pub fn serial_loop(
    var: ObjectRef<Var>,
    extent: ObjectRef<Expr>,
    body: ObjectRef<Stmt>,
) -> Result<ObjectRef<For>> {
    let dtype = dtype_of(&var.clone().upcast()).ok_or_else(|| {
        tvm_ffi::Error::type_error("tirx.For: the loop variable is not primitive")
    })?;
    let min = int_imm(dtype, 0)?.upcast();
    let annotations = Map::new([])?;
    Ok(For::from_fields(
        None,
        var,
        min,
        extent,
        ForKind::SERIAL,
        body,
        None,
        annotations,
        None,
    ))
}

/// A copy of a `tirx.For` with another extent, rebuilt typed and losslessly: the fields
/// cloned (`Clone` of the declaration), one set, the copy allocated by Rust; with `clear_body`,
/// first a copy whose required `body` is null (as C++ may leave it), which the rebuild keeps.
/// Returns the copy, and whether its body is null.
#[ffi_func(name = "tvm_bindings.with_extent")]
pub fn with_extent(
    loop_: ObjectRef<For>,
    extent: ObjectRef<Expr>,
    clear_body: bool,
) -> Result<Array<Any>> {
    let mut source = loop_;
    if clear_body {
        let cleared = (*source).clone();
        cleared.body.set(None);
        source = ObjectRef::new(cleared);
    }
    let copy = (*source).clone();
    copy.extent.set(Some(extent));
    let copy = ObjectRef::new(copy);
    let body_is_null = copy.body.get().is_none();
    Array::new([Any::new(copy), Any::new(body_is_null)])
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

// Rewriting real IR: `structural::map` and `mutate` through TVM's C++ `__s_mutate__` hooks, and
// walks through its `__s_visit__` hooks.

/// `structural::map` of a value with a callback that keeps every `ir.IntImm`: nothing changes,
/// so the same object comes back (copy-on-write through every hook).
#[ffi_func(name = "tvm_bindings.map_identity")]
pub fn map_identity(root: Any) -> Result<Any> {
    structural::map(
        root,
        |_: &IntImm| structural::Unchanged,
        WalkOrder::PostOrder,
    )
}

/// A new `ir.IntImm` of the type of `imm` holding `value`, allocated by Rust.
fn int_like(imm: &IntImm, value: i64) -> ObjectRef<IntImm> {
    let expr = &imm.base.base;
    IntImm::from_fields(expr.span(), expr.ty(), BigInt::from(value))
}

/// `structural::map` replacing every `ir.IntImm` whose value is `from` by one holding `to`
/// (post-order).
#[ffi_func(name = "tvm_bindings.map_replace_int")]
pub fn map_replace_int(root: Any, from: i64, to: i64) -> Result<Any> {
    structural::map(
        root,
        |imm: &IntImm| {
            if imm.value().to_i64() == Some(from) {
                UnchangedOr::Changed(int_like(imm, to))
            } else {
                UnchangedOr::Unchanged
            }
        },
        WalkOrder::PostOrder,
    )
}

/// `structural::map` renaming the variable `ir.Var` called `from` to `to` (pre-order): one new
/// `ir.Var` (allocated by Rust) for each variable of that name, at its definition and at every
/// use.
#[ffi_func(name = "tvm_bindings.map_rename_var")]
pub fn map_rename_var(root: Any, from: String, to: String) -> Result<Any> {
    structural::map(
        root,
        |var: &Var| {
            if var.name() == from {
                let expr = &var.base;
                UnchangedOr::Changed(Var::from_fields(expr.span(), expr.ty(), to.clone()))
            } else {
                UnchangedOr::Unchanged
            }
        },
        WalkOrder::PreOrder,
    )
}

/// A `Mutator` replacing the integer constants `from` by `to`, keeping variable remappings
/// (those TVM's hooks record) in a `VarRemap`.
struct ReplaceInt {
    from: i64,
    to: i64,
    remap: VarRemap,
    /// How many constants were replaced.
    replaced: i64,
}

impl Mutator for ReplaceInt {
    fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
        if let Some(imm) = value.cast::<ObjectRef<IntImm>>() {
            if imm.value().to_i64() == Some(self.from) {
                self.replaced += 1;
                return Ok(Any::new(int_like(&imm, self.to)));
            }
            return Ok(Any::new(structural::Unchanged));
        }
        self.default_mutate(value, kind)
    }
    fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
        self.remap.get(var)
    }
    fn var_remap_set(&mut self, var: &MapValue, mapped: &Any) -> Result<()> {
        self.remap.set(var, mapped)
    }
}

/// `[the result, how many constants were replaced]` of `structural::mutate` with `ReplaceInt`.
#[ffi_func(name = "tvm_bindings.mutate_replace_int")]
pub fn mutate_replace_int(root: Any, from: i64, to: i64) -> Result<Array<Any>> {
    let mut mutator = ReplaceInt {
        from,
        to,
        remap: VarRemap::default(),
        replaced: 0,
    };
    let out = structural::mutate(root, &mut mutator)?;
    Array::new([out, Any::new(mutator.replaced)])
}

/// How many values of each type key a pre-order `structural::walk` reaches (objects only, strings
/// left out: Python sees those as `str`).
#[ffi_func(name = "tvm_bindings.walk_counts")]
pub fn walk_counts(root: Any) -> Result<Map<String, i64>> {
    let mut counts = std::collections::BTreeMap::<std::string::String, i64>::new();
    structural::walk(
        &root,
        |value: &VisitValue| {
            let key = value.type_key();
            if value.type_index() >= tvm_ffi::sys::type_index::kTVMFFIStaticObjectBegin
                && key != "ffi.String"
            {
                *counts.entry(key.to_string()).or_default() += 1;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )?;
    Map::new(
        counts
            .into_iter()
            .map(|(k, v)| (String::from(k.as_str()), v)),
    )
}

/// `[the result, whether it is the node mapped]` of [`map_replace_int`] over a copy of `func`
/// that only the map holds (its loop nest and the function allocated by Rust, moved in): TVM's
/// `__s_maybe_inplace_mutate__` hooks run and update the nodes in place.
#[ffi_func(name = "tvm_bindings.map_replace_int_in_place")]
pub fn map_replace_int_in_place(
    func: ObjectRef<PrimFunc>,
    from: i64,
    to: i64,
) -> Result<Array<Any>> {
    let copy = rebuild_prim_func(func)?;
    let address = copy.as_raw().as_ptr() as usize;
    let out = map_replace_int(Any::new(copy), from, to)?;
    let same = out.cast::<ObjectRef<PrimFunc>>()?.as_raw().as_ptr() as usize == address;
    Array::new([out, Any::new(same)])
}
