//! Callback mutators: a [`Mutator`] made of closures (or functions) that each take a value and
//! a [`MutateContext`], tried in order, with optional user state shared between them. Reached
//! through [`crate::structural`].
//!
//! A matched callback returns the value's replacement and owns the recursion below it
//! ([`MutateContext::default_mutate`], [`MutateContext::mutate`],
//! [`MutateContext::maybe_inplace_mutate`]); a value no callback takes has its default children
//! mutated (in place when only the traversal holds it). Callbacks are `Fn`: the state they
//! share lives in the [`MutateCallbacks`] and is reached through the context.
use std::marker::PhantomData;

use super::link::context_links;
use super::link::mutate_shapes::Handle;
use super::mutate::{engine_default, owned, unchanged_or, user_default, user_dispatch, Mutator};
use super::mutate_value::{
    mode_of, InplaceMode, InplaceValue, IntoMapResult, MapValue, MutateValue, Permit, UnchangedOr,
};
use super::visit::DefRegionKind;
use crate::base::error::Result;
use crate::base::value::{Any, AnyView, FromAny, IntoAny};
use crate::call::function::IntoArg;

/// What a running mutator offers a [`MutateContext`]: its state and its recursion. Results are
/// never the `Unchanged` marker (a kept value comes back as itself).
pub(crate) trait MutateDriver<S> {
    fn state(&self) -> &S;
    fn state_mut(&mut self) -> &mut S;
    /// `value` mutated through the callbacks, borrowed (never in place).
    fn mutate_borrowed(&mut self, value: &AnyView<'_>, kind: DefRegionKind) -> Result<Any>;
    /// `value` mutated through the callbacks, owned, with permission `mode`.
    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind, mode: InplaceMode) -> Result<Any>;
    /// The default descent of `value` (whose mode is what the caller may do): through the
    /// policies left, then the children mutated through the callbacks.
    fn default_mutate(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any>;
}

/// The region a request for `requested` gives inside `current`: a pattern is not left.
#[inline]
fn nested_region(current: DefRegionKind, requested: DefRegionKind) -> DefRegionKind {
    if current == DefRegionKind::Pattern {
        DefRegionKind::Pattern
    } else {
        requested
    }
}

/// The state and the recursion a mutate callback (or a [`MutContextPolicy`]) reaches: the user
/// state of its [`MutateCallbacks`] (`()` for bare callbacks, the default), the region its value
/// was reached in, the in-place permission the value has, and the mutation of children, which
/// runs the callbacks again.
///
/// ```
/// use tvm_ffi::structural::{self, MapValue, MutateContext};
/// use tvm_ffi::{Any, Array, Result};
/// // Negate the integers of arrays, counting the arrays on the way.
/// let mut arrays = 0;
/// let mut mutator = structural::MutateCallbacks::new(
///     0usize,
///     (
///         |v: i64, _: &mut MutateContext<'_, usize>| -v,
///         |value: &MapValue, cx: &mut MutateContext<'_, usize>| -> Result<Any> {
///             *cx.state_mut() += 1;
///             cx.default_mutate(value)
///         },
///     ),
/// );
/// let out = structural::mutate(Array::new([1i64, 2]).unwrap(), &mut mutator).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [-1, -2]);
/// arrays += mutator.into_state();
/// assert_eq!(arrays, 1);
/// ```
pub struct MutateContext<'a, S = ()> {
    driver: &'a mut (dyn MutateDriver<S> + 'a),
    def_region_kind: DefRegionKind,
    inplace_mode: InplaceMode,
}

