//! The values a structural map or mutation hands to its callbacks and takes back: the value met
//! ([`MapValue`]), the marker that keeps it ([`Unchanged`], [`UnchangedOr`]), what a callback's
//! return converts through ([`IntoMapResult`]), the in-place permission the engine grants
//! ([`InplaceMode`], [`MutateValue`]) and the replacements of objects of identity
//! ([`VarRemap`]). The engine that uses them is `mutate.rs`.
use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::visit::VisitValue;
use crate::abi::sys::{self, type_index as ti};
use crate::base::error::{Error, Result};
use crate::base::object::held_only_by;
use crate::base::value::{Any, AnyView, FromAny, IntoAny};

/// A value met by a map or mutator (the same borrowed value a walk sees).
///
/// ```
/// use tvm_ffi::structural::{self, MapValue, WalkOrder};
/// use tvm_ffi::{Any, Array};
/// let root = Array::new([1i64, 2]).unwrap();
/// let out = structural::map(
///     root,
///     |value: &MapValue| match value.cast::<i64>() {
///         Some(v) => Any::new(v * 10),
///         None => value.to_owned(), // keep
///     },
///     WalkOrder::PostOrder,
/// )
/// .unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [10, 20]);
/// ```
pub type MapValue = VisitValue;

/// What a map callback or mutator returns to keep the value it was given: the same value back
/// without taking another reference (the runtime's own marker, type index
/// `kTVMFFIUnchanged`). In a pre-order map the value's children are still mapped. The marker
/// never leaves the traversal: where it is returned, the kept value takes its place.
///
/// ```
/// use tvm_ffi::structural::{self, MapValue, Unchanged, WalkOrder};
/// use tvm_ffi::{Any, Array};
/// let root = Array::new([Any::new(1i64), Any::new("keep")]).unwrap();
/// let out = structural::map(
///     root.clone(),
///     |value: &MapValue| match value.cast::<i64>() {
///         Some(v) => Any::new(v + 1),
///         None => Any::new(Unchanged),
///     },
///     WalkOrder::PreOrder,
/// )
/// .unwrap();
/// let out = out.cast::<Array<Any>>().unwrap();
/// assert_eq!(out[0].cast::<i64>().unwrap(), 2);
/// assert_eq!(out[1].cast::<String>().unwrap(), "keep");
/// // Nothing changed: the same array back.
/// let same = structural::map(root.clone(), |_: &MapValue| Unchanged, WalkOrder::PostOrder).unwrap();
/// assert!(same.cast::<Array<Any>>().unwrap().as_object_ref().ptr_eq(root.as_object_ref()));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Unchanged;

impl IntoAny for Unchanged {
    fn into_any(self) -> Any {
        let raw = sys::TVMFFIAny {
            type_index: ti::kTVMFFIUnchanged,
            ..sys::TVMFFIAny::NONE
        };
        // SAFETY: a plain value (no object, nothing owned): the runtime's unchanged marker.
        unsafe { Any::from_raw(raw) }
    }
}

/// Either [`Unchanged`] or a replacement: what a mapper returns when only some of its values
/// change, typed (`UnchangedOr<i64>` instead of an `Any` that may hold the marker).
///
/// ```
/// use tvm_ffi::structural::{self, UnchangedOr, WalkOrder};
/// use tvm_ffi::Array;
/// let source = Array::new([1i64, -2]).unwrap();
/// let clamp = |v: i64| if v < 0 { UnchangedOr::changed(0) } else { UnchangedOr::unchanged() };
/// let out = structural::map(source.clone(), clamp, WalkOrder::PostOrder).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [1, 0]);
/// // Nothing changed: the same array back.
/// let positive = Array::new([1i64]).unwrap();
/// let same = structural::map(positive.clone(), clamp, WalkOrder::PostOrder).unwrap();
/// assert!(same.cast::<Array<i64>>().unwrap().as_object_ref().ptr_eq(positive.as_object_ref()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnchangedOr<T> {
    /// Keep the value (as [`Unchanged`]).
    Unchanged,
    /// Replace the value.
    Changed(T),
}

