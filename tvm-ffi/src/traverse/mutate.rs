//! Structural map and mutate, in Rust: a rewrite of a value graph with copy-on-write. Reached
//! through [`crate::structural`].
//!
//! Two layers, as for the walk: [`map`] recurses on its own and calls a mapper (closures, a
//! chain, a `#[dispatch(map)]` type) per value; a [`Mutator`] drives the recursion itself.
//!
//! What nothing changed comes back as the same object, with no allocation: a container or
//! object is rebuilt only when one of its children changed. The root is taken by value, so the
//! engine knows who else holds it: a container that only the traversal holds (the root moved
//! in, or a child of such a container) is updated in place; one held elsewhere too is copied
//! (pass `root.clone()` to keep the original). An object is copied with its type's
//! `__ffi_shallow_copy__` and its changed fields set through their setters; a type with
//! structural fields but no shallow copy is refused, changed or not, so that whether a map
//! succeeds never depends on the values. Map and dict keys are anchors: they are not mapped.
//! An object of a `"dag-node"` or `"free-var"` type (identity matters) is mapped once per map,
//! every occurrence receiving the same result; it is never updated in place.
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::ptr::NonNull;

use super::link::link_handlers;
use super::mutate_hook::{map_through_hook, HookEngine};
use super::mutate_value::{
    is_unique, mode_of, InplaceMode, InplaceValue, IntoMapResult, MapValue, MutateValue, Permit,
    UnchangedOr,
};
use super::visit::{
    field_name, field_region, for_each_field, object_fields_region, object_type_info,
    owned_from_raw, read_field, structural_kind, with_frame, with_value_frame, AttrColumn,
    DefRegionKind, VisitValue, WalkOrder,
};
use crate::abi::sys::{self, field_flags, type_index as ti};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::{AnyObject, ArrayObj, DictObj, ListObj, MapObj};
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny, IntoAny};
use crate::call::function::IntoArg;
use crate::data::container::{Array, Dict, List, Map};

/// `result`, or `keep()` when it is the [`Unchanged`] marker.
#[inline(always)]
fn or_keep(result: Result<Any>, keep: impl FnOnce() -> Any) -> Result<Any> {
    match result {
        Ok(value) if value.as_raw().type_index == ti::kTVMFFIUnchanged => Ok(keep()),
        other => other,
    }
}

/// A stateful mapper: what `#[tvm_ffi::dispatch(map)]` implements for a type from its `map_*`
/// methods (tried in source order; the first whose argument type matches runs). `None`: no
/// method takes the value, which keeps it (after its children are mapped).
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder};
/// use tvm_ffi::{dispatch, Any, Array};
/// struct Double;
/// #[dispatch(map)]
/// impl Double {
///     fn map_int(&mut self, value: i64) -> Any {
///         Any::new(value * 2)
///     }
/// }
/// let out = structural::map(Array::new([1i64, 2]).unwrap(), &mut Double, WalkOrder::PostOrder)
///     .unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2, 4]);
/// ```
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait MapDispatch {
    /// Runs the first method that takes `value`, if any.
    fn dispatch_map(
        &mut self,
        value: &MapValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<Any>>;
}

impl<V: MapDispatch + ?Sized> MapDispatch for &mut V {
    #[inline(always)]
    fn dispatch_map(&mut self, value: &MapValue, kind: DefRegionKind) -> Option<Result<Any>> {
        (**self).dispatch_map(value, kind)
    }
}

/// One link of a mapper: a callback of one of the [`shapes`](super::link::shapes), or `&mut` a
/// `#[dispatch(map)]` type. `None` when the link does not take the value. The shapes are those of a
/// walk (see [`shapes`](super::link::shapes)), returning an `Any`.
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder};
/// use tvm_ffi::{Any, Array};
/// let out = structural::map(
///     Array::new([Any::new(1i64), Any::new("a")]).unwrap(),
///     (|v: i64| Any::new(v + 1), |s: tvm_ffi::String| Any::new(format!("{s}!"))),
///     WalkOrder::PostOrder,
/// )
/// .unwrap();
/// assert_eq!(out.cast::<Array<Any>>().unwrap()[1].cast::<String>().unwrap(), "a!");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural map callback",
    label = "not a map callback",
    note = "a map callback takes the value (`i64`, `Array<T>`, `ObjectRef<T>`, `&NodeObj`, `&MapValue`, ...) and optionally a trailing `DefRegionKind`, and returns its replacement (an `Any`, `Unchanged`, an `UnchangedOr<T>` or any value convertible into an `Any`) or a `Result` of one"
)]
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait MapLink<M> {
    /// Runs the link on `value` if it takes it.
    fn try_map(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Option<Result<Any>>;
}

/// What [`map`] accepts as its mapper: `&mut` a `#[dispatch(map)]` type, one callback of any of the
/// [`shapes`](super::link::shapes), or a tuple of up to 12 of them tried in order (a tuple is
/// itself a link, so chains nest).
///
/// ```
/// use tvm_ffi::structural::{self, IntoMapper, WalkOrder};
/// use tvm_ffi::{Any, Array};
/// fn rewrite<M>(root: Array<i64>, mapper: impl IntoMapper<M>) -> Vec<i64> {
///     let out = structural::map(root, mapper, WalkOrder::PostOrder).unwrap();
///     out.cast::<Array<i64>>().unwrap().to_vec()
/// }
/// assert_eq!(rewrite(Array::new([1i64]).unwrap(), |v: i64| Any::new(-v)), [-1]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural mapper",
    label = "not a mapper",
    note = "pass `&mut` a `#[dispatch(map)]` type, a callback taking the value (`i64`, `Array<T>`, `&NodeObj`, `&MapValue`, ...) and optionally a trailing `DefRegionKind` and returning its replacement (an `Any`, `Unchanged`, an `UnchangedOr<T>` or any value convertible into an `Any`, or a `Result` of one), or a tuple of up to 12 of them"
)]
pub trait IntoMapper<M> {
    /// The mapper as a dispatch.
    type Mapper: MapDispatch;
    /// Converts.
    fn into_mapper(self) -> Self::Mapper;