impl<S> MutateContext<'_, S> {
    /// The user state shared by every callback of this mutator. An example is on
    /// [`MutateContext`].
    #[inline]
    pub fn state(&self) -> &S {
        self.driver.state()
    }

    /// The user state, mutably. It cannot stay borrowed across a mutation of a child. An
    /// example is on [`MutateContext`].
    #[inline]
    pub fn state_mut(&mut self) -> &mut S {
        self.driver.state_mut()
    }

    /// The definition region the current value was reached in.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, MutateContext};
    /// let out = structural::mutate(1i64, |v: i64, cx: &mut MutateContext<'_>| {
    ///     assert_eq!(cx.def_region_kind(), DefRegionKind::None);
    ///     v + 1
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 2);
    /// ```
    #[inline]
    pub fn def_region_kind(&self) -> DefRegionKind {
        self.def_region_kind
    }

    /// The in-place permission of the current value (as its [`MutateValue`] reports it):
    /// `Allow` when the traversal held the only reference to it when it was reached. It is
    /// information, not authority: updating in place takes consuming the value's handle in a
    /// default descent ([`MutateContext::default_maybe_inplace_mutate`]).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, InplaceMode, MutateContext};
    /// use tvm_ffi::Array;
    /// let modes = std::cell::RefCell::new(Vec::new()); // callbacks are `Fn`
    /// let source = Array::new([1i64]).unwrap();
    /// for root in [source.clone(), Array::new([1i64]).unwrap()] {
    ///     structural::mutate(root, |a: Array<i64>, cx: &mut MutateContext<'_>| {
    ///         modes.borrow_mut().push(cx.inplace_mode());
    ///         a
    ///     })
    ///     .unwrap();
    /// }
    /// assert_eq!(modes.into_inner(), [InplaceMode::Disallow, InplaceMode::Allow]);
    /// ```
    #[inline]
    pub fn inplace_mode(&self) -> InplaceMode {
        self.inplace_mode
    }

    /// Runs `body` with a context whose region is `kind` (a pattern region is not left: inside
    /// one, `kind` is `Pattern` too); this context keeps its own region, whatever `body`
    /// returns.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, MutateContext};
    /// let kinds = std::cell::RefCell::new(Vec::new()); // callbacks are `Fn`
    /// let out = structural::mutate(true, (
    ///     |_: bool, cx: &mut MutateContext<'_>| {
    ///         cx.with_def_region_kind(DefRegionKind::Simple, |cx| cx.mutate(1i64))
    ///     },
    ///     |v: i64, cx: &mut MutateContext<'_>| {
    ///         kinds.borrow_mut().push(cx.def_region_kind());
    ///         v + 1
    ///     },
    /// ))
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 2);
    /// assert_eq!(kinds.into_inner(), [DefRegionKind::Simple]);
    /// ```
    pub fn with_def_region_kind<T>(
        &mut self,
        kind: DefRegionKind,
        body: impl FnOnce(&mut MutateContext<'_, S>) -> Result<T>,
    ) -> Result<T> {
        body(&mut MutateContext {
            driver: &mut *self.driver,
            def_region_kind: nested_region(self.def_region_kind, kind),
            inplace_mode: self.inplace_mode,
        })
    }

    /// The default children of `value` mutated through the callbacks (copy-on-write: `value`
    /// itself when none changed, a new copy otherwise, never an update in place). An example
    /// is on [`MutateContext`].
    pub fn default_mutate(&mut self, value: &MapValue) -> Result<Any> {
        let kind = self.def_region_kind;
        self.driver
            .default_mutate(MutateValue::borrowed(value), kind)
    }

    /// As [`MutateContext::default_mutate`], [`UnchangedOr::Unchanged`] when no child changed.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MapValue, MutateContext, UnchangedOr};
    /// use tvm_ffi::{Any, Array, Result};
    /// let keep_arrays = |value: &MapValue, cx: &mut MutateContext<'_>| -> Result<UnchangedOr<Any>> {
    ///     let result = cx.default_mutate_result(value)?;
    ///     assert!(result.is_unchanged());
    ///     Ok(result)
    /// };
    /// let source = Array::new([1i64]).unwrap();
    /// let out = structural::mutate(source.clone(), keep_arrays).unwrap();
    /// assert!(out.cast::<Array<i64>>().unwrap().as_object_ref().ptr_eq(source.as_object_ref()));
    /// ```
    pub fn default_mutate_result(&mut self, value: &MapValue) -> Result<UnchangedOr<Any>> {
        let mutated = self.default_mutate(value)?;
        Ok(unchanged_or(value.view(), mutated))
    }

    /// The default children of `value`, a value of the caller's choosing, mutated through the
    /// callbacks (copy-on-write; the callbacks do not see `value` itself, only its children).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext};
    /// use tvm_ffi::Array;
    /// let out = structural::mutate(true, (
    ///     |_: bool, cx: &mut MutateContext<'_>| cx.default_mutate_value(Array::new([1i64])?),
    ///     |v: i64, _: &mut MutateContext<'_>| v + 1,
    /// ))
    /// .unwrap();
    /// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2]);
    /// ```
    pub fn default_mutate_value<A: IntoArg>(&mut self, value: A) -> Result<Any> {
        let holder = value.into_holder()?;
        let view = A::view(&holder);
        // SAFETY: `holder` keeps the value alive through the call; no in-place permission.
        let handle = unsafe { MutateValue::new(&view, InplaceMode::Disallow) };
        let kind = self.def_region_kind;
        self.driver.default_mutate(handle, kind)
    }

    /// `child` mutated through the callbacks, borrowed: never updated in place.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext};
    /// use tvm_ffi::Array;
    /// let child = Array::new([1i64]).unwrap();
    /// let out = structural::mutate(
    ///     true,
    ///     (
    ///         |_: bool, cx: &mut MutateContext<'_>| cx.mutate(&child),
    ///         |v: i64, _: &mut MutateContext<'_>| v + 1,
    ///     ),
    /// )
    /// .unwrap();
    /// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2]);
    /// assert_eq!(child.to_vec(), [1]);
    /// ```
    pub fn mutate<A: IntoArg>(&mut self, child: A) -> Result<Any> {
        let kind = self.def_region_kind;
        self.mutate_in(child, kind)
    }

    /// As [`MutateContext::mutate`], reached in region `kind` (inside a pattern region, still
    /// `Pattern`).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, MutateContext};
    /// let kinds = std::cell::RefCell::new(Vec::new()); // callbacks are `Fn`
    /// structural::mutate(true, (
    ///     |_: bool, cx: &mut MutateContext<'_>| cx.mutate_with(1i64, DefRegionKind::Pattern),
    ///     |v: i64, cx: &mut MutateContext<'_>| {
    ///         kinds.borrow_mut().push(cx.def_region_kind());
    ///         v
    ///     },
    /// ))
    /// .unwrap();
    /// assert_eq!(kinds.into_inner(), [DefRegionKind::Pattern]);
    /// ```
    pub fn mutate_with<A: IntoArg>(
        &mut self,
        child: A,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let kind = nested_region(self.def_region_kind, def_region_kind);
        self.mutate_in(child, kind)
    }

    fn mutate_in<A: IntoArg>(&mut self, child: A, kind: DefRegionKind) -> Result<Any> {
        let holder = child.into_holder()?;
        let view = A::view(&holder);
        let owned = view.to_owned()?;
        self.driver.mutate_borrowed(&owned.view(), kind)
    }

    /// `child` mutated through the callbacks, owned: updated in place when nothing else holds
    /// it.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext};
    /// use tvm_ffi::Array;
    /// let out = structural::mutate(
    ///     true,
    ///     (
    ///         |_: bool, cx: &mut MutateContext<'_>| cx.maybe_inplace_mutate(Array::new([1i64]).unwrap()),
    ///         |v: i64, _: &mut MutateContext<'_>| v + 1,
    ///     ),
    /// )
    /// .unwrap();
    /// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2]);
    /// ```
    pub fn maybe_inplace_mutate<T: IntoAny>(&mut self, child: T) -> Result<Any> {
        let kind = self.def_region_kind;
        self.driver
            .mutate_owned(Any::new(child), kind, InplaceMode::Allow)
    }

    /// `child` mutated through the callbacks, owned, reached in region `kind` (inside a
    /// pattern region, still `Pattern`) with in-place permission `mode` (`Disallow` copies it
    /// even when nothing else holds it).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, InplaceMode, MutateContext};
    /// use tvm_ffi::Array;
    /// for mode in [InplaceMode::Disallow, InplaceMode::Allow] {
    ///     let entered = std::cell::Cell::new(0); // callbacks are `Fn`
    ///     let out = structural::mutate(true, (
    ///         |_: bool, cx: &mut MutateContext<'_>| {
    ///             let child = Array::new([1i64])?;
    ///             entered.set(child.as_object_ref().as_raw().as_ptr() as usize);
    ///             cx.maybe_inplace_mutate_with_mode(child, DefRegionKind::None, mode)
    ///         },
    ///         |v: i64, _: &mut MutateContext<'_>| v + 1,
    ///     ))
    ///     .unwrap();
    ///     let out = out.cast::<Array<i64>>().unwrap();
    ///     assert_eq!(out.to_vec(), [2]);
    ///     let reused = out.as_object_ref().as_raw().as_ptr() as usize == entered.get();
    ///     assert_eq!(reused, mode == InplaceMode::Allow);
    /// }
    /// ```
    pub fn maybe_inplace_mutate_with_mode<T: IntoAny>(
        &mut self,
        child: T,
        def_region_kind: DefRegionKind,
        mode: InplaceMode,
    ) -> Result<Any> {
        let kind = nested_region(self.def_region_kind, def_region_kind);
        self.driver.mutate_owned(Any::new(child), kind, mode)
    }

    /// The default children of the value of `value` mutated through the callbacks, updated in
    /// place when its handle allows it and still nothing else holds it (a reference kept
    /// meanwhile forces a copy). The handle is consumed, so no borrow of the value outlives the
    /// call; it may come from another mutator's callback. An example is on [`MutateValue`].
    pub fn default_maybe_inplace_mutate<T>(&mut self, value: MutateValue<'_, T>) -> Result<Any> {
        self.default_mutate_with_mode(value, InplaceMode::Allow)
    }

    /// As [`MutateContext::default_maybe_inplace_mutate`], [`UnchangedOr::Unchanged`] when the
    /// value comes back as it was (the same object, possibly updated in place).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue, UnchangedOr};
    /// use tvm_ffi::{Any, Array, Result};
    /// let root = Array::new([1i64]).unwrap();
    /// let before = root.as_object_ref().as_raw();
    /// let out = structural::mutate(root, |value: MutateValue<'_>, cx: &mut MutateContext<'_>|
    ///     -> Result<UnchangedOr<Any>> {
    ///     if value.cast::<i64>().is_some() {
    ///         return Ok(UnchangedOr::unchanged());
    ///     }
    ///     let result = cx.default_maybe_inplace_mutate_result(value)?;
    ///     assert!(result.is_unchanged());
    ///     Ok(result)
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<Array<i64>>().unwrap().as_object_ref().as_raw(), before);
    /// ```
    pub fn default_maybe_inplace_mutate_result<T>(
        &mut self,
        value: MutateValue<'_, T>,
    ) -> Result<UnchangedOr<Any>> {
        self.default_mutate_with_mode_result(value, InplaceMode::Allow)
    }

    /// As [`MutateContext::default_maybe_inplace_mutate`] with in-place permission `mode`,
    /// which can withdraw the handle's permission (`Disallow`: copy-on-write) but never grant
    /// more.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, InplaceMode, MutateContext, MutateValue};
    /// use tvm_ffi::{Any, Array, Result};
    /// let root = Array::new([1i64]).unwrap();
    /// let before = root.as_object_ref().as_raw();
    /// let out = structural::mutate(root, (
    ///     |v: i64, _: &mut MutateContext<'_>| v + 1,
    ///     |value: MutateValue<'_>, cx: &mut MutateContext<'_>| -> Result<Any> {
    ///         cx.default_mutate_with_mode(value, InplaceMode::Disallow)
    ///     },
    /// ))
    /// .unwrap();
    /// let out = out.cast::<Array<i64>>().unwrap();
    /// assert_eq!(out.to_vec(), [2]);
    /// assert_ne!(out.as_object_ref().as_raw(), before); // copied, though only we held it
    /// ```
    pub fn default_mutate_with_mode<T>(
        &mut self,
        value: MutateValue<'_, T>,
        mode: InplaceMode,
    ) -> Result<Any> {
        let kind = self.def_region_kind;
        let handle = narrowed(value, mode);
        self.driver.default_mutate(handle, kind)
    }

    /// As [`MutateContext::default_mutate_with_mode`], [`UnchangedOr::Unchanged`] when the value
    /// comes back as it was (an example of the `_result` form is on
    /// [`MutateContext::default_maybe_inplace_mutate_result`]).
    pub fn default_mutate_with_mode_result<T>(
        &mut self,
        value: MutateValue<'_, T>,
        mode: InplaceMode,
    ) -> Result<UnchangedOr<Any>> {
        let view = value.scoped_view();
        let mutated = self.default_mutate_with_mode(value, mode)?;
        Ok(unchanged_or(&view, mutated))
    }
}

