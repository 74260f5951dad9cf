//! Structural walk and visit, in Rust: the traversal of a value graph that the runtime's
//! reflection describes (container contents, then the structural fields of objects), with the
//! definition region each value sits in. Reached through [`crate::structural`].
//!
//! Two layers, as in C++: - the walk ([`walk`]): the engine recurses on its own; one handler (a
//! closure, a chain of   typed closures, or a `#[dispatch(walk)]` type) runs per value, before or
//! after its   children ([`WalkOrder`]), and steers with a [`WalkResult`]; - the visitor
//! ([`Visitor`], [`visit`](crate::structural::visit)): `visit` runs for each value it is handed and
//! chooses   itself which children to descend into and in which region
//! ([`Visitor::default_visit_children`], [`Visitor::visit_child`]).
//!
//! `List` and `Dict` contents are copied before the first callback runs, so a callback that
//! mutates the container it was reached through sees the old contents and cannot invalidate
//! the traversal. An object type that registers a foreign `__s_visit__` hook (C++
//! `type_attr::kStructuralVisit`) has its children visited by that hook, as C++'s
//! `StructuralVisitor` does: the hook gets a visitor object (`ffi.StructuralVisitor`) whose
//! visits of children come back to this traversal, in the region the hook sets
//! (`visit_hook.rs`).
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::sys::{self, field_flags, type_index as ti};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::{AnyObject, ArrayObj, DictObj, ListObj, MapObj};
use crate::base::object::{type_info, ObjectRef, ObjectType};
use crate::base::value::{Any, AnyView, FromAny, IntoAny};
use crate::call::function::IntoArg;
use crate::data::container::{Dict, List, Map};

use super::error_context::with_visit_node;
use super::link::link_handlers;
use super::visit_hook::{call_visit_hook, ChildOutcome};

const VISIT_ATTR: &str = "__s_visit__";

/// When a walk handler runs for a value: before its children or after them.
///
/// ```
/// use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
/// use tvm_ffi::Array;
/// let root = Array::new([1i64]).unwrap();
/// let mut order = Vec::new();
/// let mut record = |value: &VisitValue| {
///     order.push(value.type_key());
///     WalkResult::Advance
/// };
/// structural::walk(&root, &mut record, WalkOrder::PostOrder).unwrap();
/// assert_eq!(order, ["int", "ffi.Array"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WalkOrder {
    /// The handler runs before the children; its [`WalkResult::Skip`] prunes them.
    PreOrder,
    /// The handler runs after the children (a `Skip` then means `Advance`).
    PostOrder,
}

/// What a walk handler tells the walk to do next.
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder, WalkResult};
/// use tvm_ffi::{Any, Array};
/// let root = Array::new([Any::new(Array::new([1i64]).unwrap()), Any::new(2i64)]).unwrap();
/// let mut ints = Vec::new();
/// structural::walk(
///     &root,
///     (
///         // Do not look inside arrays of integers.
///         |_: Array<i64>| WalkResult::Skip,
///         |v: i64| {
///             ints.push(v);
///             WalkResult::Advance
///         },
///     ),
///     WalkOrder::PreOrder,
/// )
/// .unwrap();
/// assert_eq!(ints, [2]);
/// ```
#[must_use = "a walk handler's result steers the walk"]
#[derive(Debug)]
pub enum WalkResult {
    /// Go on, into this value's children (pre-order).
    Advance,
    /// Go on, but not into this value's children (pre-order; post-order: as `Advance`).
    Skip,
    /// Stop the whole walk; the caller receives a [`VisitInterrupt`] holding `None`.
    Interrupt,
    /// Stop the whole walk; the caller receives a [`VisitInterrupt`] holding this payload.
    InterruptWith(Any),
}

impl WalkResult {
    /// [`WalkResult::InterruptWith`] of any convertible value.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
    /// use tvm_ffi::Array;
    /// let root = Array::new([1i64, 2, 3]).unwrap();
    /// let stop = structural::walk(
    ///     &root,
    ///     |value: i64| if value == 2 { WalkResult::interrupt_with(value * 10) } else { WalkResult::Advance },
    ///     WalkOrder::PreOrder,
    /// )
    /// .unwrap()
    /// .unwrap();
    /// assert_eq!(stop.value.cast::<i64>().unwrap(), 20);
    /// ```
    pub fn interrupt_with<T: IntoAny>(payload: T) -> WalkResult {
        WalkResult::InterruptWith(Any::new(payload))
    }
}

/// The definition region a value is reached in (C `TVMFFIDefRegionKind`), as structural
/// equality uses it: whether free variables met there are uses or definitions.
///
/// A field flagged `#[ffi(structural = "def-pattern")]` or `"def-simple"` opens its region for
/// the field's whole subtree; inside a pattern region every field stays in the pattern. A free
/// variable (`structural = "free-var"`) reached in a simple region is the definition, and its
/// own fields are uses again ([`DefRegionKind::None`]).
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, WalkOrder, WalkResult};
/// use tvm_ffi::{Any, ObjectRef};
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.DefRegionLet", structural = "tree", final)]
/// #[repr(C)]
/// pub struct Let {
///     #[ffi(structural = "def-simple")]
///     pub var: Any,
///     pub body: Any,
/// }
/// let node = ObjectRef::new(Let { var: Any::new(1i64), body: Any::new(2i64) });
/// let mut regions = Vec::new();
/// let mut record = |v: i64, kind: DefRegionKind| {
///     regions.push((v, kind));
///     WalkResult::Advance
/// };
/// structural::walk(&node, &mut record, WalkOrder::PreOrder).unwrap();
/// assert_eq!(regions, [(1, DefRegionKind::Simple), (2, DefRegionKind::None)]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DefRegionKind {
    /// A use: outside any definition region.
    #[default]
    None = 0,
    /// A definition matched as a pattern: every free variable in the subtree is defined.
    Pattern = 1,
    /// A simple definition: the variable alone is defined, its type is a use.
    Simple = 2,
}