    /// Maps `root` (what [`map`] runs; a mapper with context policies runs them too). Not to
    /// be called directly.
    #[doc(hidden)]
    fn map_root(self, root: Any, order: WalkOrder) -> Result<Any>
    where
        Self: Sized,
    {
        Mapper::new(self.into_mapper(), order, &DirectDescent).run(root)
    }
}

link_handlers! {
    link: MapLink::try_map,
    value: MapValue,
    region: DefRegionKind,
    output: Any,
    returns: IntoMapResult::into_map_result,
    dispatch: MapDispatch::dispatch_map,
    handler: IntoMapper::into_mapper -> Mapper,
}

/// A user-driven rewrite (C++ `StructuralMutatorObj`): [`Mutator::mutate`] runs for the root
/// and decides where to recurse: [`Mutator::default_mutate`] maps the default children of a
/// value through `mutate` again (copy-on-write, as [`map`]); [`Mutator::mutate_child`] maps a
/// value of its choosing.
///
/// A mutator that also implements [`Mutator::maybe_inplace_mutate`] (delegating to
/// [`Mutator::default_maybe_inplace_mutate`]) lets containers that only the traversal holds be
/// updated in place, as [`map`] does.
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, MapValue, Mutator};
/// use tvm_ffi::{Any, Array, Result};
/// struct Negate;
/// impl Mutator for Negate {
///     fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
///         match value.cast::<i64>() {
///             Some(int) => Ok(Any::new(-int)),
///             None => self.default_mutate(value, kind),
///         }
///     }
/// }
/// let source = Array::new([1i64, 2]).unwrap();
/// let out = structural::mutate(source.clone(), &mut Negate).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [-1, -2]);
/// assert_eq!(source.to_vec(), [1, 2]); // shared: copied, not changed
/// ```
///
/// `#[dispatch(mutate)]` implements `Mutator` from a type's `mutate_*` methods, tried in source
/// order: the first whose value argument matches returns the replacement (anything a map
/// callback returns) and owns the recursion below its value; a value no method takes has its
/// default children mutated (in place when only the traversal holds it):
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, Mutator};
/// use tvm_ffi::{dispatch, Any, Array, Result};
/// #[derive(Default)]
/// struct FirstOnly { seen: Vec<i64> }
/// #[dispatch(mutate)]
/// impl FirstOnly {
///     /// Only the first element of an array of integers is mutated.
///     fn mutate_array(&mut self, array: Array<i64>, kind: DefRegionKind) -> Result<Array<i64>> {
///         let mut items = array.to_vec();
///         if let Some(first) = items.first_mut() {
///             *first = self.mutate_child(*first, kind)?.cast()?;
///         }
///         Array::new(items)
///     }
///     fn mutate_int(&mut self, value: i64) -> i64 {
///         self.seen.push(value);
///         value * 10
///     }
/// }
/// let mut mutator = FirstOnly::default();
/// let out = structural::mutate(Array::new([1i64, 2]).unwrap(), &mut mutator).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [10, 2]);
/// assert_eq!(mutator.seen, [1]);
/// ```
pub trait Mutator {
    /// The replacement of `value`, reached in `def_region_kind` (or `Any::new(Unchanged)` to
    /// keep it); the source is not changed.
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any>;

    /// The replacement of a value that only the traversal holds. By default as
    /// [`Mutator::mutate`] (no update in place).
    fn maybe_inplace_mutate(
        &mut self,
        value: InplaceValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        self.mutate(value.as_value(), def_region_kind)
    }

    /// Maps `child` (borrowed: never updated in place) through this mutator.
    fn mutate_child<A: IntoArg>(&mut self, child: A, def_region_kind: DefRegionKind) -> Result<Any>
    where
        Self: Sized,
    {
        let holder = child.into_holder()?;
        user_dispatch(self, &A::view(&holder), def_region_kind, Permit::Copy)
    }

    /// Maps `child` (owned: updated in place when nothing else holds it) through this mutator.
    fn maybe_inplace_mutate_child<T: IntoAny>(
        &mut self,
        child: T,
        def_region_kind: DefRegionKind,
    ) -> Result<Any>
    where
        Self: Sized,
    {
        self.maybe_inplace_mutate_child_with_mode(child, def_region_kind, InplaceMode::Allow)
    }

    /// Maps `child` (owned) through this mutator with in-place permission `mode`: `Allow` as
    /// [`Mutator::maybe_inplace_mutate_child`], `Disallow` copies it even when nothing else holds
    /// it.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, InplaceMode, MapValue, Mutator};
    /// use tvm_ffi::{Any, Array, Result};
    /// struct Entry { mode: InplaceMode, entered: usize }
    /// impl Mutator for Entry {
    ///     fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
    ///         if let Some(v) = value.cast::<i64>() {
    ///             return Ok(Any::new(v + 1));
    ///         }
    ///         if value.cast::<bool>().is_some() {
    ///             let child = Array::new([1i64])?;
    ///             self.entered = child.as_object_ref().as_raw().as_ptr() as usize;
    ///             let mode = self.mode;
    ///             return self.maybe_inplace_mutate_child_with_mode(child, kind, mode);
    ///         }
    ///         self.default_mutate(value, kind)
    ///     }
    ///     fn maybe_inplace_mutate(
    ///         &mut self,
    ///         value: tvm_ffi::structural::InplaceValue<'_>,
    ///         kind: DefRegionKind,
    ///     ) -> Result<Any> {
    ///         if value.cast::<bool>().is_some() {
    ///             return self.mutate(value.as_value(), kind);
    ///         }
    ///         self.default_maybe_inplace_mutate(value, kind)
    ///     }
    /// }
    /// for mode in [InplaceMode::Disallow, InplaceMode::Allow] {
    ///     let mut entry = Entry { mode, entered: 0 };
    ///     let out = structural::mutate(true, &mut entry).unwrap().cast::<Array<i64>>().unwrap();
    ///     assert_eq!(out.to_vec(), [2]);
    ///     let reused = out.as_object_ref().as_raw().as_ptr() as usize == entry.entered;
    ///     assert_eq!(reused, mode == InplaceMode::Allow);
    /// }
    /// ```
    fn maybe_inplace_mutate_child_with_mode<T: IntoAny>(
        &mut self,
        child: T,
        def_region_kind: DefRegionKind,
        mode: InplaceMode,
    ) -> Result<Any>
    where
        Self: Sized,
    {
        let child = Any::new(child);
        user_dispatch(self, &child.view(), def_region_kind, mode.permit())
    }