/// `value` untyped, with the permission it has when `requested` is asked for, checked now (a
/// reference kept since it was granted withdraws it).
#[inline]
fn narrowed<'a, T>(value: MutateValue<'a, T>, requested: InplaceMode) -> MutateValue<'a> {
    let permit = value.permit(requested);
    let view = value.scoped_view();
    // SAFETY: the same value, alive for `'a` as the handle's was; the permission only narrows.
    unsafe { MutateValue::new(&view, mode_of(&view, permit)) }
}

/// A policy around the default descent of a mutation or map: what
/// [`MutateCallbacks::with_policy`], `#[dispatch(mutate, policy = ..)]` and
/// [`MapWithContextPolicy`](crate::structural::MapWithContextPolicy) run each time a value's
/// default children are to be mutated (a value no callback takes, or a callback's
/// `default_*` call), with the mutator's state `S`.
///
/// A policy sees the value's [`MutateValue`] (and its in-place permission) and a
/// [`MutateContext`] whose `default_*` methods continue the descent: the next policy, then the
/// children mutated through the callbacks. It may do work around it (and restore its state
/// afterwards, error or not), retarget it (`ctx.default_mutate_value(other)`), scope a region
/// ([`MutateContext::with_def_region_kind`]), or stop it (return the value
/// [`UnchangedOr::Unchanged`], or an error). Policies compose as a pair `(outer, inner)`.
///
/// ```
/// use tvm_ffi::structural::{self, DefaultMutContextPolicy, MutateCallbacks, MutateContext};
/// use tvm_ffi::structural::{MutContextPolicy, MutateValue, UnchangedOr};
/// use tvm_ffi::builtin::ArrayObj;
/// use tvm_ffi::{Any, Array, Result};
/// /// Tracks the depth of arrays: the callbacks see the depth of their value.
/// struct Depth;
/// impl MutContextPolicy<(usize, Vec<(i64, usize)>)> for Depth {
///     fn default_mutate(
///         &self,
///         value: MutateValue<'_>,
///         cx: &mut MutateContext<'_, (usize, Vec<(i64, usize)>)>,
///     ) -> Result<UnchangedOr<Any>> {
///         let array = value.as_node::<ArrayObj>().is_some();
///         cx.state_mut().0 += array as usize;
///         let result = cx.default_maybe_inplace_mutate_result(value);
///         cx.state_mut().0 -= array as usize;
///         result
///     }
/// }
/// let mut mutator = MutateCallbacks::new(
///     (0, Vec::new()),
///     |v: i64, cx: &mut MutateContext<'_, (usize, Vec<(i64, usize)>)>| {
///         let depth = cx.state().0;
///         cx.state_mut().1.push((v, depth));
///         v
///     },
/// )
/// .with_policy((Depth, DefaultMutContextPolicy));
/// let root = Array::new([Any::new(1i64), Any::new(Array::new([2i64]).unwrap())]).unwrap();
/// structural::mutate(root, &mut mutator).unwrap();
/// assert_eq!(mutator.state().1, [(1, 1), (2, 2)]);
/// ```
///
/// A `#[dispatch(mutate)]` type names its policy in the attribute (an expression evaluated at
/// each default descent, which may read `self`); its state is the type itself:
///
/// ```
/// use tvm_ffi::structural::{self, MutContextPolicy, MutateContext, MutateValue, UnchangedOr};
/// use tvm_ffi::{dispatch, Any, Array, Result};
/// #[derive(Default)]
/// struct Count { descents: usize, ints: usize }
/// struct CountDescents;
/// impl MutContextPolicy<Count> for CountDescents {
///     fn default_mutate(
///         &self,
///         value: MutateValue<'_>,
///         cx: &mut MutateContext<'_, Count>,
///     ) -> Result<UnchangedOr<Any>> {
///         cx.state_mut().descents += 1;
///         cx.default_maybe_inplace_mutate_result(value)
///     }
/// }
/// #[dispatch(mutate, policy = CountDescents)]
/// impl Count {
///     fn mutate_int(&mut self, v: i64) -> i64 {
///         self.ints += 1;
///         v
///     }
/// }
/// let mut count = Count::default();
/// let root = Array::new([Array::new([1i64]).unwrap(), Array::new([2i64]).unwrap()]).unwrap();
/// structural::mutate(root, &mut count).unwrap();
/// assert_eq!((count.descents, count.ints), (3, 2));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a mutation context policy over the state `{S}`",
    label = "not a `MutContextPolicy<{S}>`",
    note = "a policy is a value of a type implementing `MutContextPolicy<S>` for the mutator's state (a `#[dispatch(mutate)]` type's state is the type itself), `DefaultMutContextPolicy`, or a pair `(outer, inner)` of policies"
)]
pub trait MutContextPolicy<S> {
    /// The default descent of `value`, around which the policy works; `ctx`'s `default_*`
    /// methods continue it. [`UnchangedOr::Unchanged`] keeps the value.
    fn default_mutate(
        &self,
        value: MutateValue<'_>,
        ctx: &mut MutateContext<'_, S>,
    ) -> Result<UnchangedOr<Any>>;