impl<T> UnchangedOr<T> {
    /// [`UnchangedOr::Unchanged`]. An example is on [`UnchangedOr`].
    #[inline]
    pub fn unchanged() -> Self {
        UnchangedOr::Unchanged
    }

    /// [`UnchangedOr::Changed`] of `value`. An example is on [`UnchangedOr`].
    #[inline]
    pub fn changed(value: T) -> Self {
        UnchangedOr::Changed(value)
    }

    /// Whether this keeps the value.
    ///
    /// ```
    /// use tvm_ffi::structural::UnchangedOr;
    /// assert!(UnchangedOr::<i64>::unchanged().is_unchanged());
    /// assert!(!UnchangedOr::changed(1i64).is_unchanged());
    /// ```
    #[inline]
    pub fn is_unchanged(&self) -> bool {
        matches!(self, UnchangedOr::Unchanged)
    }
}

/// The replacement, or the [`Unchanged`] marker.
impl<T: IntoAny> IntoAny for UnchangedOr<T> {
    #[inline]
    fn into_any(self) -> Any {
        match self {
            UnchangedOr::Unchanged => Unchanged.into_any(),
            UnchangedOr::Changed(value) => value.into_any(),
        }
    }
}

/// How a mapped value converts from what a mapper returns: an [`Any`], [`Unchanged`] or any
/// value convertible into an `Any` (`|v: i64| v + 1`), or a `Result` of one.
///
/// ```
/// use tvm_ffi::structural::{self, WalkOrder};
/// use tvm_ffi::{Any, Array, Error, Result};
/// let halve = |v: i64| -> Result<Any> {
///     if v % 2 != 0 {
///         return Err(Error::value_error(format!("{v} is odd")));
///     }
///     Ok(Any::new(v / 2))
/// };
/// let err = structural::map(Array::new([2i64, 3]).unwrap(), halve, WalkOrder::PostOrder)
///     .unwrap_err();
/// assert_eq!(err.message(), "3 is odd");
/// assert!(err.backtrace().contains("sequence item [1]"));
/// ```
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait IntoMapResult {
    /// The value, or the mapper's error.
    fn into_map_result(self) -> Result<Any>;
}

/// Any value: an [`Any`], [`Unchanged`], or anything convertible (`i64`, `Array<T>`, ...).
impl<T: IntoAny> IntoMapResult for T {
    #[inline(always)]
    fn into_map_result(self) -> Result<Any> {
        Ok(self.into_any())
    }
}

impl<T: IntoAny> IntoMapResult for Result<T> {
    #[inline(always)]
    fn into_map_result(self) -> Result<Any> {
        self.map(IntoAny::into_any)
    }
}