    /// Maps the default children of `value` through this mutator (copy-on-write): the same
    /// value when none changed.
    fn default_mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any>
    where
        Self: Sized,
    {
        user_default(self, value.view(), def_region_kind, Permit::Copy)
    }

    /// The default children of `value`, a value of the caller's choosing (a typed handler's
    /// argument), mutated through this mutator: as [`Mutator::default_mutate`] (copy-on-write,
    /// never in place).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, Mutator};
    /// use tvm_ffi::{dispatch, Any, Array, Result};
    /// struct Count { arrays: usize }
    /// #[dispatch(mutate)]
    /// impl Count {
    ///     fn mutate_array(&mut self, array: Array<i64>, kind: DefRegionKind) -> Result<Any> {
    ///         self.arrays += 1;
    ///         self.default_mutate_value(&array, kind)
    ///     }
    ///     fn mutate_int(&mut self, v: i64) -> i64 { v + 1 }
    /// }
    /// let mut count = Count { arrays: 0 };
    /// let out = structural::mutate(Array::new([1i64]).unwrap(), &mut count).unwrap();
    /// assert_eq!((out.cast::<Array<i64>>().unwrap().to_vec(), count.arrays), (vec![2], 1));
    /// ```
    fn default_mutate_value<A: IntoArg>(
        &mut self,
        value: A,
        def_region_kind: DefRegionKind,
    ) -> Result<Any>
    where
        Self: Sized,
    {
        let holder = value.into_holder()?;
        user_default(self, &A::view(&holder), def_region_kind, Permit::Copy)
    }

    /// As [`Mutator::default_mutate_value`], [`UnchangedOr::Unchanged`] when no child of
    /// `value` changed.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, Mutator, UnchangedOr};
    /// use tvm_ffi::{dispatch, Any, Array, Result};
    /// struct Keep;
    /// #[dispatch(mutate)]
    /// impl Keep {
    ///     fn mutate_array(&mut self, array: Array<i64>, kind: DefRegionKind) -> Result<UnchangedOr<Any>> {
    ///         let result = self.default_mutate_value_result(&array, kind)?;
    ///         assert!(result.is_unchanged());
    ///         Ok(result)
    ///     }
    /// }
    /// let source = Array::new([1i64]).unwrap();
    /// let out = structural::mutate(source.clone(), Keep).unwrap();
    /// assert!(out.cast::<Array<i64>>().unwrap().as_object_ref().ptr_eq(source.as_object_ref()));
    /// ```
    fn default_mutate_value_result<A: IntoArg>(
        &mut self,
        value: A,
        def_region_kind: DefRegionKind,
    ) -> Result<UnchangedOr<Any>>
    where
        Self: Sized,
    {
        let holder = value.into_holder()?;
        let view = A::view(&holder);
        let mutated = user_default(self, &view, def_region_kind, Permit::Copy)?;
        Ok(if same(&view, &mutated.view()) {
            UnchangedOr::Unchanged
        } else {
            UnchangedOr::Changed(mutated)
        })
    }