impl DefRegionKind {
    /// The kind of a raw `TVMFFIDefRegionKind` known to be 0, 1 or 2.
    pub(crate) fn from_valid_raw(raw: i32) -> DefRegionKind {
        match raw {
            1 => DefRegionKind::Pattern,
            2 => DefRegionKind::Simple,
            _ => DefRegionKind::None,
        }
    }
}

/// A walk or visit stopped by a handler: the payload it gave (`None` for a bare
/// [`WalkResult::Interrupt`]).
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder, WalkResult};
/// use tvm_ffi::Array;
/// let root = Array::new([1i64, 2]).unwrap();
/// let stop = structural::walk(&root, |_: i64| WalkResult::Interrupt, WalkOrder::PreOrder)
///     .unwrap()
///     .unwrap();
/// assert!(stop.value.is_none());
/// ```
#[derive(Debug)]
pub struct VisitInterrupt {
    /// The handler's payload.
    pub value: Any,
}

impl VisitInterrupt {
    /// An interrupt carrying `payload`.
    ///
    /// ```
    /// use tvm_ffi::structural::VisitInterrupt;
    /// assert_eq!(VisitInterrupt::with(7i64).value.cast::<i64>().unwrap(), 7);
    /// ```
    pub fn with<T: IntoAny>(payload: T) -> VisitInterrupt {
        VisitInterrupt {
            value: Any::new(payload),
        }
    }
}

/// A value met by a walk, visit or map, borrowed for the duration of the callback.
///
/// [`VisitValue::cast`] matches exactly, as C++ `ObjectRef::as<T>`: the value's own runtime type
/// must be the target's, with no coercion (an `int` for `i64`, never a `bool`; a `float` for
/// `f64`, never an `int`; an `ffi.Array` whose elements all are exactly `T`s for `Array<T>`), so
/// that typed callbacks of a chain claim only their own values.
///
/// ```
/// use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
/// use tvm_ffi::{Any, Array};
/// let root = Array::new([Any::new(1i64), Any::new(true), Any::new("s")]).unwrap();
/// let mut seen = Vec::new();
/// structural::walk(
///     &root,
///     |value: &VisitValue| {
///         seen.push((value.type_key(), value.cast::<i64>()));
///         WalkResult::Advance
///     },
///     WalkOrder::PreOrder,
/// )
/// .unwrap();
/// assert_eq!(seen[1], ("int", Some(1)));
/// assert_eq!(seen[2], ("bool", None));
/// ```
pub struct VisitValue {
    // The engine makes a `VisitValue` only over a cell that outlives every `&VisitValue` it
    // hands out; the `'static` never escapes (every accessor reborrows for `&self`).
    view: AnyView<'static>,
}

impl VisitValue {
    /// # Safety
    /// What `view` points to must stay alive and unchanged while the result is used.
    #[inline(always)]
    pub(crate) unsafe fn new(view: AnyView<'_>) -> VisitValue {
        VisitValue {
            // SAFETY: the caller's contract; the lifetime is only erased, never exposed.
            view: unsafe { AnyView::from_raw(*view.as_raw()) },
        }
    }

    /// The value, borrowed.
    #[inline(always)]
    pub fn view(&self) -> &AnyView<'_> {
        &self.view
    }

    /// The runtime type index of the value.
    #[inline(always)]
    pub fn type_index(&self) -> i32 {
        self.view.as_raw().type_index
    }

    /// The runtime type key of the value (`"int"`, `"ffi.Array"`, ...).
    pub fn type_key(&self) -> &'static str {
        self.view.type_key()
    }

    /// Whether the value is `None`.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index() == ti::kTVMFFINone
    }

    /// The value as a `T` when it is exactly a `T` (see the type docs), else `None`.
    #[inline]
    pub fn cast<T: for<'a> FromAny<'a>>(&self) -> Option<T> {
        if !T::match_type_index(self.type_index()) {
            return None;
        }
        T::from_any_exact(self.view())
    }

    /// The payload of an object of type `T` (or a subtype), borrowed, else `None`.
    ///
    /// ```
    /// use tvm_ffi::builtin::ArrayObj;
    /// use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
    /// use tvm_ffi::Array;
    /// let root = Array::new([Array::new([1i64]).unwrap()]).unwrap();
    /// let mut arrays = 0;
    /// structural::walk(
    ///     &root,
    ///     |value: &VisitValue| {
    ///         arrays += value.as_node::<ArrayObj>().is_some() as usize;
    ///         WalkResult::Advance
    ///     },
    ///     WalkOrder::PreOrder,
    /// )
    /// .unwrap();
    /// assert_eq!(arrays, 2);
    /// ```
    #[inline]
    pub fn as_node<T: ObjectType>(&self) -> Option<&T> {
        <&ObjectRef<T>>::from_any(self.view()).map(|object| &**object)
    }

    /// The value as an object reference of type `T`, borrowed, else `None`.
    #[inline]
    pub fn as_object<T: ObjectType>(&self) -> Option<&ObjectRef<T>> {
        <&ObjectRef<T>>::from_any(self.view())
    }

    /// An owned copy of the value (objects: a new reference to the same object).
    #[inline]
    pub fn to_owned(&self) -> Any {
        // SAFETY: the view is a valid value (see `new`); cloning takes a reference of its own.
        unsafe { owned_from_raw(self.view.as_raw()) }
    }
}

impl std::fmt::Debug for VisitValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.view, f)
    }
}