    /// Whether the policy only continues the descent (the engine then skips it).
    #[doc(hidden)]
    const PASS_THROUGH: bool = false;
}

/// The policy that only continues the default descent (what a mutator without policy does).
///
/// ```
/// use tvm_ffi::structural::{self, DefaultMutContextPolicy, MutateCallbacks, MutateContext};
/// use tvm_ffi::Array;
/// let mut mutator = MutateCallbacks::new((), |v: i64, _: &mut MutateContext<'_>| v + 1)
///     .with_policy(DefaultMutContextPolicy);
/// let out = structural::mutate(Array::new([1i64]).unwrap(), &mut mutator).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultMutContextPolicy;

impl<S> MutContextPolicy<S> for DefaultMutContextPolicy {
    #[inline]
    fn default_mutate(
        &self,
        value: MutateValue<'_>,
        ctx: &mut MutateContext<'_, S>,
    ) -> Result<UnchangedOr<Any>> {
        ctx.default_maybe_inplace_mutate_result(value)
    }

    const PASS_THROUGH: bool = true;
}

/// `outer` around `inner`: `outer`'s continuation runs `inner`, whose continuation runs the
/// rest of the descent.
impl<S, Outer: MutContextPolicy<S>, Inner: MutContextPolicy<S>> MutContextPolicy<S>
    for (Outer, Inner)
{
    fn default_mutate(
        &self,
        value: MutateValue<'_>,
        ctx: &mut MutateContext<'_, S>,
    ) -> Result<UnchangedOr<Any>> {
        let kind = ctx.def_region_kind;
        let view = value.scoped_view();
        let mut next = NextPolicy {
            driver: &mut *ctx.driver,
            policy: &self.1,
        };
        let mutated = run_policy(&mut next, &self.0, value, kind)?;
        Ok(unchanged_or(&view, mutated))
    }

    const PASS_THROUGH: bool = Outer::PASS_THROUGH && Inner::PASS_THROUGH;
}