    /// As [`Mutator::default_mutate`], updating the value in place when its handle allows it
    /// and still nothing else holds it (the handle is consumed: no borrow of the value outlives
    /// this call). An example is on [`InplaceValue`].
    fn default_maybe_inplace_mutate<T>(
        &mut self,
        value: MutateValue<'_, T>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any>
    where
        Self: Sized,
    {
        self.default_maybe_inplace_mutate_with_mode(value, def_region_kind, InplaceMode::Allow)
    }

    /// As [`Mutator::default_maybe_inplace_mutate`] with in-place permission `mode`, which can
    /// withdraw the handle's permission (`Disallow`: copy-on-write) but never grant more. An
    /// example is on [`InplaceMode`].
    fn default_maybe_inplace_mutate_with_mode<T>(
        &mut self,
        value: MutateValue<'_, T>,
        def_region_kind: DefRegionKind,
        mode: InplaceMode,
    ) -> Result<Any>
    where
        Self: Sized,
    {
        let permit = value.permit(mode);
        user_default(self, value.view(), def_region_kind, permit)
    }

    /// As [`Mutator::default_maybe_inplace_mutate`], [`UnchangedOr::Unchanged`] when the value
    /// comes back as it was (the same object, possibly updated in place).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, InplaceValue, MapValue, Mutator, Unchanged};
    /// use tvm_ffi::{Any, Array, Result};
    /// struct Keep;
    /// impl Mutator for Keep {
    ///     fn mutate(&mut self, _: &MapValue, _: DefRegionKind) -> Result<Any> {
    ///         Ok(Any::new(Unchanged))
    ///     }
    ///     fn maybe_inplace_mutate(&mut self, value: InplaceValue<'_>, kind: DefRegionKind) -> Result<Any> {
    ///         let result = self.default_maybe_inplace_mutate_result(value, kind)?;
    ///         assert!(result.is_unchanged());
    ///         Ok(Any::new(result))
    ///     }
    /// }
    /// let root = Array::new([1i64]).unwrap();
    /// let before = root.as_object_ref().as_raw();
    /// let out = structural::mutate(root, Keep).unwrap();
    /// assert_eq!(out.cast::<Array<i64>>().unwrap().as_object_ref().as_raw(), before);
    /// ```
    fn default_maybe_inplace_mutate_result<T>(
        &mut self,
        value: MutateValue<'_, T>,
        def_region_kind: DefRegionKind,
    ) -> Result<UnchangedOr<Any>>
    where
        Self: Sized,
    {
        self.default_maybe_inplace_mutate_with_mode_result(
            value,
            def_region_kind,
            InplaceMode::Allow,
        )
    }

    /// As [`Mutator::default_maybe_inplace_mutate_with_mode`], [`UnchangedOr::Unchanged`] when
    /// the value comes back as it was (an example of the `_result` form is on
    /// [`Mutator::default_maybe_inplace_mutate_result`]).
    fn default_maybe_inplace_mutate_with_mode_result<T>(
        &mut self,
        value: MutateValue<'_, T>,
        def_region_kind: DefRegionKind,
        mode: InplaceMode,
    ) -> Result<UnchangedOr<Any>>
    where
        Self: Sized,
    {
        // The handle is spent here (taken by value): the value stays alive in the engine's
        // cell for `'_` (see `MutateValue`).
        let permit = value.permit(mode);
        let view = value.scoped_view();
        let mutated = user_default(self, &view, def_region_kind, permit)?;
        Ok(unchanged_or(&view, mutated))
    }

    /// The default descent of `value` (its children mutated through this mutator), which a
    /// mutator with context policies (`#[dispatch(mutate, policy = ..)]`) runs through them.
    /// Every `default_*` method ends here. Not to be called directly.
    #[doc(hidden)]
    fn on_default_mutate(
        &mut self,
        value: MutateValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let permit = value.permit(InplaceMode::Allow);
        engine_default(self, value.view(), def_region_kind, permit)
    }

    /// The replacement already made for the free variable `var`, if any (by default none: each
    /// occurrence is mapped again).
    fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
        let _ = var;
        Ok(None)
    }

    /// Records the replacement of the free variable `var` (by default forgotten).
    fn var_remap_set(&mut self, var: &MapValue, mapped: &Any) -> Result<()> {
        let _ = (var, mapped);
        Ok(())
    }
}

impl<M: Mutator + ?Sized> Mutator for &mut M {
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        (**self).mutate(value, def_region_kind)
    }
    fn maybe_inplace_mutate(
        &mut self,
        value: InplaceValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        (**self).maybe_inplace_mutate(value, def_region_kind)
    }
    fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
        (**self).var_remap_get(var)
    }
    fn var_remap_set(&mut self, var: &MapValue, mapped: &Any) -> Result<()> {
        (**self).var_remap_set(var, mapped)
    }
    fn on_default_mutate(
        &mut self,
        value: MutateValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        (**self).on_default_mutate(value, def_region_kind)
    }
}

/// Whether two values are the same bits (the same object, the same plain value).
#[inline(always)]
fn same(a: &AnyView<'_>, b: &AnyView<'_>) -> bool {
    let (a, b) = (a.as_raw(), b.as_raw());
    // SAFETY: every member of the union is 8 plain bytes; comparing bits is always defined.
    a.type_index == b.type_index
        && a.zero_padding == b.zero_padding
        && unsafe { a.value.v_uint64 == b.value.v_uint64 }
}

#[inline(always)]
pub(crate) fn owned(value: &AnyView<'_>) -> Any {
    // SAFETY: `value` is a valid value kept alive by its owner.
    unsafe { owned_from_raw(value.as_raw()) }
}

static SHALLOW_COPY_COLUMN: AttrColumn = AttrColumn::new("__ffi_shallow_copy__");

/// A [`Driver`] as the engine a foreign hook calls back into.
struct HookDriver<'d, D: ?Sized>(&'d mut D);

impl<D: Driver + ?Sized> HookEngine for HookDriver<'_, D> {
    fn mutate_child(
        &mut self,
        child: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        self.0.recurse(child, kind, permit)
    }
    fn var_remap_get(&mut self, var: &AnyView<'_>) -> Result<Option<Any>> {
        self.0.var_remap_get(var)
    }
    fn var_remap_set(&mut self, var: &AnyView<'_>, mapped: &AnyView<'_>) -> Result<()> {
        self.0.var_remap_set(var, mapped)
    }
}