/// A new owned value equal to the valid value at `raw` (objects: one more reference).
///
/// # Safety
/// `raw` is a valid value whose owner keeps it alive during the call.
#[inline]
pub(crate) unsafe fn owned_from_raw(raw: &sys::TVMFFIAny) -> Any {
    // SAFETY: the caller's contract; `Any` is repr(transparent) over TVMFFIAny.
    let any = unsafe { &*(raw as *const sys::TVMFFIAny as *const Any) };
    any.clone()
}

/// How a walk result converts from what a handler returns: a [`WalkResult`] or a
/// `Result<WalkResult>`.
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder, WalkResult};
/// use tvm_ffi::{Array, Error, Result};
/// let root = Array::new([1i64, -1]).unwrap();
/// let check = |v: i64| -> Result<WalkResult> {
///     if v < 0 {
///         return Err(Error::value_error("negative"));
///     }
///     Ok(WalkResult::Advance)
/// };
/// let err = structural::walk(&root, check, WalkOrder::PreOrder).unwrap_err();
/// assert_eq!(err.message(), "negative");
/// ```
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait IntoWalkResult {
    /// The result, or the handler's error.
    fn into_walk_result(self) -> Result<WalkResult>;
}

impl IntoWalkResult for WalkResult {
    #[inline(always)]
    fn into_walk_result(self) -> Result<WalkResult> {
        Ok(self)
    }
}

impl IntoWalkResult for Result<WalkResult> {
    #[inline(always)]
    fn into_walk_result(self) -> Result<WalkResult> {
        self
    }
}

/// A stateful walk handler: what `#[tvm_ffi::dispatch(walk)]` implements for a type from its
/// `walk_*` methods (tried in source order, the first whose argument type matches runs).
///
/// `None`: no handler takes the value, which the walk treats as [`WalkResult::Advance`] (and a
/// chain passes to its next link).
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, VisitValue, WalkOrder, WalkResult};
/// use tvm_ffi::{dispatch, Array};
/// #[derive(Default)]
/// struct Sum { total: i64, others: usize }
/// #[dispatch(walk)]
/// impl Sum {
///     fn walk_int(&mut self, value: i64) -> WalkResult {
///         self.total += value;
///         WalkResult::Advance
///     }
///     fn walk_other(&mut self, _value: &VisitValue, _kind: DefRegionKind) -> WalkResult {
///         self.others += 1;
///         WalkResult::Advance
///     }
/// }
/// let mut sum = Sum::default();
/// structural::walk(&Array::new([1i64, 2, 3]).unwrap(), &mut sum, WalkOrder::PreOrder).unwrap();
/// assert_eq!((sum.total, sum.others), (6, 1));
/// ```
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait VisitDispatch {
    /// Runs the first handler that takes `value`, if any.
    fn dispatch_visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<WalkResult>>;

    /// Whether the walk hands the descent below every value (leaves included) to
    /// [`VisitDispatch::walk_default_children`]: a walk with a context policy
    /// (`structural::WalkWithContextPolicy`). No for every handler that steers with
    /// [`WalkResult`]s alone, which keeps their walk the plain engine.
    #[doc(hidden)]
    #[inline(always)]
    fn has_custom_descent(&self) -> bool {
        false
    }

    /// The descent below `value` when [`VisitDispatch::has_custom_descent`]; never called
    /// otherwise.
    #[doc(hidden)]
    #[inline(always)]
    fn walk_default_children(
        &mut self,
        _order: WalkOrder,
        _value: &VisitValue,
        _def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        Ok(None)
    }
}

impl<V: VisitDispatch + ?Sized> VisitDispatch for &mut V {
    #[inline(always)]
    fn dispatch_visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<WalkResult>> {
        (**self).dispatch_visit(value, def_region_kind)
    }

    #[inline(always)]
    fn has_custom_descent(&self) -> bool {
        (**self).has_custom_descent()
    }

    #[inline(always)]
    fn walk_default_children(
        &mut self,
        order: WalkOrder,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        (**self).walk_default_children(order, value, def_region_kind)
    }
}

/// One link of a walk handler: a callback of one of the [`shapes`](super::link::shapes), or `&mut`
/// a `#[dispatch(walk)]` type. `None` when the link does not take the value. Examples of every
/// shape are in the [`shapes`](super::link::shapes) docs.
///
/// ```
/// use std::marker::PhantomData;
/// use tvm_ffi::structural::{self, DefRegionKind, VisitInterrupt, VisitValue, Visitor, WalkLink, WalkResult};
/// use tvm_ffi::{Array, Result};
/// /// A visitor that offers each value to a link, and descends when the link does not take it.
/// struct ByLink<L, M>(L, PhantomData<M>);
/// impl<L: WalkLink<M>, M> Visitor for ByLink<L, M> {
///     fn visit(&mut self, value: &VisitValue, kind: DefRegionKind) -> Result<Option<VisitInterrupt>> {
///         match self.0.try_visit(value, kind) {
///             Some(result) => result.map(|_| None),
///             None => self.default_visit_children(value, kind),
///         }
///     }
/// }
/// let mut sum = 0;
/// let mut visitor = ByLink(|v: i64| { sum += v; WalkResult::Advance }, PhantomData);
/// structural::visit(&Array::new([1i64, 2]).unwrap(), &mut visitor).unwrap();
/// drop(visitor);
/// assert_eq!(sum, 3);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural walk callback",
    label = "not a walk callback",
    note = "a walk callback takes the value (`i64`, `Array<T>`, `ObjectRef<T>`, `&NodeObj`, `&VisitValue`, ...) and optionally a trailing `DefRegionKind`, and returns a `WalkResult` or a `Result<WalkResult>`"
)]
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait WalkLink<M> {
    /// Runs the link on `value` if it takes it.
    fn try_visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<WalkResult>>;
}