/// Runs `policy` on the default descent of `value`, continuing with `driver`: the result
/// (the value itself when the policy keeps it).
pub(crate) fn run_policy<S, P: MutContextPolicy<S> + ?Sized>(
    driver: &mut dyn MutateDriver<S>,
    policy: &P,
    value: MutateValue<'_>,
    kind: DefRegionKind,
) -> Result<Any> {
    let view = value.scoped_view();
    let mut ctx = MutateContext {
        driver,
        def_region_kind: kind,
        inplace_mode: value.inplace_mode(),
    };
    match policy.default_mutate(value, &mut ctx)? {
        UnchangedOr::Unchanged => Ok(owned(&view)),
        UnchangedOr::Changed(mutated) if mutated.as_raw().type_index == unchanged_index() => {
            Ok(owned(&view))
        }
        UnchangedOr::Changed(mutated) => Ok(mutated),
    }
}

#[inline(always)]
fn unchanged_index() -> i32 {
    crate::abi::sys::type_index::kTVMFFIUnchanged
}

/// The continuation of a policy of a pair: the inner policy, then what follows it.
struct NextPolicy<'a, 'd, S, P> {
    driver: &'a mut (dyn MutateDriver<S> + 'd),
    policy: &'a P,
}

impl<S, P: MutContextPolicy<S>> MutateDriver<S> for NextPolicy<'_, '_, S, P> {
    fn state(&self) -> &S {
        self.driver.state()
    }
    fn state_mut(&mut self) -> &mut S {
        self.driver.state_mut()
    }
    fn mutate_borrowed(&mut self, value: &AnyView<'_>, kind: DefRegionKind) -> Result<Any> {
        self.driver.mutate_borrowed(value, kind)
    }
    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind, mode: InplaceMode) -> Result<Any> {
        self.driver.mutate_owned(value, kind, mode)
    }
    fn default_mutate(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any> {
        run_policy(&mut *self.driver, self.policy, value, kind)
    }
}