/// Whether a mutation may update a value in place: what [`MutateValue::inplace_mode`] reports the
/// engine granted, and what a mutator asks for when it enters a value
/// ([`Mutator::maybe_inplace_mutate_child_with_mode`](crate::structural::Mutator::maybe_inplace_mutate_child_with_mode),
/// [`Mutator::default_maybe_inplace_mutate_with_mode`](crate::structural::Mutator::default_maybe_inplace_mutate_with_mode),
/// the same methods of [`MutateContext`](crate::structural::MutateContext)).
///
/// `Allow` is a permission, not a promise: a container is updated in place only when, at the
/// moment it is rewritten, nothing but the traversal holds it (its reference count is one); a
/// shared or retained value is copied whatever the mode. `Disallow` (the default) copies even a
/// value only the traversal holds.
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, InplaceMode, InplaceValue, MapValue, Mutator};
/// use tvm_ffi::{Any, Array, Result};
/// struct Increment(InplaceMode);
/// impl Mutator for Increment {
///     fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
///         match value.cast::<i64>() {
///             Some(v) => Ok(Any::new(v + 1)),
///             None => self.default_mutate(value, kind),
///         }
///     }
///     fn maybe_inplace_mutate(&mut self, value: InplaceValue<'_>, kind: DefRegionKind) -> Result<Any> {
///         let mode = self.0;
///         self.default_maybe_inplace_mutate_with_mode(value, kind, mode)
///     }
/// }
/// assert_eq!(InplaceMode::default(), InplaceMode::Disallow);
/// for mode in [InplaceMode::Disallow, InplaceMode::Allow] {
///     let root = Array::new([1i64]).unwrap();
///     let before = root.as_object_ref().as_raw();
///     let out = structural::mutate(root, Increment(mode)).unwrap();
///     let out = out.cast::<Array<i64>>().unwrap();
///     assert_eq!(out.to_vec(), [2]);
///     assert_eq!(out.as_object_ref().as_raw() == before, mode == InplaceMode::Allow);
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InplaceMode {
    /// Copy-on-write only, even for a value that only the traversal holds.
    #[default]
    Disallow,
    /// Update in place what nothing but the traversal holds when it is rewritten.
    Allow,
}

impl InplaceMode {
    /// The permission both grant.
    #[inline]
    fn and(self, other: InplaceMode) -> InplaceMode {
        if self == InplaceMode::Allow && other == InplaceMode::Allow {
            InplaceMode::Allow
        } else {
            InplaceMode::Disallow
        }
    }

    #[inline]
    pub(crate) fn permit(self) -> Permit {
        match self {
            InplaceMode::Disallow => Permit::Copy,
            InplaceMode::Allow => Permit::InPlace,
        }
    }
}

/// The mode a value entered with `permit` has now: `Allow` only when it may be updated in place
/// and nothing but the traversal holds it.
#[inline]
pub(crate) fn mode_of(value: &AnyView<'_>, permit: Permit) -> InplaceMode {
    if permit == Permit::InPlace && is_unique(value) {
        InplaceMode::Allow
    } else {
        InplaceMode::Disallow
    }
}

/// A value handed to a mutator together with the in-place permission the engine granted it
/// ([`MutateValue::inplace_mode`]): what a mutate callback or a `#[dispatch(mutate)]` handler
/// taking `MutateValue<'_, T>` receives (`T` selects the values it takes, as a typed argument
/// would; `Any`, the default, takes every value), and what
/// [`Mutator::maybe_inplace_mutate`](crate::structural::Mutator::maybe_inplace_mutate) receives (as
/// [`InplaceValue`], always `Allow`).
///
/// Unlike a typed argument it holds no reference of its own, so it does not keep the value from
/// being updated in place. Pass it on, by value, to the default descent
/// ([`Mutator::default_maybe_inplace_mutate`](crate::structural::Mutator::default_maybe_inplace_mutate),
/// [`MutateContext::default_maybe_inplace_mutate`](crate::structural::MutateContext::default_maybe_inplace_mutate)
/// and their `_with_mode` / `_result` forms), possibly of another mutator: that descent checks
/// again that nothing else holds the value (a reference kept meanwhile forces a copy), and since it
/// consumes the handle, no borrow of the value (`as_node`) can outlive it.
///
/// ```
/// use tvm_ffi::structural::{self, InplaceMode, MutateContext, MutateValue};
/// use tvm_ffi::{Any, Array, Result};
/// let root = Array::new([1i64]).unwrap();
/// let before = root.as_object_ref().as_raw();
/// let out = structural::mutate(
///     root,
///     (
///         |v: i64, _: &mut MutateContext<'_>| v + 1,
///         |value: MutateValue<'_>, cx: &mut MutateContext<'_>| -> Result<Any> {
///             assert_eq!(value.inplace_mode(), InplaceMode::Allow); // moved in, held once
///             cx.default_maybe_inplace_mutate(value)
///         },
///     ),
/// )
/// .unwrap();
/// let out = out.cast::<Array<i64>>().unwrap();
/// assert_eq!((out.to_vec(), out.as_object_ref().as_raw()), (vec![2], before));
/// ```
///
/// A borrow of the node cannot outlive the handle's consumption:
///
/// ```compile_fail
/// use tvm_ffi::builtin::ArrayObj;
/// use tvm_ffi::structural::{MutateContext, MutateValue};
/// fn descend(value: MutateValue<'_>, cx: &mut MutateContext<'_>) {
///     let node = value.as_node::<ArrayObj>().unwrap();
///     cx.default_maybe_inplace_mutate(value).unwrap();
///     println!("{}", node.seq.size);
/// }
/// ```
pub struct MutateValue<'a, T = Any> {
    value: MapValue,
    mode: InplaceMode,
    // The engine's cell holding the value outlives `'a`; no reference is held.
    _scope: PhantomData<&'a MapValue>,
    _type: PhantomData<fn() -> T>,
    // Neither sent nor shared with another thread: the permission is the running traversal's.
    _local: PhantomData<*const ()>,
}