/// What [`walk`] accepts as its handler: `&mut` a `#[dispatch(walk)]` type, one callback of any of
/// the [`shapes`](super::link::shapes), or a tuple of up to 12 of them (links, tried in order: the
/// first whose argument type matches the value runs, later ones do not); a tuple is itself a link,
/// so chains nest.
///
/// ```
/// use tvm_ffi::structural::{self, IntoWalker, WalkOrder, WalkResult};
/// use tvm_ffi::Array;
/// fn count_ints<M>(root: &Array<i64>, handler: impl IntoWalker<M>) {
///     structural::walk(root, handler, WalkOrder::PreOrder).unwrap();
/// }
/// let mut n = 0;
/// count_ints(&Array::new([1i64, 2]).unwrap(), |_: i64| { n += 1; WalkResult::Advance });
/// assert_eq!(n, 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural walk handler",
    label = "not a walk handler",
    note = "pass `&mut` a `#[dispatch(walk)]` type, a callback taking the value (`i64`, `Array<T>`, `&NodeObj`, `&VisitValue`, ...) and optionally a trailing `DefRegionKind` and returning a `WalkResult` (or a `Result` of one), or a tuple of up to 12 of them"
)]
pub trait IntoWalker<M> {
    /// The handler as a dispatch.
    type Walker: VisitDispatch;
    /// Converts.
    fn into_walker(self) -> Self::Walker;
}

link_handlers! {
    link: WalkLink::try_visit,
    value: VisitValue,
    region: DefRegionKind,
    output: WalkResult,
    returns: IntoWalkResult::into_walk_result,
    dispatch: VisitDispatch::dispatch_visit,
    handler: IntoWalker::into_walker -> Walker,
}

/// Why a traversal stopped early.
pub(crate) enum Halt {
    Interrupt(Any),
    Error(Error),
}

pub(crate) type Flow = std::result::Result<(), Halt>;

impl From<Error> for Halt {
    #[inline]
    fn from(error: Error) -> Halt {
        Halt::Error(error)
    }
}

/// Appends a frame of the traversal path to an error.
#[cold]
pub(crate) fn with_frame(mut error: Error, frame: std::fmt::Arguments<'_>) -> Error {
    error.append_backtrace(&format!("  [structural traversal] {frame}\n"));
    error
}

#[inline]
fn halt_frame(halt: Halt, frame: impl FnOnce() -> String) -> Halt {
    match halt {
        Halt::Error(error) => Halt::Error(with_frame(error, format_args!("{}", frame()))),
        interrupt => interrupt,
    }
}

/// The frame naming the object an error passed through (plain values add none): in the
/// error's backtrace, and in its `ffi.VisitErrorContext` (see `error_context.rs`).
#[cold]
pub(crate) fn with_value_frame(error: Error, value: &AnyView<'_>) -> Error {
    let type_index = value.as_raw().type_index;
    if type_index < ti::kTVMFFIStaticObjectBegin {
        return error;
    }
    let key = type_info::type_key_of_index(type_index);
    let error = with_frame(error, format_args!("object `{key}`"));
    match <&ObjectRef<AnyObject>>::from_any(value) {
        Some(node) => with_visit_node(error, node),
        None => error,
    }
}

fn halt_value(halt: Halt, value: &AnyView<'_>) -> Halt {
    match halt {
        Halt::Error(error) => Halt::Error(with_value_frame(error, value)),
        interrupt => interrupt,
    }
}

/// A cached type-attribute column (`__s_visit__`, ...): looked up by name until it exists, then
/// kept (the registry never frees a column; its entries are read on each use).
pub(crate) struct AttrColumn {
    name: &'static str,
    column: AtomicPtr<sys::TVMFFITypeAttrColumn>,
}