/// The end of the policies of a [`Mutator`]: the default descent itself, with the mutator's
/// state `S` reached through two accessors.
struct Innermost<'a, U, S> {
    mutator: &'a mut U,
    state: fn(&U) -> &S,
    state_mut: fn(&mut U) -> &mut S,
}

impl<U: Mutator, S> MutateDriver<S> for Innermost<'_, U, S> {
    fn state(&self) -> &S {
        (self.state)(self.mutator)
    }
    fn state_mut(&mut self) -> &mut S {
        (self.state_mut)(self.mutator)
    }
    fn mutate_borrowed(&mut self, value: &AnyView<'_>, kind: DefRegionKind) -> Result<Any> {
        user_dispatch(self.mutator, value, kind, Permit::Copy)
    }
    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind, mode: InplaceMode) -> Result<Any> {
        self.mutator
            .maybe_inplace_mutate_child_with_mode(value, kind, mode)
    }
    fn default_mutate(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any> {
        let permit = value.permit(InplaceMode::Allow);
        engine_default(self.mutator, value.view(), kind, permit)
    }
}

/// What `#[dispatch(mutate, policy = ..)]` expands to (`tvm_ffi::__private`; no semver
/// guarantee): the default descent of `value` through `policy`, with the mutator as the state.
#[doc(hidden)]
pub fn mutate_with_policy<U: Mutator, P: MutContextPolicy<U>>(
    mutator: &mut U,
    policy: &P,
    value: MutateValue<'_>,
    def_region_kind: DefRegionKind,
) -> Result<Any> {
    if P::PASS_THROUGH {
        let permit = value.permit(InplaceMode::Allow);
        return engine_default(mutator, value.view(), def_region_kind, permit);
    }
    let mut innermost = Innermost {
        mutator,
        state: |mutator| mutator,
        state_mut: |mutator| mutator,
    };
    run_policy(&mut innermost, policy, value, def_region_kind)
}

/// One link of a callback mutator over state `S`: a callback of one of the
/// [`shapes`](super::link::shapes) followed by `&mut MutateContext<'_, S>` and returning the
/// replacement (anything a map callback returns), or a tuple of up to 12 links (tried in
/// order; tuples nest). `None` when the link does not take the value.
///
/// ```
/// use tvm_ffi::structural::{MutateCallbackLink, MutateCallbacks, MutateContext};
/// fn counting<M, L: MutateCallbackLink<usize, M>>(links: L) -> MutateCallbacks<usize, L, M> {
///     MutateCallbacks::new(0, links)
/// }
/// let mut mutator = counting(|v: i64, cx: &mut MutateContext<'_, usize>| {
///     *cx.state_mut() += 1;
///     v
/// });
/// tvm_ffi::structural::mutate(tvm_ffi::Array::new([1i64, 2]).unwrap(), &mut mutator).unwrap();
/// assert_eq!(mutator.into_state(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural mutate callback",
    label = "not a mutate callback",
    note = "a mutate callback takes the value (`i64`, `Array<T>`, `ObjectRef<T>`, `&NodeObj`, `&MapValue`, ...) and a `&mut MutateContext<'_, S>`, and returns its replacement (an `Any`, `Unchanged`, an `UnchangedOr<T>`, any value convertible into an `Any`, or a `Result` of one); a tuple of up to 12 of them is a callback too"
)]
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait MutateCallbackLink<S, M> {
    /// Runs the link on `value` if it takes it.
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>>;
}

context_links! {
    link: MutateCallbackLink::try_mutate_with,
    value: MapValue,
    context: MutateContext,
    output: Any,
    returns: IntoMapResult::into_map_result,
}

impl<S, F, T, O> MutateCallbackLink<S, Handle<T>> for F
where
    F: Fn(MutateValue<'_, T>, &mut MutateContext<'_, S>) -> O,
    T: for<'a> FromAny<'a>,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>> {
        value.cast::<T>()?;
        // SAFETY: `value` outlives the call, which the handle (higher-ranked) cannot outlive;
        // the context's mode is what the engine granted this value.
        let handle = unsafe { MutateValue::new(value.view(), context.inplace_mode) };
        Some(self(handle, context).into_map_result())
    }
}