/// A value that a [`Mutator`](crate::structural::Mutator) may update in place: the [`MutateValue`]
/// that [`Mutator::maybe_inplace_mutate`](crate::structural::Mutator::maybe_inplace_mutate)
/// receives (its mode is `Allow`: the traversal held the only reference when it was made). Pass it
/// on to
/// [`Mutator::default_maybe_inplace_mutate`](crate::structural::Mutator::default_maybe_inplace_mutate).
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, InplaceValue, MapValue, Mutator};
/// use tvm_ffi::{Any, Array, Result};
/// struct Increment;
/// impl Mutator for Increment {
///     fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
///         match value.cast::<i64>() {
///             Some(v) => Ok(Any::new(v + 1)),
///             None => self.default_mutate(value, kind),
///         }
///     }
///     fn maybe_inplace_mutate(&mut self, value: InplaceValue<'_>, kind: DefRegionKind) -> Result<Any> {
///         self.default_maybe_inplace_mutate(value, kind)
///     }
/// }
/// let root = Array::new([1i64]).unwrap();
/// let before = root.as_object_ref().as_raw();
/// let out = structural::mutate(root, &mut Increment).unwrap(); // moved in: updated in place
/// let out = out.cast::<Array<i64>>().unwrap();
/// assert_eq!((out.to_vec(), out.as_object_ref().as_raw()), (vec![2], before));
/// ```
pub type InplaceValue<'a> = MutateValue<'a>;

impl<'a> MutateValue<'a> {
    /// `value` without in-place permission (`Disallow`): a borrowed value is never updated in
    /// place.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, InplaceMode, MapValue, MutateValue, WalkOrder, WalkResult};
    /// structural::walk(&1i64, |value: &MapValue| {
    ///     assert_eq!(MutateValue::borrowed(value).inplace_mode(), InplaceMode::Disallow);
    ///     WalkResult::Advance
    /// }, WalkOrder::PreOrder).unwrap();
    /// ```
    #[inline]
    pub fn borrowed(value: &'a MapValue) -> Self {
        // SAFETY: `value` is alive for `'a`, which the result cannot outlive.
        unsafe { MutateValue::new(value.view(), InplaceMode::Disallow) }
    }
}

impl<'a, T> MutateValue<'a, T> {
    /// # Safety
    /// What `view` points to must stay alive and unchanged (but by the default descent this
    /// handle is given to) for `'a`; `Allow` only where the traversal owns the value's holder.
    #[inline(always)]
    pub(crate) unsafe fn new(view: &AnyView<'_>, mode: InplaceMode) -> Self {
        MutateValue {
            // SAFETY: the caller's contract.
            value: unsafe { MapValue::new(*view) },
            mode,
            _scope: PhantomData,
            _type: PhantomData,
            _local: PhantomData,
        }
    }