impl AttrColumn {
    pub(crate) const fn new(name: &'static str) -> AttrColumn {
        AttrColumn {
            name,
            column: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The type index of the attribute registered for exactly `index`, when one is.
    #[inline]
    pub(crate) fn get(&self, index: i32) -> Option<i32> {
        self.get_value(index).map(|attr| attr.type_index)
    }

    /// The attribute registered for exactly `index`, when one is: a view of the registry's
    /// value (the registry holds its reference until the attribute is replaced).
    #[inline]
    pub(crate) fn get_value(&self, index: i32) -> Option<sys::TVMFFIAny> {
        let mut column = self.column.load(Ordering::Acquire);
        if column.is_null() {
            let name = sys::TVMFFIByteArray::from_bytes(self.name.as_bytes());
            // SAFETY: a valid name; the column, if any, is owned by the registry forever.
            column = unsafe { sys::TVMFFIGetTypeAttrColumn(&name) } as *mut _;
            if column.is_null() {
                return None;
            }
            self.column.store(column, Ordering::Release);
        }
        // SAFETY: a column of the registry, never freed.
        let column = unsafe { &*column };
        let slot = index.checked_sub(column.begin_index)?;
        if slot < 0 || slot >= column.size {
            return None;
        }
        // SAFETY: `data` has `size` entries.
        let attr = unsafe { *column.data.add(slot as usize) };
        (attr.type_index != ti::kTVMFFINone).then_some(attr)
    }
}

static VISIT_COLUMN: AttrColumn = AttrColumn::new(VISIT_ATTR);

/// Visits the children of `value`, of a type with a foreign `__s_visit__` hook (`attr`),
/// through that hook: each child it visits comes back to `each` in the region the hook sets,
/// with the child's position among the hook's visits appended to an error's path.
#[inline(never)]
fn for_each_hook_child(
    attr: sys::TVMFFIAny,
    value: &AnyView<'_>,
    kind: DefRegionKind,
    each: &mut dyn FnMut(&AnyView<'_>, DefRegionKind) -> Flow,
) -> Flow {
    let mut position = 0usize;
    let mut visit_child = |child: &AnyView<'_>, region: i32| -> ChildOutcome {
        let index = position;
        position += 1;
        match each(child, DefRegionKind::from_valid_raw(region)) {
            Ok(()) => Ok(None),
            Err(Halt::Interrupt(payload)) => Ok(Some(payload)),
            Err(Halt::Error(error)) => Err(with_frame(
                error,
                format_args!("child [{index}] visited by `{VISIT_ATTR}`"),
            )),
        }
    };
    match call_visit_hook(attr, value, kind as i32, &mut visit_child) {
        Ok(None) => Ok(()),
        Ok(Some(payload)) => Err(Halt::Interrupt(payload)),
        Err(error) => Err(Halt::Error(error)),
    }
}

/// The region of a field's subtree: the field's flag opens one, except inside a pattern.
#[inline]
pub(crate) fn field_region(flags: i64, inherited: DefRegionKind) -> DefRegionKind {
    if inherited == DefRegionKind::Pattern {
        DefRegionKind::Pattern
    } else if flags & field_flags::kTVMFFIFieldFlagBitMaskSEqHashDefSimple != 0 {
        DefRegionKind::Simple
    } else if flags & field_flags::kTVMFFIFieldFlagBitMaskSEqHashDefPattern != 0 {
        DefRegionKind::Pattern
    } else {
        inherited
    }
}

/// The region a value is visited in when `requested` is asked for inside `enclosing`: a pattern
/// region cannot be left (as a field's flag cannot leave it either).
#[inline]
pub(crate) fn nested_region(enclosing: DefRegionKind, requested: DefRegionKind) -> DefRegionKind {
    if enclosing == DefRegionKind::Pattern {
        DefRegionKind::Pattern
    } else {
        requested
    }
}

/// The structural kind (`TVMFFISEqHashKind`) of a registered type; `Unsupported` without one.
#[inline]
pub(crate) fn structural_kind(info: &sys::TVMFFITypeInfo) -> i32 {
    // SAFETY: `metadata` is null or points to the registry's metadata of the type.
    match unsafe { info.metadata.as_ref() } {
        Some(metadata) => metadata.structural_eq_hash_kind,
        None => sys::kTVMFFISEqHashKindUnsupported,
    }
}

/// The region a free variable's own fields are in: a simple definition defines the variable,
/// not what its fields hold.
#[inline]
pub(crate) fn object_fields_region(
    info: &sys::TVMFFITypeInfo,
    kind: DefRegionKind,
) -> DefRegionKind {
    if kind == DefRegionKind::Simple && structural_kind(info) == sys::kTVMFFISEqHashKindFreeVar {
        DefRegionKind::None
    } else {
        kind
    }
}

/// Calls `each` for every reflected field of a type, its ancestors' first (as C++
/// `ForEachFieldInfo`), until it breaks.
pub(crate) fn for_each_field<B>(
    info: &'static sys::TVMFFITypeInfo,
    mut each: impl FnMut(&'static sys::TVMFFIFieldInfo) -> std::ops::ControlFlow<B>,
) -> Option<B> {
    let mut level = |level: &'static sys::TVMFFITypeInfo| -> Option<B> {
        if level.fields.is_null() {
            return None;
        }
        for index in 0..level.num_fields.max(0) as usize {
            // SAFETY: `fields` has `num_fields` entries, owned by the registry for the life of
            // the process (a table moves only when its type registers a field, which happens
            // when the type registers, before objects of it exist).
            let field = unsafe { &*level.fields.add(index) };
            if let std::ops::ControlFlow::Break(b) = each(field) {
                return Some(b);
            }
        }
        None
    };
    // Ancestor 0 is `ffi.Object`, which has no fields.
    for depth in 1..info.type_depth.max(0) as usize {
        // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
        let ancestor = unsafe { &**info.type_ancestors.add(depth) };
        if let Some(b) = level(ancestor) {
            return Some(b);
        }
    }
    level(info)
}

/// Reads a field of the object at `object` through its reflected getter: an owned value.
///
/// # Safety
/// `object` is a live object of a type that has `field`.
pub(crate) unsafe fn read_field(
    object: NonNull<sys::TVMFFIObject>,
    field: &sys::TVMFFIFieldInfo,
) -> Result<Any> {
    let Some(getter) = field.getter else {
        return Err(Error::runtime_error(format!(
            "reflected field `{}` has no getter",
            field_name(field)
        )));
    };
    let mut out = sys::TVMFFIAny::NONE;
    // SAFETY: the field lives at `offset` in the object (the caller's contract); the getter
    // writes an owned value (or nothing) into `out`.
    let rc = unsafe {
        getter(
            (object.as_ptr() as *mut u8).offset(field.offset as isize) as *mut std::ffi::c_void,
            &mut out,
        )
    };
    // SAFETY: `out` is NONE or what the getter wrote, owned; wrapping it releases a partial
    // result on error too.
    let value = unsafe { Any::from_raw(out) };
    if rc != 0 {
        drop(value);
        return Err(Error::take_raised()
            .unwrap_or_else(|| Error::runtime_error("a field getter failed without an error")));
    }
    Ok(value)
}

/// The name of a registered field.
pub(crate) fn field_name(field: &sys::TVMFFIFieldInfo) -> &'static str {
    if field.name.data.is_null() {
        return "<unnamed>";
    }
    // SAFETY: field names are `size` bytes owned by the registry for the life of the process.
    let bytes: &'static [u8] =
        unsafe { std::slice::from_raw_parts(field.name.data as *const u8, field.name.size) };
    std::str::from_utf8(bytes).unwrap_or("<invalid>")
}

/// The registered type info of an object index.
#[inline]
pub(crate) fn object_type_info(type_index: i32) -> Result<&'static sys::TVMFFITypeInfo> {
    type_info::type_info(type_index)
        .ok_or_else(|| Error::runtime_error(format!("unregistered type index {type_index}")))
}