/// A [`Mutator`] made of mutate callbacks (a [`MutateCallbackLink`]: one callback or a tuple of
/// them, tried in order) and the user state `S` they share through their [`MutateContext`].
/// Bare callbacks (state `()`) need no `MutateCallbacks`: [`structural::mutate`] takes them as
/// they are.
///
/// ```
/// use tvm_ffi::structural::{self, MapValue, MutateCallbacks, MutateContext};
/// use tvm_ffi::{Any, Array, Result};
/// #[derive(Default)]
/// struct Stats { ints: Vec<i64>, defaults: usize }
/// fn int(v: i64, cx: &mut MutateContext<'_, Stats>) -> i64 {
///     cx.state_mut().ints.push(v);
///     v + 1
/// }
/// fn other(value: &MapValue, cx: &mut MutateContext<'_, Stats>) -> Result<Any> {
///     cx.state_mut().defaults += 1;
///     cx.default_mutate(value)
/// }
/// let mut mutator = MutateCallbacks::new(Stats::default(), (int, other));
/// let out = structural::mutate(Array::new([1i64, 2]).unwrap(), &mut mutator).unwrap();
/// assert_eq!(out.cast::<Array<i64>>().unwrap().to_vec(), [2, 3]);
/// let stats = mutator.into_state();
/// assert_eq!((stats.ints, stats.defaults), (vec![1, 2], 1));
/// ```
///
/// [`structural::mutate`]: mutate
pub struct MutateCallbacks<S, L, M, P = DefaultMutContextPolicy> {
    state: S,
    links: L,
    policy: P,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: MutateCallbackLink<S, M>, M> MutateCallbacks<S, L, M> {
    /// A mutator of `links` over `state`. An example is on [`MutateContext`].
    pub fn new(state: S, links: L) -> Self {
        MutateCallbacks {
            state,
            links,
            policy: DefaultMutContextPolicy,
            _shapes: PhantomData,
        }
    }
}

impl<S, L, M, P> MutateCallbacks<S, L, M, P> {
    /// The same mutator with `policy` (a [`MutContextPolicy`], or a pair of them) around each
    /// default descent, instead of its current one. An example is on [`MutContextPolicy`].
    pub fn with_policy<Q: MutContextPolicy<S>>(self, policy: Q) -> MutateCallbacks<S, L, M, Q> {
        MutateCallbacks {
            state: self.state,
            links: self.links,
            policy,
            _shapes: PhantomData,
        }
    }

    /// The state.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateCallbacks, MutateContext};
    /// let mut mutator = MutateCallbacks::new(0i64, |v: i64, cx: &mut MutateContext<'_, i64>| {
    ///     *cx.state_mut() += v;
    ///     v
    /// });
    /// structural::mutate(tvm_ffi::Array::new([1i64, 2]).unwrap(), &mut mutator).unwrap();
    /// assert_eq!(*mutator.state(), 3);
    /// *mutator.state_mut() = 0;
    /// assert_eq!(mutator.into_state(), 0);
    /// ```
    #[inline]
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The state, mutably (between mutations). An example is on [`MutateCallbacks::state`].
    #[inline]
    pub fn state_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// The state, taking the mutator apart. An example is on [`MutateCallbacks::state`].
    #[inline]
    pub fn into_state(self) -> S {
        self.state
    }
}

/// A running callback mutator: the state borrowed mutably, the links and policy shared (they
/// are `Fn` / `&self`).
struct Driver<'v, S, L, M, P> {
    state: &'v mut S,
    links: &'v L,
    policy: &'v P,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: MutateCallbackLink<S, M>, M, P: MutContextPolicy<S>> Mutator for Driver<'_, S, L, M, P> {
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        let links = self.links;
        let mut context = MutateContext {
            driver: self,
            def_region_kind,
            inplace_mode: InplaceMode::Disallow,
        };
        match links.try_mutate_with(value, &mut context) {
            Some(result) => result,
            None => Mutator::default_mutate(self, value, def_region_kind),
        }
    }

    fn maybe_inplace_mutate(
        &mut self,
        value: InplaceValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let links = self.links;
        let mut context = MutateContext {
            driver: self,
            def_region_kind,
            inplace_mode: value.inplace_mode(),
        };
        match links.try_mutate_with(value.as_value(), &mut context) {
            Some(result) => result,
            None => self.default_maybe_inplace_mutate(value, def_region_kind),
        }
    }

    fn on_default_mutate(
        &mut self,
        value: MutateValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        if P::PASS_THROUGH {
            let permit = value.permit(InplaceMode::Allow);
            return engine_default(self, value.view(), def_region_kind, permit);
        }
        let policy = self.policy;
        let mut innermost = Innermost {
            mutator: self,
            state: |driver| &*driver.state,
            state_mut: |driver| &mut *driver.state,
        };
        run_policy(&mut innermost, policy, value, def_region_kind)
    }
}

impl<S, L: MutateCallbackLink<S, M>, M, P: MutContextPolicy<S>> MutateDriver<S>
    for Driver<'_, S, L, M, P>
{
    #[inline]
    fn state(&self) -> &S {
        self.state
    }

    #[inline]
    fn state_mut(&mut self) -> &mut S {
        self.state
    }

    fn mutate_borrowed(&mut self, value: &AnyView<'_>, kind: DefRegionKind) -> Result<Any> {
        user_dispatch(self, value, kind, Permit::Copy)
    }

    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind, mode: InplaceMode) -> Result<Any> {
        self.maybe_inplace_mutate_child_with_mode(value, kind, mode)
    }

    fn default_mutate(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any> {
        let permit = value.permit(InplaceMode::Allow);
        user_default(self, value.view(), kind, permit)
    }
}