    /// The permission the engine granted: `Allow` when the value may be updated in place (the
    /// traversal held the only reference to it when it reached the mutator), else `Disallow`.
    /// An example is on [`MutateValue`].
    #[inline]
    pub fn inplace_mode(&self) -> InplaceMode {
        self.mode
    }

    /// The value, as a plain [`MapValue`] (borrowed from the handle).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue};
    /// let out = structural::mutate(1i64, |value: MutateValue<'_, i64>, _: &mut MutateContext<'_>| {
    ///     value.as_value().cast::<i64>().unwrap() + 1
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 2);
    /// ```
    #[inline]
    pub fn as_value(&self) -> &MapValue {
        &self.value
    }

    /// An owned reference to the value: an alias, so the value is then copied, not updated in
    /// place, while the reference lives.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue};
    /// use tvm_ffi::{Any, Array, Result};
    /// let root = Array::new([1i64]).unwrap();
    /// let before = root.as_object_ref().as_raw();
    /// let kept = std::cell::RefCell::new(None); // callbacks are `Fn`
    /// let out = structural::mutate(root, (
    ///     |v: i64, _: &mut MutateContext<'_>| v + 1,
    ///     |value: MutateValue<'_>, cx: &mut MutateContext<'_>| -> Result<Any> {
    ///         *kept.borrow_mut() = Some(value.to_owned()); // an alias: the root is copied
    ///         cx.default_maybe_inplace_mutate(value)
    ///     },
    /// ))
    /// .unwrap();
    /// assert_ne!(out.cast::<Array<i64>>().unwrap().as_object_ref().as_raw(), before);
    /// let kept = kept.into_inner().unwrap();
    /// assert_eq!(kept.cast::<Array<i64>>().unwrap().to_vec(), [1]);
    /// ```
    #[inline]
    pub fn to_owned(&self) -> Any {
        self.value.to_owned()
    }

    /// The same handle taking `U`s, when the value is exactly a `U` (see [`MapValue::cast`]);
    /// else the handle back. No reference is kept.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue};
    /// use tvm_ffi::Array;
    /// let out = structural::mutate(1i64, |value: MutateValue<'_>, _: &mut MutateContext<'_>| {
    ///     let value = value.try_cast::<Array<i64>>().unwrap_err();
    ///     let int = value.try_cast::<i64>().ok().unwrap();
    ///     int.cast::<i64>().unwrap() * 3
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 3);
    /// ```
    pub fn try_cast<U: for<'x> FromAny<'x>>(self) -> std::result::Result<MutateValue<'a, U>, Self> {
        if self.value.cast::<U>().is_some() {
            Ok(self.retype())
        } else {
            Err(self)
        }
    }

    /// The same handle taking every value (`MutateValue<'_, Any>`).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue};
    /// let out = structural::mutate(1i64, |value: MutateValue<'_, i64>, cx: &mut MutateContext<'_>| {
    ///     cx.default_maybe_inplace_mutate(value.into_untyped())
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 1);
    /// ```
    #[inline]
    pub fn into_untyped(self) -> MutateValue<'a> {
        self.retype()
    }

    #[inline(always)]
    fn retype<U>(self) -> MutateValue<'a, U> {
        MutateValue {
            value: self.value,
            mode: self.mode,
            _scope: PhantomData,
            _type: PhantomData,
            _local: PhantomData,
        }
    }

    /// The value, borrowed for as long as the engine keeps it (`'a`), not from the handle.
    #[inline(always)]
    pub(crate) fn scoped_view(&self) -> AnyView<'a> {
        // SAFETY: the engine keeps the value alive for `'a` (see `new`).
        unsafe { AnyView::from_raw(*self.value.view().as_raw()) }
    }

    /// The permission of a default descent asked for with `requested`: never more than granted.
    #[inline]
    pub(crate) fn permit(&self, requested: InplaceMode) -> Permit {
        self.mode.and(requested).permit()
    }
}