/// Calls `each` for every child of `value` (container contents: sequence items, map and dict
/// values, never keys; the structural fields of an object), in the region each is reached in. Errors and interrupts from `each` pass up with
/// the child's position appended to the error's path.
#[inline]
pub(crate) fn for_each_child<F: FnMut(&AnyView<'_>, DefRegionKind) -> Flow>(
    value: &AnyView<'_>,
    kind: DefRegionKind,
    mut each: F,
) -> Flow {
    let type_index = value.as_raw().type_index;
    if type_index < ti::kTVMFFIStaticObjectBegin {
        return Ok(());
    }
    match type_index {
        ti::kTVMFFIArray => {
            let array = <&ObjectRef<ArrayObj>>::from_any(value).ok_or_else(not_container)?;
            let size = array.seq.size.max(0) as usize;
            for index in 0..size {
                // SAFETY: an array never changes while referenced, and `value`'s owner keeps it
                // alive: its `size` cells stay valid through the callbacks.
                let child = unsafe {
                    AnyView::from_raw(*(array.seq.data as *const sys::TVMFFIAny).add(index))
                };
                each(&child, kind)
                    .map_err(|h| halt_frame(h, || format!("sequence item [{index}]")))?;
            }
            Ok(())
        }
        ti::kTVMFFIList => {
            let list = <&ObjectRef<ListObj>>::from_any(value).ok_or_else(not_container)?;
            let items = List::<Any>::from_object_ref(list.clone()).snapshot()?;
            for (index, child) in items.iter().enumerate() {
                each(&child.view(), kind)
                    .map_err(|h| halt_frame(h, || format!("sequence item [{index}]")))?;
            }
            Ok(())
        }
        ti::kTVMFFIMap => {
            let map = <&ObjectRef<MapObj>>::from_any(value).ok_or_else(not_container)?;
            // SAFETY: Map is repr(transparent) over ObjectRef<MapObj>.
            let map = unsafe { &*(map as *const ObjectRef<MapObj> as *const Map<Any, Any>) };
            // Keys are anchors, not children (as the runtime's own `ffi.Map` visit hook).
            for (index, (_, val)) in map.iter_views().enumerate() {
                each(&val, kind).map_err(|h| halt_frame(h, || format!("map value [{index}]")))?;
            }
            Ok(())
        }
        ti::kTVMFFIDict => {
            let dict = <&ObjectRef<DictObj>>::from_any(value).ok_or_else(not_container)?;
            let entries = Dict::<Any, Any>::from_object_ref(dict.clone()).snapshot()?;
            for (index, (_, val)) in entries.iter().enumerate() {
                each(&val.view(), kind)
                    .map_err(|h| halt_frame(h, || format!("dict value [{index}]")))?;
            }
            Ok(())
        }
        _ => for_each_field_child(value, type_index, kind, &mut each),
    }
}

#[cold]
fn not_container() -> Error {
    Error::runtime_error("a container value is not an instance of its container type")
}