impl<S, L, M, P> MutateCallbacks<S, L, M, P> {
    /// The mutator over this state, links and policy for one call.
    fn driver(&mut self) -> Driver<'_, S, L, M, P> {
        Driver {
            state: &mut self.state,
            links: &self.links,
            policy: &self.policy,
            _shapes: PhantomData,
        }
    }
}

impl<S, L: MutateCallbackLink<S, M>, M, P: MutContextPolicy<S>> Mutator
    for MutateCallbacks<S, L, M, P>
{
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        let mut driver = self.driver();
        driver.mutate(value, def_region_kind)
    }

    fn maybe_inplace_mutate(
        &mut self,
        value: InplaceValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let mut driver = self.driver();
        driver.maybe_inplace_mutate(value, def_region_kind)
    }

    fn on_default_mutate(
        &mut self,
        value: MutateValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let mut driver = self.driver();
        driver.on_default_mutate(value, def_region_kind)
    }
}

/// The shapes of mutator [`structural::mutate`](mutate) accepts, as marker
/// types (they only tell the impls of [`IntoMutator`] apart).
#[doc(hidden)] // machinery the compiler picks; users never name it
pub mod mutator_shapes {
    use std::marker::PhantomData;

    /// A [`Mutator`](crate::structural::Mutator) (a `#[dispatch(mutate)]` type, a
    /// [`MutateCallbacks`](crate::structural::MutateCallbacks), ...), by value or `&mut`.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, MapValue, Mutator};
    /// struct Keep;
    /// impl Mutator for Keep {
    ///     fn mutate(&mut self, value: &MapValue, _: DefRegionKind) -> tvm_ffi::Result<tvm_ffi::Any> {
    ///         Ok(value.to_owned())
    ///     }
    /// }
    /// structural::mutate(1i64, &mut Keep).unwrap();
    /// ```
    pub struct ByMutator;

    /// Mutate callbacks without state (a callback, or a tuple of them, each taking a
    /// `&mut MutateContext<'_>`).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext};
    /// let out = structural::mutate(1i64, |v: i64, _: &mut MutateContext<'_>| v * 2).unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 2);
    /// ```
    pub struct ByCallbacks<M>(PhantomData<fn(M)>);
}
use mutator_shapes::{ByCallbacks, ByMutator};

/// What [`structural::mutate`](mutate) accepts: a [`Mutator`] by value or
/// `&mut` (a `#[dispatch(mutate)]` type, a [`MutateCallbacks`]), or mutate callbacks without state (a [`MutateCallbackLink`] over
/// `()`). More examples are in the [`mutator_shapes`] docs.
///
/// ```
/// use tvm_ffi::structural::{self, IntoMutator, MutateContext};
/// fn double<M>(mutator: impl IntoMutator<M>) -> i64 {
///     structural::mutate(21i64, mutator).unwrap().cast::<i64>().unwrap()
/// }
/// assert_eq!(double(|v: i64, _: &mut MutateContext<'_>| v * 2), 42);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural mutator",
    label = "not a mutator",
    note = "pass a `Mutator` or `&mut` one (a `#[dispatch(mutate)]` type, a `MutateCallbacks`, ...), or a callback taking the value (`i64`, `Array<T>`, `&NodeObj`, `&MapValue`, ...) and a `&mut MutateContext<'_>` (annotate both arguments), or a tuple of up to 12 of them"
)]
pub trait IntoMutator<M> {
    /// The mutator, run on the root.
    type Mutator: Mutator;
    /// Converts.
    fn into_mutator(self) -> Self::Mutator;
}

impl<U: Mutator> IntoMutator<ByMutator> for U {
    type Mutator = U;
    #[inline]
    fn into_mutator(self) -> U {
        self
    }
}

impl<L: MutateCallbackLink<(), M>, M> IntoMutator<ByCallbacks<M>> for L {
    type Mutator = MutateCallbacks<(), L, M>;
    #[inline]
    fn into_mutator(self) -> Self::Mutator {
        MutateCallbacks::new((), self)
    }
}

/// Mutates `root` with a [`Mutator`] (C++ `visitor->Mutate(root)`), by value or `&mut` (a
/// `#[dispatch(mutate)]` type, a [`MutateCallbacks`], ...)
/// or mutate callbacks without state (see [`IntoMutator`]): its
/// `maybe_inplace_mutate` (when only the traversal holds the root) or `mutate` runs for the
/// root, in [`DefRegionKind::None`], and drives the rest. A `None` root is the mutator's too.
pub fn mutate<R: IntoAny, M, U: IntoMutator<M>>(root: R, mutator: U) -> Result<Any> {
    let root = Any::new(root);
    let mut mutator = mutator.into_mutator();
    user_dispatch(
        &mut mutator,
        &root.view(),
        DefRegionKind::None,
        Permit::InPlace,
    )
}