/// The default rewrite of a value's children; what differs between [`map`] and a [`Mutator`]
/// is how a child is mapped (`recurse`) and where variable remappings are kept.
trait Driver {
    fn recurse(&mut self, child: &AnyView<'_>, kind: DefRegionKind, permit: Permit) -> Result<Any>;

    /// The replacement recorded for the object `var` (what a foreign hook's
    /// `var_remap_get` reads).
    fn var_remap_get(&mut self, var: &AnyView<'_>) -> Result<Option<Any>>;

    /// Records the replacement of the object `var` (a foreign hook's `var_remap_set`).
    fn var_remap_set(&mut self, var: &AnyView<'_>, mapped: &AnyView<'_>) -> Result<()>;

    /// The children of `value` mapped by its type's foreign mutation hook; `None`: no hook.
    #[inline]
    fn map_through_hook(
        &mut self,
        value: &AnyView<'_>,
        type_index: i32,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Option<Result<Any>> {
        let mapped = map_through_hook(value, type_index, kind, permit, &mut HookDriver(self))?;
        Some(mapped.map(|image| image.unwrap_or_else(|| owned(value))))
    }

    fn default_map(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let type_index = value.as_raw().type_index;
        if type_index < ti::kTVMFFIStaticObjectBegin {
            return Ok(owned(value));
        }
        match type_index {
            ti::kTVMFFIArray => self.map_array(value, kind, permit),
            ti::kTVMFFIList => self.map_list(value, kind, permit),
            ti::kTVMFFIMap => self.map_map(value, kind, permit),
            ti::kTVMFFIDict => self.map_dict(value, kind, permit),
            // Immutable scalars: the runtime's own `__s_mutate__` of these keeps them.
            ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIBigInt => Ok(owned(value)),
            _ => self.map_object(value, type_index, kind, permit),
        }
    }

    fn map_array(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let array = <&ObjectRef<ArrayObj>>::from_any(value).ok_or_else(not_container)?;
        let size = array.seq.size.max(0) as usize;
        let cells = array.seq.data as *mut sys::TVMFFIAny;
        if permit == Permit::InPlace && is_unique(value) {
            for index in 0..size {
                // SAFETY: `size` cells owned by the array, which only this traversal holds:
                // nothing else reads or writes them while it runs.
                let cell = unsafe { cells.add(index) };
                // SAFETY: as above; the cell keeps the child alive until it is replaced.
                let child = unsafe { AnyView::from_raw(*cell) };
                let mapped = self
                    .recurse(&child, kind, Permit::InPlace)
                    .map_err(|e| with_frame(e, format_args!("sequence item [{index}]")))?;
                if !same(&child, &mapped.view()) {
                    // SAFETY: the cell owns its value: the old one is released, the new one
                    // moved in.
                    unsafe { drop(Any::from_raw(std::ptr::replace(cell, mapped.into_raw()))) };
                }
            }
            return Ok(owned(value));
        }
        let mut out: Option<Vec<Any>> = None;
        for index in 0..size {
            // SAFETY: a shared array never changes, and `value`'s owner keeps it alive.
            let child = unsafe { AnyView::from_raw(*cells.add(index)) };
            let mapped = self
                .recurse(&child, kind, Permit::Copy)
                .map_err(|e| with_frame(e, format_args!("sequence item [{index}]")))?;
            match &mut out {
                Some(out) => out.push(mapped),
                None if !same(&child, &mapped.view()) => {
                    let mut items = Vec::with_capacity(size);
                    // SAFETY: as above.
                    items.extend(
                        (0..index).map(|i| owned(unsafe { &AnyView::from_raw(*cells.add(i)) })),
                    );
                    items.push(mapped);
                    out = Some(items);
                }
                None => {}
            }
        }
        match out {
            None => Ok(owned(value)),
            Some(items) => Ok(Any::new(Array::<Any>::new(items)?)),
        }
    }

    fn map_list(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let list = <&ObjectRef<ListObj>>::from_any(value).ok_or_else(not_container)?;
        let list = List::<Any>::from_object_ref(list.clone());
        // A copy first: a callback may change the list it was reached through.
        let mut items = list.snapshot()?;
        let mut changed = Vec::new();
        for (index, item) in items.iter_mut().enumerate() {
            let mapped = self
                .recurse(&item.view(), kind, Permit::Copy)
                .map_err(|e| with_frame(e, format_args!("sequence item [{index}]")))?;
            if !same(&item.view(), &mapped.view()) {
                *item = mapped;
                changed.push(index);
            }
        }
        if changed.is_empty() {
            return Ok(owned(value));
        }
        // `list` is one more reference of ours: unique means two (and no weak one).
        if permit == Permit::InPlace && list.as_object_ref().held_only_by(2) {
            for index in changed {
                list.set(index, items[index].clone())?;
            }
            return Ok(owned(value));
        }
        Ok(Any::new(List::<Any>::new(items)?))
    }

    fn map_map(&mut self, value: &AnyView<'_>, kind: DefRegionKind, permit: Permit) -> Result<Any> {
        let map = <&ObjectRef<MapObj>>::from_any(value).ok_or_else(not_container)?;
        // SAFETY: Map is repr(transparent) over ObjectRef<MapObj>.
        let map = unsafe { &*(map as *const ObjectRef<MapObj> as *const Map<Any, Any>) };
        if permit == Permit::InPlace && is_unique(value) {
            if let Some(cells) = map.value_cells() {
                for (index, cell) in cells.into_iter().enumerate() {
                    // SAFETY: a value cell of a map that only this traversal holds.
                    let child = unsafe { AnyView::from_raw(*cell) };
                    let mapped = self
                        .recurse(&child, kind, Permit::InPlace)
                        .map_err(|e| with_frame(e, format_args!("map value [{index}]")))?;
                    if !same(&child, &mapped.view()) {
                        // SAFETY: the cell owns its value; keys (and so the table) are kept.
                        unsafe { drop(Any::from_raw(std::ptr::replace(cell, mapped.into_raw()))) };
                    }
                }
                return Ok(owned(value));
            }
        }
        let mut out: Option<Vec<(Any, Any)>> = None;
        for (index, (key, child)) in map.iter_views().enumerate() {
            let mapped = self
                .recurse(&child, kind, Permit::Copy)
                .map_err(|e| with_frame(e, format_args!("map value [{index}]")))?;
            match &mut out {
                Some(out) => out.push((owned(&key), mapped)),
                None if !same(&child, &mapped.view()) => {
                    let mut entries = Vec::with_capacity(map.len());
                    entries.extend(
                        map.iter_views()
                            .take(index)
                            .map(|(k, v)| (owned(&k), owned(&v))),
                    );
                    entries.push((owned(&key), mapped));
                    out = Some(entries);
                }
                None => {}
            }
        }
        match out {
            None => Ok(owned(value)),
            Some(entries) => Ok(Any::new(Map::<Any, Any>::new(entries)?)),
        }
    }

    fn map_dict(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let dict = <&ObjectRef<DictObj>>::from_any(value).ok_or_else(not_container)?;
        let dict = Dict::<Any, Any>::from_object_ref(dict.clone());
        // A copy first: a callback may change the dict it was reached through.
        let mut entries = dict.snapshot()?;
        let mut changed = Vec::new();
        for (index, (_, item)) in entries.iter_mut().enumerate() {
            let mapped = self
                .recurse(&item.view(), kind, Permit::Copy)
                .map_err(|e| with_frame(e, format_args!("dict value [{index}]")))?;
            if !same(&item.view(), &mapped.view()) {
                *item = mapped;
                changed.push(index);
            }
        }
        if changed.is_empty() {
            return Ok(owned(value));
        }
        // `dict` is one more reference of ours: unique means two (and no weak one).
        if permit == Permit::InPlace && dict.as_object_ref().held_only_by(2) {
            for index in changed {
                let (key, item) = &entries[index];
                dict.insert(key.clone(), item.clone())?;
            }
            return Ok(owned(value));
        }
        Ok(Any::new(Dict::<Any, Any>::new(entries)?))
    }

    fn map_object(
        &mut self,
        value: &AnyView<'_>,
        type_index: i32,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        if let Some(mapped) = self.map_through_hook(value, type_index, kind, permit) {
            return mapped;
        }
        let info = object_type_info(type_index)?;
        let structural = |field: &sys::TVMFFIFieldInfo| {
            field.flags & field_flags::kTVMFFIFieldFlagBitMaskSEqHashIgnore == 0
        };
        // A leaf (no structural fields: strings, shapes, functions...) is its own image.
        if for_each_field(info, |field| {
            if structural(field) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .is_none()
        {
            return Ok(owned(value));
        }
        if SHALLOW_COPY_COLUMN.get(type_index).is_none() {
            return Err(Error::type_error(format!(
                "type `{}` cannot be mapped structurally: it registers no `__ffi_shallow_copy__` \
                 (a Rust type registers one when it derives `Clone`)",
                crate::base::object::type_info::type_key_of_index(type_index)
            )));
        }
        let kind = object_fields_region(info, kind);
        // SAFETY: an object index: `v_obj` is a live object that `value`'s owner keeps alive.
        let object = unsafe { NonNull::new_unchecked(value.as_raw().value.v_obj) };
        let mut changes: Vec<(&'static str, Any)> = Vec::new();
        let failed = for_each_field(info, |field| {
            if !structural(field) {
                return ControlFlow::Continue(());
            }
            let name = field_name(field);
            // SAFETY: the object is live and of a type that has `field`.
            let mapped = unsafe { read_field(object, field) }.and_then(|child| {
                let mapped =
                    self.recurse(&child.view(), field_region(field.flags, kind), Permit::Copy)?;
                Ok((!same(&child.view(), &mapped.view())).then_some(mapped))
            });
            match mapped {
                Ok(Some(mapped)) => changes.push((name, mapped)),
                Ok(None) => {}
                Err(error) => {
                    return ControlFlow::Break(with_frame(error, format_args!("field `{name}`")))
                }
            }
            ControlFlow::Continue(())
        });
        if let Some(error) = failed {
            return Err(error);
        }
        if changes.is_empty() {
            return Ok(owned(value));
        }
        let source = <&ObjectRef<AnyObject>>::from_any(value).ok_or_else(not_container)?;
        Ok(Any::new(source.copy_with(changes)?))
    }
}

#[cold]
fn not_container() -> Error {
    Error::runtime_error("an object value is not an instance of its own type")
}

/// Whether the value is an object whose identity matters (`"dag-node"`, `"free-var"`).
#[inline]
fn has_identity(value: &AnyView<'_>) -> bool {
    let type_index = value.as_raw().type_index;
    if type_index < ti::kTVMFFIStaticObjectBegin
        || matches!(
            type_index,
            ti::kTVMFFIArray | ti::kTVMFFIList | ti::kTVMFFIMap | ti::kTVMFFIDict
        )
    {
        return false;
    }
    object_type_info(type_index).is_ok_and(|info| {
        matches!(
            structural_kind(info),
            sys::kTVMFFISEqHashKindDAGNode | sys::kTVMFFISEqHashKindFreeVar
        )
    })
}

/// How the map engine runs the default descent of a value: directly ([`DirectDescent`]), or
/// through context policies (`MapWithContextPolicy`).
pub(crate) trait MapDescent<D>: Sized {
    /// No policy: the engine descends itself, and plain values skip the descent.
    const DIRECT: bool;
    /// The default descent of `value`.
    fn descend(
        &self,
        engine: &mut Mapper<'_, D, Self>,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any>;
}

/// The default descent without policy.
pub(crate) struct DirectDescent;

impl<D: MapDispatch> MapDescent<D> for DirectDescent {
    const DIRECT: bool = true;
    #[inline(always)]
    fn descend(
        &self,
        engine: &mut Mapper<'_, D, Self>,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        engine.default_map(value, kind, permit)
    }
}

/// The engine of [`map`].
pub(crate) struct Mapper<'p, D, P> {
    pub(crate) dispatch: D,
    order: WalkOrder,
    /// Objects of identity mapped so far: (the object, kept alive; its image).
    memo: HashMap<usize, (Any, Any)>,
    descent: &'p P,
}

impl<'p, D: MapDispatch, P: MapDescent<D>> Mapper<'p, D, P> {
    pub(crate) fn new(dispatch: D, order: WalkOrder, descent: &'p P) -> Self {
        Mapper {
            dispatch,
            order,
            memo: HashMap::new(),
            descent,
        }
    }

    /// Maps the root, which the traversal owns.
    pub(crate) fn run(&mut self, root: Any) -> Result<Any> {
        self.map_value(&root.view(), DefRegionKind::None, Permit::InPlace)
    }

    #[inline(always)]
    pub(crate) fn map_value(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let type_index = value.as_raw().type_index;
        if type_index >= ti::kTVMFFIStaticObjectBegin {
            return self.map_object_value(value, kind, permit);
        }
        if !P::DIRECT {
            // Policies see the default descent of plain values too.
            return self.map_uncached(value, kind, permit);
        }
        // A plain value (`None` included: a callback may replace it) has no children: one
        // callback, either order.
        // SAFETY: `value`'s owner keeps it alive through the call.
        let visit_value = unsafe { VisitValue::new(*value) };
        let Some(result) = self.dispatch.dispatch_map(&visit_value, kind) else {
            return Ok(owned(value));
        };
        let mapped = or_keep(result, || owned(value))?;
        if self.order == WalkOrder::PreOrder
            && mapped.as_raw().type_index >= ti::kTVMFFIStaticObjectBegin
        {
            // A pre-order replacement of a plain value may be a tree: its children are mapped
            // (never in place: the value it replaces was no object the traversal owned).
            return self
                .default_map(&mapped.view(), kind, Permit::Copy)
                .map_err(|e| with_value_frame(e, &mapped.view()));
        }
        Ok(mapped)
    }

    /// The default descent of `value`, through the policies if any.
    #[inline(always)]
    fn descend(&mut self, value: &AnyView<'_>, kind: DefRegionKind, permit: Permit) -> Result<Any> {
        let descent = self.descent;
        descent.descend(self, value, kind, permit)
    }

    /// The default descent of `value` without policy: its children mapped.
    #[inline]
    pub(crate) fn default_descent(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        self.default_map(value, kind, permit)
    }

    /// [`Mapper::map_value`] of an object.
    #[inline(never)]
    fn map_object_value(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        let identity = has_identity(value);
        if identity {
            // SAFETY: an object index.
            let key = unsafe { value.as_raw().value.v_obj } as usize;
            if let Some((_, image)) = self.memo.get(&key) {
                return Ok(image.clone());
            }
            // Never in place: the memo holds the object too.
            let image = self.map_uncached(value, kind, Permit::Copy)?;
            self.memo.insert(key, (owned(value), image.clone()));
            return Ok(image);
        }
        self.map_uncached(value, kind, permit)
    }

    fn map_uncached(
        &mut self,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        // An error names the node the failing step ran on, as C++ does: the value, or its
        // pre-order replacement whose children failed, or its post-order rebuilt image.
        let framed = |e| with_value_frame(e, value);
        match self.order {
            WalkOrder::PreOrder => {
                // A replacement inherits the permission of the value it replaces, as it was
                // before the mapper could take or drop references.
                let inherited = mode_of(value, permit).permit();
                // SAFETY: `value`'s owner keeps it alive through the call.
                let visit_value = unsafe { VisitValue::new(*value) };
                let Some(replacement) = self.dispatch.dispatch_map(&visit_value, kind) else {
                    return self.descend(value, kind, permit).map_err(framed);
                };
                let replacement = replacement.map_err(framed)?;
                if same(value, &replacement.view())
                    || replacement.as_raw().type_index == ti::kTVMFFIUnchanged
                {
                    // Let go of the mapper's reference before the uniqueness check.
                    drop(replacement);
                    self.descend(value, kind, permit).map_err(framed)
                } else {
                    // The replacement's children are mapped too (not the replacement itself).
                    let descended = self
                        .descend(&replacement.view(), kind, inherited)
                        .map_err(|e| with_value_frame(e, &replacement.view()))?;
                    Ok(if descended.as_raw().type_index == ti::kTVMFFIUnchanged {
                        replacement
                    } else {
                        descended
                    })
                }
            }
            WalkOrder::PostOrder => {
                let mapped = self.descend(value, kind, permit).map_err(framed)?;
                // SAFETY: `mapped` lives through the call.
                let visit_value = unsafe { VisitValue::new(mapped.view()) };
                match self.dispatch.dispatch_map(&visit_value, kind) {
                    Some(result) => or_keep(result, || mapped.clone())
                        .map_err(|e| with_value_frame(e, &mapped.view())),
                    None => Ok(mapped),
                }
            }
        }
    }
}

impl<D: MapDispatch, P: MapDescent<D>> Driver for Mapper<'_, D, P> {
    #[inline]
    fn recurse(&mut self, child: &AnyView<'_>, kind: DefRegionKind, permit: Permit) -> Result<Any> {
        self.map_value(child, kind, permit)
    }

    /// A map keeps one image per object of identity: a foreign hook's remappings are those.
    fn var_remap_get(&mut self, var: &AnyView<'_>) -> Result<Option<Any>> {
        // SAFETY: an object index (checked by the caller).
        let key = unsafe { var.as_raw().value.v_obj } as usize;
        Ok(self.memo.get(&key).map(|(_, image)| image.clone()))
    }

    fn var_remap_set(&mut self, var: &AnyView<'_>, mapped: &AnyView<'_>) -> Result<()> {
        // SAFETY: an object index (checked by the caller).
        let key = unsafe { var.as_raw().value.v_obj } as usize;
        self.memo.insert(key, (owned(var), owned(mapped)));
        Ok(())
    }
}

/// Maps `root` with a mapper (C++ `StructuralMap`): every value reached gets the mapper's
/// replacement, before (`PreOrder`: the replacement's children are then mapped) or after
/// (`PostOrder`: the mapper sees the value with its children mapped) its children. A value no
/// link takes is kept; `None` values reach the mapper too (a catch-all may replace them).
/// Copy-on-write: a value none of whose children changed is returned as the
/// same object, without allocation (see the [module docs](crate::structural) for in-place
/// updates and objects of identity).
///
/// The mapper is `&mut` a `#[dispatch(map)]` type, a callback (`|v: i64|`, `|n: &MyNodeObj|`,
/// `|v: &MapValue|`, each optionally with a trailing `kind: DefRegionKind`, returning an `Any`
/// or a `Result<Any>`), or a tuple of them tried in order. An error carries the path to the
/// value whose mapping failed in its backtrace; updates made in place before it are kept.
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder};
/// use tvm_ffi::{Any, Array};
/// let source = Array::new([Array::new([1i64, 2]).unwrap(), Array::new([3i64]).unwrap()]).unwrap();
/// // Nothing changes: the same object comes back.
/// let same = structural::map(source.clone(), |v: i64| Any::new(v), WalkOrder::PostOrder).unwrap();
/// assert!(same.cast::<Array<Any>>().unwrap().as_object_ref().ptr_eq(source.as_object_ref()));
/// // One leaf changes: its array and the root are copied, the other array is shared.
/// let out = structural::map(
///     source.clone(),
///     |v: i64| Any::new(if v == 3 { 30 } else { v }),
///     WalkOrder::PostOrder,
/// )
/// .unwrap();
/// let out = out.cast::<Array<Array<i64>>>().unwrap();
/// assert_eq!(out.get(1).unwrap().to_vec(), [30]);
/// assert!(out.get(0).unwrap().as_object_ref().ptr_eq(source.get(0).unwrap().as_object_ref()));
/// ```
pub fn map<R: IntoAny, M, H: IntoMapper<M>>(root: R, mapper: H, order: WalkOrder) -> Result<Any> {
    mapper.map_root(Any::new(root), order)
}

pub(crate) fn user_dispatch<U: Mutator + ?Sized>(
    mutator: &mut U,
    value: &AnyView<'_>,
    kind: DefRegionKind,
    permit: Permit,
) -> Result<Any> {
    // `None` too is the mutator's to replace.
    let result = if permit == Permit::InPlace && is_unique(value) {
        // SAFETY: `value`'s owner (a cell the traversal owns) keeps it alive through the call.
        let inplace = unsafe { MutateValue::new(value, InplaceMode::Allow) };
        mutator.maybe_inplace_mutate(inplace, kind)
    } else {
        // SAFETY: `value`'s owner keeps it alive through the call.
        let visit_value = unsafe { VisitValue::new(*value) };
        mutator.mutate(&visit_value, kind)
    };
    or_keep(result, || owned(value)).map_err(|e| with_value_frame(e, value))
}

struct UserDriver<'m, U: ?Sized> {
    mutator: &'m mut U,
}

impl<U: Mutator + ?Sized> Driver for UserDriver<'_, U> {
    #[inline]
    fn recurse(&mut self, child: &AnyView<'_>, kind: DefRegionKind, permit: Permit) -> Result<Any> {
        user_dispatch(self.mutator, child, kind, permit)
    }

    /// A foreign hook's remappings are the mutator's ([`Mutator::var_remap_get`]).
    fn var_remap_get(&mut self, var: &AnyView<'_>) -> Result<Option<Any>> {
        // SAFETY: `var`'s owner (the hook's caller) keeps it alive through the call.
        let var = unsafe { VisitValue::new(*var) };
        self.mutator.var_remap_get(&var)
    }

    fn var_remap_set(&mut self, var: &AnyView<'_>, mapped: &AnyView<'_>) -> Result<()> {
        // SAFETY: as above.
        let var = unsafe { VisitValue::new(*var) };
        self.mutator.var_remap_set(&var, &owned(mapped))
    }
}

/// The default descent of `value` by a mutator: a free variable already mapped gets its
/// image; otherwise the mutator's [`Mutator::on_default_mutate`] (its policies, if any, then
/// [`engine_default`]) runs.
pub(crate) fn user_default<U: Mutator + ?Sized>(
    mutator: &mut U,
    value: &AnyView<'_>,
    kind: DefRegionKind,
    permit: Permit,
) -> Result<Any> {
    let type_index = value.as_raw().type_index;
    let free_var = type_index >= ti::kTVMFFIStaticObjectBegin
        && object_type_info(type_index)
            .is_ok_and(|info| structural_kind(info) == sys::kTVMFFISEqHashKindFreeVar);
    // SAFETY: `value`'s owner keeps it alive through the call.
    let var = unsafe { VisitValue::new(*value) };
    if free_var {
        if let Some(image) = mutator.var_remap_get(&var)? {
            return Ok(image);
        }
    }
    // The mode is taken now, after the mutator may have let go of (or kept) references.
    // SAFETY: as above; the handle does not outlive the call.
    let handle = unsafe { MutateValue::new(value, mode_of(value, permit)) };
    let image = or_keep(mutator.on_default_mutate(handle, kind), || owned(value))?;
    if free_var {
        mutator.var_remap_set(&var, &image)?;
    }
    Ok(image)
}

/// The default descent itself, no policy: the children of `value` mutated through `mutator`.
pub(crate) fn engine_default<U: Mutator + ?Sized>(
    mutator: &mut U,
    value: &AnyView<'_>,
    kind: DefRegionKind,
    permit: Permit,
) -> Result<Any> {
    UserDriver { mutator }.default_map(value, kind, permit)
}

/// `Unchanged` when `mutated` is `before` itself.
#[inline]
pub(crate) fn unchanged_or(before: &AnyView<'_>, mutated: Any) -> UnchangedOr<Any> {
    if mutated.as_raw().type_index == ti::kTVMFFIUnchanged || same(before, &mutated.view()) {
        UnchangedOr::Unchanged
    } else {
        UnchangedOr::Changed(mutated)
    }
}