fn for_each_field_child(
    value: &AnyView<'_>,
    type_index: i32,
    kind: DefRegionKind,
    each: &mut dyn FnMut(&AnyView<'_>, DefRegionKind) -> Flow,
) -> Flow {
    if let Some(attr) = VISIT_COLUMN.get_value(type_index) {
        // The hook's own region: like C++, a hook applies a free variable's clamp itself.
        return for_each_hook_child(attr, value, kind, each);
    }
    let info = object_type_info(type_index)?;
    let kind = object_fields_region(info, kind);
    // SAFETY: an object index: `v_obj` is a live object that `value`'s owner keeps alive.
    let object = unsafe { NonNull::new_unchecked(value.as_raw().value.v_obj) };
    let halted = for_each_field(info, |field| {
        if field.flags & field_flags::kTVMFFIFieldFlagBitMaskSEqHashIgnore != 0 {
            return std::ops::ControlFlow::Continue(());
        }
        // SAFETY: the object is live and of a type that has `field`.
        let flow = match unsafe { read_field(object, field) } {
            Ok(child) => each(&child.view(), field_region(field.flags, kind)),
            Err(error) => Err(Halt::Error(error)),
        };
        match flow {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(halt) => std::ops::ControlFlow::Break(halt_frame(halt, || {
                format!("field `{}`", field_name(field))
            })),
        }
    });
    halted.map_or(Ok(()), Err)
}

/// The walk engine: `dispatch` for each value, before or after its children. Plain values (no
/// children: one callback in either order) are handled here, inline in the parent's loop.
#[inline(always)]
fn walk_value<D: VisitDispatch>(
    dispatch: &mut D,
    order: WalkOrder,
    value: &AnyView<'_>,
    kind: DefRegionKind,
) -> Flow {
    let type_index = value.as_raw().type_index;
    if type_index >= ti::kTVMFFIStaticObjectBegin {
        return walk_object(dispatch, order, value, kind);
    }
    if type_index == ti::kTVMFFINone {
        return Ok(());
    }
    if dispatch.has_custom_descent() {
        // A context policy runs for leaves too (it may visit other values from there).
        return walk_object(dispatch, order, value, kind);
    }
    // SAFETY: `value`'s owner keeps it alive through this frame.
    let visit_value = unsafe { VisitValue::new(*value) };
    match dispatch.dispatch_visit(&visit_value, kind) {
        None | Some(Ok(WalkResult::Advance | WalkResult::Skip)) => Ok(()),
        Some(Ok(result)) => Err(interrupt_of(result)),
        Some(Err(error)) => Err(Halt::Error(error)),
    }
}

#[cold]
fn interrupt_of(result: WalkResult) -> Halt {
    match result {
        WalkResult::InterruptWith(payload) => Halt::Interrupt(payload),
        _ => Halt::Interrupt(Any::none()),
    }
}

/// [`walk_value`] of an object (or of any value, under a context policy): the callback, then
/// (or first) its children.
#[inline(never)]
fn walk_object<D: VisitDispatch>(
    dispatch: &mut D,
    order: WalkOrder,
    value: &AnyView<'_>,
    kind: DefRegionKind,
) -> Flow {
    // SAFETY: `value`'s owner keeps it alive through this frame.
    let visit_value = unsafe { VisitValue::new(*value) };
    if order == WalkOrder::PreOrder {
        match dispatch.dispatch_visit(&visit_value, kind) {
            None | Some(Ok(WalkResult::Advance)) => {}
            Some(Ok(WalkResult::Skip)) => return Ok(()),
            Some(Ok(result)) => return Err(interrupt_of(result)),
            Some(Err(error)) => return Err(Halt::Error(with_value_frame(error, value))),
        }
    }
    let descent = if dispatch.has_custom_descent() {
        match dispatch.walk_default_children(order, &visit_value, kind) {
            Ok(None) => Ok(()),
            Ok(Some(interrupt)) => Err(Halt::Interrupt(interrupt.value)),
            Err(error) => Err(Halt::Error(error)),
        }
    } else {
        for_each_child(value, kind, |child, child_kind| {
            walk_value(dispatch, order, child, child_kind)
        })
    };
    descent.map_err(|halt| halt_value(halt, value))?;
    if order == WalkOrder::PostOrder {
        match dispatch.dispatch_visit(&visit_value, kind) {
            None | Some(Ok(WalkResult::Advance | WalkResult::Skip)) => {}
            Some(Ok(result)) => return Err(interrupt_of(result)),
            Some(Err(error)) => return Err(Halt::Error(with_value_frame(error, value))),
        }
    }
    Ok(())
}

/// Walks one value with `dispatch` as the engine walks a child: its handler, the descent below
/// it, in `order`. What a context policy's `visit` does in a walk.
pub(crate) fn walk_one<D: VisitDispatch>(
    dispatch: &mut D,
    order: WalkOrder,
    value: &VisitValue,
    kind: DefRegionKind,
) -> Result<Option<VisitInterrupt>> {
    finish(walk_value(dispatch, order, value.view(), kind))
}

/// Walks the default children of `value` (not `value` itself) with `dispatch`: the end of a
/// context policy's chain in a walk.
pub(crate) fn walk_default_children_of<D: VisitDispatch>(
    dispatch: &mut D,
    order: WalkOrder,
    value: &VisitValue,
    kind: DefRegionKind,
) -> Result<Option<VisitInterrupt>> {
    finish(for_each_child(value.view(), kind, |child, child_kind| {
        walk_value(dispatch, order, child, child_kind)
    }))
}

fn finish(flow: Flow) -> Result<Option<VisitInterrupt>> {
    match flow {
        Ok(()) => Ok(None),
        Err(Halt::Interrupt(value)) => Ok(Some(VisitInterrupt { value })),
        Err(Halt::Error(error)) => Err(error),
    }
}

/// Walks `root` with a handler (C++ `StructuralWalk<order>(root, callbacks...)`): the handler
/// runs once per value reached, in `order`, and steers with its [`WalkResult`].
///
/// The handler is `&mut` a `#[dispatch(walk)]` type, a callback (`|v: i64|`,
/// `|n: &MyNodeObj|`, `|v: &VisitValue|`, each optionally with a trailing
/// `kind: DefRegionKind`, returning a `WalkResult` or a `Result<WalkResult>`), or a tuple of
/// them tried in order. A value no link takes is walked on (`Advance`); `None` values are not
/// reported. `Ok(Some(interrupt))` when a handler interrupted the walk; an error carries the
/// path to the value whose handler failed in its backtrace.
///
/// ```
/// use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
/// use tvm_ffi::{Any, Array, Map};
/// let root = Array::new([
///     Any::new(Map::new([("a", 1i64), ("b", 2)]).unwrap()),
///     Any::new(Array::new([3i64]).unwrap()),
/// ])
/// .unwrap();
/// let mut sum = 0;
/// let mut others = 0;
/// let done = structural::walk(
///     &root,
///     (
///         |value: i64| {
///             sum += value;
///             WalkResult::Advance
///         },
///         |_: &VisitValue| {
///             others += 1;
///             WalkResult::Advance
///         },
///     ),
///     WalkOrder::PreOrder,
/// )
/// .unwrap();
/// assert!(done.is_none());
/// assert_eq!(sum, 6);
/// assert_eq!(others, 3); // the two arrays and the map (its keys are not walked)
/// ```
pub fn walk<R: IntoArg, M, H: IntoWalker<M>>(
    root: R,
    handler: H,
    order: WalkOrder,
) -> Result<Option<VisitInterrupt>> {
    let holder = root.into_holder()?;
    let view = R::view(&holder);
    let mut dispatch = handler.into_walker();
    finish(walk_value(&mut dispatch, order, &view, DefRegionKind::None))
}

/// A user-driven traversal (C++ `StructuralVisitorObj`): [`Visitor::visit`] runs for the root
/// and decides itself where to descend: [`Visitor::default_visit_children`] for the default
/// children of a value (container contents, structural fields in the regions their flags
/// open), [`Visitor::visit_child`] for a value of its choosing in a region of its choosing.
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, VisitInterrupt, VisitValue, Visitor};
/// use tvm_ffi::{Array, Result};
/// /// Visits the first element of each array as a pattern definition, the others as uses.
/// #[derive(Default)]
/// struct Params { regions: Vec<(i64, DefRegionKind)> }
/// impl Visitor for Params {
///     fn visit(&mut self, value: &VisitValue, kind: DefRegionKind) -> Result<Option<VisitInterrupt>> {
///         if let Some(array) = value.cast::<Array<i64>>() {
///             for (i, item) in array.iter().enumerate() {
///                 let region = if i == 0 { DefRegionKind::Pattern } else { kind };
///                 if let Some(stop) = self.visit_child(item, region)? {
///                     return Ok(Some(stop));
///                 }
///             }
///             return Ok(None);
///         }
///         if let Some(int) = value.cast::<i64>() {
///             self.regions.push((int, kind));
///         }
///         self.default_visit_children(value, kind)
///     }
/// }
/// let mut params = Params::default();
/// structural::visit(&Array::new([1i64, 2]).unwrap(), &mut params).unwrap();
/// assert_eq!(params.regions, [(1, DefRegionKind::Pattern), (2, DefRegionKind::None)]);
/// ```
///
/// `#[dispatch(visit)]` implements `Visitor` from a type's `visit_*` methods, tried in source
/// order: the first whose value argument matches runs and owns the recursion below its value;
/// a value no method takes has its default children visited. A method returns `()`,
/// `Option<VisitInterrupt>` (`Some` stops the visit) or a `Result` of either
/// ([`IntoVisitOutcome`]):
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, VisitInterrupt, Visitor};
/// use tvm_ffi::{dispatch, Array, Result};
/// #[derive(Default)]
/// struct FirstOnly { seen: Vec<i64> }
/// #[dispatch(visit)]
/// impl FirstOnly {
///     /// Only the first element of an array of integers is visited.
///     fn visit_array(&mut self, array: Array<i64>, kind: DefRegionKind) -> Result<Option<VisitInterrupt>> {
///         match array.iter().next() {
///             Some(first) => self.visit_child(first, kind),
///             None => Ok(None),
///         }
///     }
///     fn visit_int(&mut self, value: i64) {
///         self.seen.push(value);
///     }
/// }
/// let root = Array::new([Array::new([1i64, 2]).unwrap(), Array::new([3i64]).unwrap()]).unwrap();
/// let mut visitor = FirstOnly::default();
/// structural::visit(&root, &mut visitor).unwrap(); // the outer array: default children
/// assert_eq!(visitor.seen, [1, 3]);
/// ```
pub trait Visitor {
    /// Visits one value, reached in `def_region_kind`.
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>;