impl<T> std::ops::Deref for MutateValue<'_, T> {
    type Target = MapValue;
    #[inline]
    fn deref(&self) -> &MapValue {
        &self.value
    }
}

impl<T> std::fmt::Debug for MutateValue<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MutateValue")
            .field("value", &self.value)
            .field("inplace_mode", &self.mode)
            .finish()
    }
}

/// The replacements a [`Mutator`](crate::structural::Mutator) made for objects of identity (free
/// variables), by object: what
/// [`Mutator::var_remap_get`](crate::structural::Mutator::var_remap_get) and
/// [`Mutator::var_remap_set`](crate::structural::Mutator::var_remap_set) can delegate to. It holds
/// the objects it maps, so that no address is reused while it lives.
///
/// ```
/// use tvm_ffi::structural::{self, DefRegionKind, MapValue, Mutator, VarRemap};
/// use tvm_ffi::{Any, Array, Result};
/// /// Numbers the distinct inner arrays: one number per object, however often it occurs.
/// #[derive(Default)]
/// struct Number { remap: VarRemap, calls: i64 }
/// impl Mutator for Number {
///     fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
///         if value.cast::<Array<i64>>().is_none() {
///             return self.default_mutate(value, kind);
///         }
///         if let Some(image) = self.remap.get(value)? {
///             return Ok(image);
///         }
///         self.calls += 1;
///         let image = Any::new(self.calls);
///         self.remap.set(value, &image)?;
///         Ok(image)
///     }
/// }
/// let inner = Array::new([7i64]).unwrap();
/// let root = Array::new([inner.clone(), inner, Array::new([8i64]).unwrap()]).unwrap();
/// let mut number = Number::default();
/// let out = structural::mutate(root, &mut number).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [1, 1, 2]);
/// assert_eq!(number.calls, 2);
/// ```
#[derive(Default)]
pub struct VarRemap {
    entries: HashMap<usize, (Any, Any)>,
}

impl VarRemap {
    /// The replacement stored for the object `var`; a `TypeError` when `var` is no object.
    pub fn get(&self, var: &MapValue) -> Result<Option<Any>> {
        let key = identity_key(var)?;
        Ok(self.entries.get(&key).map(|(_, mapped)| mapped.clone()))
    }

    /// Stores the replacement of the object `var`; a `TypeError` when `var` is no object.
    pub fn set(&mut self, var: &MapValue, mapped: &Any) -> Result<()> {
        let key = identity_key(var)?;
        self.entries.insert(key, (var.to_owned(), mapped.clone()));
        Ok(())
    }

    /// Forgets every replacement.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

fn identity_key(var: &MapValue) -> Result<usize> {
    if var.type_index() < ti::kTVMFFIStaticObjectBegin {
        return Err(Error::type_error(format!(
            "a variable remap is keyed by objects, not `{}`",
            var.type_key()
        )));
    }
    // SAFETY: an object index: reading the pointer member of the union is valid.
    Ok(unsafe { var.view().as_raw().value.v_obj } as usize)
}

/// Whether a value may be updated in place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permit {
    /// Never: another holder may see it.
    Copy,
    /// When nothing but the traversal holds it (checked at the container).
    InPlace,
}

/// Whether `value` is an object that nothing but its one holder references, strongly or
/// weakly (a weak reference upgraded by a callback would be a second owner of an object the
/// traversal keeps rewriting).
#[inline]
pub(crate) fn is_unique(value: &AnyView<'_>) -> bool {
    let raw = value.as_raw();
    if raw.type_index < ti::kTVMFFIStaticObjectBegin {
        return false;
    }
    // SAFETY: an object index: `v_obj` is a live object that `value`'s owner keeps alive.
    unsafe { held_only_by(NonNull::new_unchecked(raw.value.v_obj), 1) }
}