    /// Visits `child` in `def_region_kind` (exactly that region: the caller chooses it),
    /// through [`Visitor::visit`]. A `None` child is not visited.
    fn visit_child<A: IntoArg>(
        &mut self,
        child: A,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>
    where
        Self: Sized,
    {
        let holder = child.into_holder()?;
        let view = A::view(&holder);
        if view.is_none() {
            return Ok(None);
        }
        // SAFETY: `holder` keeps the value alive through the call.
        let value = unsafe { VisitValue::new(view) };
        self.visit(&value, def_region_kind)
    }

    /// Visits the default children of `value` (not `value` itself) through
    /// [`Visitor::visit`]: container contents, or an object's structural fields in the regions
    /// their flags open. An error gains the path to the child it came from.
    fn default_visit_children(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>
    where
        Self: Sized,
    {
        visit_default_children_of(self, value, def_region_kind)
    }
}

/// The default children of `value` visited through `visitor.visit`: the body of
/// [`Visitor::default_visit_children`], also the end of a context policy's chain for a visitor
/// whose own `default_visit_children` enters the policy.
pub(crate) fn visit_default_children_of<V: Visitor + ?Sized>(
    visitor: &mut V,
    value: &VisitValue,
    def_region_kind: DefRegionKind,
) -> Result<Option<VisitInterrupt>> {
    let flow = for_each_child(value.view(), def_region_kind, |child, kind| {
        if child.is_none() {
            return Ok(());
        }
        // SAFETY: `child`'s owner keeps it alive through the call.
        let child = unsafe { VisitValue::new(*child) };
        match visitor.visit(&child, kind) {
            Ok(None) => Ok(()),
            Ok(Some(interrupt)) => Err(Halt::Interrupt(interrupt.value)),
            Err(error) => Err(Halt::Error(error)),
        }
    })
    .map_err(|halt| halt_value(halt, value.view()));
    finish(flow)
}

impl<V: Visitor + ?Sized> Visitor for &mut V {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        (**self).visit(value, def_region_kind)
    }
}

/// What a `#[dispatch(visit)]` handler may return: `()` (visited, go on), an
/// `Option<VisitInterrupt>` (`Some` stops the visit with its payload), or a `Result` of either.
///
/// ```
/// use tvm_ffi::structural::{IntoVisitOutcome, VisitInterrupt};
/// use tvm_ffi::Result;
/// assert!(().into_visit_outcome().unwrap().is_none());
/// let stop = Some(VisitInterrupt::with(3i64)).into_visit_outcome().unwrap().unwrap();
/// assert_eq!(stop.value.cast::<i64>().unwrap(), 3);
/// let ok: Result<()> = Ok(());
/// assert!(ok.into_visit_outcome().unwrap().is_none());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not what a structural visitor handler returns",
    label = "not a visitor handler result",
    note = "a `#[dispatch(visit)]` handler returns `()`, `Option<VisitInterrupt>`, `Result<()>` or `Result<Option<VisitInterrupt>>`"
)]
pub trait IntoVisitOutcome {
    /// The outcome: `Ok(Some(..))` stops the visit.
    fn into_visit_outcome(self) -> Result<Option<VisitInterrupt>>;
}

impl IntoVisitOutcome for () {
    #[inline(always)]
    fn into_visit_outcome(self) -> Result<Option<VisitInterrupt>> {
        Ok(None)
    }
}

impl IntoVisitOutcome for Option<VisitInterrupt> {
    #[inline(always)]
    fn into_visit_outcome(self) -> Result<Option<VisitInterrupt>> {
        Ok(self)
    }
}

impl<T: IntoVisitOutcome> IntoVisitOutcome for Result<T> {
    #[inline(always)]
    fn into_visit_outcome(self) -> Result<Option<VisitInterrupt>> {
        self.and_then(IntoVisitOutcome::into_visit_outcome)
    }
}
