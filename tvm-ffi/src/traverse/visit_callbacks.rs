//! Callback visitors: a [`Visitor`] made of closures (or functions) that each take a value and
//! a [`VisitContext`], tried in order, with optional user state shared between them. Reached
//! through [`crate::structural`].
//!
//! A matched callback owns the traversal of its value, as a [`Visitor::visit`] does: it
//! descends through its context ([`VisitContext::visit_children`], [`VisitContext::visit`],
//! [`VisitContext::visit_with`]); a value no callback takes has its default children visited.
//! Callbacks are `Fn`: the state they share lives in the [`VisitCallbacks`] and is reached
//! through the context, so that it can be borrowed again during the recursion.
//!
//! A [`ContextPolicy`] customises the default descent ([`VisitCallbacks::with_policy`]): the
//! descent of a value no callback takes, and the one a callback asks for through its context.
//! Its composition and its use by walks and `#[dispatch(visit, policy = ..)]` visitors are in
//! `visit_policy.rs`.
use std::marker::PhantomData;

use super::link::context_links;
use super::visit::{
    nested_region, DefRegionKind, IntoVisitOutcome, VisitInterrupt, VisitValue, Visitor,
};
use crate::base::error::Result;
use crate::call::function::IntoArg;

/// What a running traversal offers a [`VisitContext`]: its state and its recursion. A
/// callback's context reaches the callback visitor; a policy's context reaches the rest of the
/// policy chain (`visit_default_children` continues after that policy).
pub(crate) trait ContextDriver<S> {
    fn state(&self) -> &S;
    fn state_mut(&mut self) -> &mut S;
    /// Visits `value` through the whole traversal (callbacks, policies, descent).
    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>;
    /// The default descent below `value`, not `value` itself: from a callback, the configured
    /// policy; from a policy, the next policy, and after the last one the default children.
    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>;
}

/// The state and the recursion a visit callback reaches: the user state of its
/// [`VisitCallbacks`] (`()` for bare callbacks), the value it was called for, the region it
/// was reached in, and the visits of children, which run the callbacks again.
///
/// ```
/// use tvm_ffi::structural::{self, VisitCallbacks, VisitContext};
/// use tvm_ffi::Array;
/// /// The depth of the deepest integer.
/// #[derive(Default)]
/// struct Depth { now: usize, max: usize }
/// let mut visitor = VisitCallbacks::new(
///     Depth::default(),
///     (
///         |_: &tvm_ffi::builtin::ArrayObj, cx: &mut VisitContext<'_, Depth>| {
///             cx.state_mut().now += 1;
///             let outcome = cx.visit_children();
///             cx.state_mut().now -= 1;
///             outcome
///         },
///         |_: i64, cx: &mut VisitContext<'_, Depth>| {
///             let state = cx.state_mut();
///             state.max = state.max.max(state.now);
///         },
///     ),
/// );
/// let root = Array::new([Array::new([1i64]).unwrap()]).unwrap();
/// structural::visit(&root, &mut visitor).unwrap();
/// assert_eq!(visitor.state().max, 2);
/// ```
pub struct VisitContext<'a, S> {
    pub(crate) driver: &'a mut (dyn ContextDriver<S> + 'a),
    current: &'a VisitValue,
    def_region_kind: DefRegionKind,
}

impl<'a, S> VisitContext<'a, S> {
    /// The context of a callback or policy running for `current`, reached in `def_region_kind`.
    #[inline]
    pub(crate) fn new(
        driver: &'a mut (dyn ContextDriver<S> + 'a),
        current: &'a VisitValue,
        def_region_kind: DefRegionKind,
    ) -> VisitContext<'a, S> {
        VisitContext {
            driver,
            current,
            def_region_kind,
        }
    }
}

impl<S> VisitContext<'_, S> {
    /// The user state shared by every callback of this visitor.
    #[inline]
    pub fn state(&self) -> &S {
        self.driver.state()
    }

    /// The user state, mutably. It cannot stay borrowed across a visit of a child (the
    /// callbacks of the child borrow it too).
    #[inline]
    pub fn state_mut(&mut self) -> &mut S {
        self.driver.state_mut()
    }

    /// The value this callback runs for.
    #[inline]
    pub fn current(&self) -> &VisitValue {
        self.current
    }

    /// The definition region the current value was reached in.
    #[inline]
    pub fn def_region_kind(&self) -> DefRegionKind {
        self.def_region_kind
    }

    /// Visits `child` through the callbacks, in the current value's region. A `None` child is
    /// not visited.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, VisitContext};
    /// use tvm_ffi::{Array, Map};
    /// let seen = std::cell::RefCell::new(Vec::new());
    /// let root = Map::new([("k", 1i64)]).unwrap();
    /// structural::visit(
    ///     &root,
    ///     (
    ///         // Visit the keys of maps too (the default visits values only).
    ///         |map: Map<tvm_ffi::String, i64>, cx: &mut VisitContext<'_, ()>| {
    ///             for (key, value) in map.iter() {
    ///                 cx.visit(key)?;
    ///                 cx.visit(value)?;
    ///             }
    ///             Ok(None)
    ///         },
    ///         |v: &structural::VisitValue, _: &mut VisitContext<'_, ()>| {
    ///             seen.borrow_mut().push(v.type_key());
    ///         },
    ///     ),
    /// )
    /// .unwrap();
    /// assert_eq!(seen.into_inner(), ["ffi.SmallStr", "int"]);
    /// ```
    pub fn visit<A: IntoArg>(&mut self, child: A) -> Result<Option<VisitInterrupt>> {
        let kind = self.def_region_kind;
        self.visit_with(child, kind)
    }

    /// Visits `child` through the callbacks in `def_region_kind`; inside a pattern region the
    /// child stays in the pattern (a pattern cannot be left, as with field flags). A `None`
    /// child is not visited.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, VisitContext};
    /// use tvm_ffi::Array;
    /// let kinds = std::cell::RefCell::new(Vec::new());
    /// structural::visit(
    ///     &Array::new([1i64]).unwrap(),
    ///     (
    ///         |array: Array<i64>, cx: &mut VisitContext<'_, ()>| {
    ///             for item in array.iter() {
    ///                 cx.visit_with(item, DefRegionKind::Pattern)?;
    ///             }
    ///             Ok(None)
    ///         },
    ///         |_: i64, cx: &mut VisitContext<'_, ()>| kinds.borrow_mut().push(cx.def_region_kind()),
    ///     ),
    /// )
    /// .unwrap();
    /// assert_eq!(kinds.into_inner(), [DefRegionKind::Pattern]);
    /// ```
    pub fn visit_with<A: IntoArg>(
        &mut self,
        child: A,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let holder = child.into_holder()?;
        let view = A::view(&holder);
        if view.is_none() {
            return Ok(None);
        }
        // SAFETY: `holder` keeps the value alive through the call.
        let value = unsafe { VisitValue::new(view) };
        let kind = nested_region(self.def_region_kind, def_region_kind);
        self.driver.visit_value(&value, kind)
    }

    /// Visits the default children of the current value (container contents, structural
    /// fields in the regions their flags open) through the callbacks, not the value itself.
    /// An error gains the path to the child it came from. An example is on [`VisitContext`].
    ///
    /// With a [`ContextPolicy`], a callback's call enters the policy; a policy's call continues
    /// with the next policy, and the last one's with the default children.
    pub fn visit_children(&mut self) -> Result<Option<VisitInterrupt>> {
        self.driver
            .visit_default_children(self.current, self.def_region_kind)
    }

    /// Visits the default children of `value` (not `value` itself) through the callbacks,
    /// reached in `def_region_kind` (inside a pattern region: the pattern). A `None` value has
    /// none. Like [`VisitContext::visit_children`] it enters the policy (from a callback) or
    /// continues with the next one (from a policy), on `value` instead of the current value:
    /// the context's own value and region are unchanged afterwards.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, VisitContext};
    /// use tvm_ffi::{Any, Array};
    /// let kinds = std::cell::RefCell::new(Vec::new());
    /// let inner = Array::new([1i64]).unwrap();
    /// structural::visit(
    ///     &Array::new([Any::new(inner)]).unwrap(),
    ///     (
    ///         |outer: Array<Array<i64>>, cx: &mut VisitContext<'_, ()>| {
    ///             // The inner array's items as pattern definitions; the inner array itself
    ///             // is not visited.
    ///             cx.default_visit_children(outer.get(0).unwrap(), DefRegionKind::Pattern)
    ///         },
    ///         |_: i64, cx: &mut VisitContext<'_, ()>| kinds.borrow_mut().push(cx.def_region_kind()),
    ///     ),
    /// )
    /// .unwrap();
    /// assert_eq!(kinds.into_inner(), [DefRegionKind::Pattern]);
    /// ```
    pub fn default_visit_children<A: IntoArg>(
        &mut self,
        value: A,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let holder = value.into_holder()?;
        let view = A::view(&holder);
        if view.is_none() {
            return Ok(None);
        }
        // SAFETY: `holder` keeps the value alive through the call.
        let value = unsafe { VisitValue::new(view) };
        let kind = nested_region(self.def_region_kind, def_region_kind);
        self.driver.visit_default_children(&value, kind)
    }
}

/// One link of a callback visitor over state `S`: a callback of one of the
/// [`shapes`](super::link::shapes) followed by `&mut VisitContext<'_, S>`, or a tuple of up to
/// 12 links (tried in order; tuples nest). `None` when the link does not take the value.
///
/// ```
/// use tvm_ffi::structural::{VisitCallbackLink, VisitCallbacks, VisitContext};
/// fn with_count<M, L: VisitCallbackLink<usize, M>>(links: L) -> VisitCallbacks<usize, L, M> {
///     VisitCallbacks::new(0, links)
/// }
/// let mut visitor = with_count(|_: i64, cx: &mut VisitContext<'_, usize>| *cx.state_mut() += 1);
/// tvm_ffi::structural::visit(&tvm_ffi::Array::new([1i64, 2]).unwrap(), &mut visitor).unwrap();
/// assert_eq!(visitor.into_state(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural visit callback",
    label = "not a visit callback",
    note = "a visit callback takes the value (`i64`, `Array<T>`, `ObjectRef<T>`, `&NodeObj`, `&VisitValue`, ...) and a `&mut VisitContext<'_, S>`, and returns `()`, `Option<VisitInterrupt>` or a `Result` of either; a tuple of up to 12 of them is a callback too"
)]
#[doc(hidden)] // machinery the compiler picks; users never name it
pub trait VisitCallbackLink<S, M> {
    /// Runs the link on the context's current value if it takes it.
    fn try_visit_with(
        &self,
        value: &VisitValue,
        context: &mut VisitContext<'_, S>,
    ) -> Option<Result<Option<VisitInterrupt>>>;
}

context_links! {
    link: VisitCallbackLink::try_visit_with,
    value: VisitValue,
    context: VisitContext,
    output: Option<VisitInterrupt>,
    returns: IntoVisitOutcome::into_visit_outcome,
}

/// A [`Visitor`] made of visit callbacks (a [`VisitCallbackLink`]: one callback or a tuple of
/// them, tried in order) and the user state `S` they share through their [`VisitContext`].
/// Bare callbacks (state `()`) need no `VisitCallbacks`: [`structural::visit`] takes them as
/// they are.
///
/// ```
/// use tvm_ffi::structural::{self, VisitCallbacks, VisitContext, VisitInterrupt};
/// use tvm_ffi::{Array, Result};
/// #[derive(Default)]
/// struct Stats { arrays: usize, sum: i64 }
/// fn array(_: Array<i64>, cx: &mut VisitContext<'_, Stats>) -> Result<Option<VisitInterrupt>> {
///     cx.state_mut().arrays += 1;
///     cx.visit_children()
/// }
/// fn int(value: i64, cx: &mut VisitContext<'_, Stats>) {
///     cx.state_mut().sum += value;
/// }
/// let mut visitor = VisitCallbacks::new(Stats::default(), (array, int));
/// structural::visit(&Array::new([1i64, 2, 3]).unwrap(), &mut visitor).unwrap();
/// let stats = visitor.into_state();
/// assert_eq!((stats.arrays, stats.sum), (1, 6));
/// ```
///
/// [`structural::visit`]: visit
/// With [`VisitCallbacks::with_policy`], a [`ContextPolicy`] runs the default descent of the
/// values no callback takes, and of those whose callback calls
/// [`VisitContext::visit_children`].
///
/// [`structural::visit`]: visit
pub struct VisitCallbacks<S, L, M, P = DefaultContextPolicy> {
    state: S,
    links: L,
    policy: Option<P>,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: VisitCallbackLink<S, M>, M> VisitCallbacks<S, L, M> {
    /// A visitor of `links` over `state`. An example is on [`VisitCallbacks`].
    pub fn new(state: S, links: L) -> Self {
        VisitCallbacks {
            state,
            links,
            policy: None,
            _shapes: PhantomData,
        }
    }
}

impl<S, L, M, P> VisitCallbacks<S, L, M, P> {
    /// The same callbacks and state with `policy` running the default descent (replacing any
    /// policy set before; a tuple `(outer, inner)` composes two). A callback that takes a value
    /// owns its descent: it enters the policy only through [`VisitContext::visit_children`] or
    /// [`VisitContext::default_visit_children`].
    ///
    /// ```
    /// use tvm_ffi::structural::{self, ContextPolicy, VisitCallbacks, VisitContext, VisitInterrupt, VisitValue};
    /// use tvm_ffi::{Any, Array, Result};
    /// /// The nesting depth of each integer, counted by a policy around arrays' children.
    /// #[derive(Default)]
    /// struct Depths { depth: usize, seen: Vec<(i64, usize)> }
    /// struct ArrayDepth;
    /// impl ContextPolicy<Depths> for ArrayDepth {
    ///     fn default_visit(&self, value: &VisitValue, cx: &mut VisitContext<'_, Depths>) -> Result<Option<VisitInterrupt>> {
    ///         if value.cast::<Array<Any>>().is_none() {
    ///             return cx.visit_children();
    ///         }
    ///         cx.state_mut().depth += 1;
    ///         let outcome = cx.visit_children();
    ///         cx.state_mut().depth -= 1; // restored on an interrupt or an error too
    ///         outcome
    ///     }
    /// }
    /// let mut visitor = VisitCallbacks::new(Depths::default(), |v: i64, cx: &mut VisitContext<'_, Depths>| {
    ///     let depth = cx.state().depth;
    ///     cx.state_mut().seen.push((v, depth));
    /// })
    /// .with_policy(ArrayDepth);
    /// let root = Array::new([Any::new(1i64), Any::new(Array::new([2i64]).unwrap())]).unwrap();
    /// structural::visit(&root, &mut visitor).unwrap();
    /// assert_eq!(visitor.into_state().seen, [(1, 1), (2, 2)]);
    /// ```
    pub fn with_policy<Q: ContextPolicy<S>>(self, policy: Q) -> VisitCallbacks<S, L, M, Q> {
        VisitCallbacks {
            state: self.state,
            links: self.links,
            policy: Some(policy),
            _shapes: PhantomData,
        }
    }

    /// The state. An example is on [`VisitContext`].
    #[inline]
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The state, mutably (between visits).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, VisitCallbacks, VisitContext};
    /// let mut visitor = VisitCallbacks::new(0i64, |v: i64, cx: &mut VisitContext<'_, i64>| {
    ///     *cx.state_mut() += v;
    /// });
    /// structural::visit(&tvm_ffi::Array::new([1i64]).unwrap(), &mut visitor).unwrap();
    /// *visitor.state_mut() = 10;
    /// structural::visit(&tvm_ffi::Array::new([1i64]).unwrap(), &mut visitor).unwrap();
    /// assert_eq!(*visitor.state(), 11);
    /// ```
    #[inline]
    pub fn state_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// The state, taking the visitor apart. An example is on [`VisitCallbacks`].
    #[inline]
    pub fn into_state(self) -> S {
        self.state
    }
}

/// A running callback visitor: the state borrowed mutably, the links and the policy shared
/// (they are `Fn`), so that a context can reach all of them while a link runs.
struct Driver<'v, S, L, M, P> {
    state: &'v mut S,
    links: &'v L,
    policy: Option<&'v P>,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: VisitCallbackLink<S, M>, M, P: ContextPolicy<S>> Visitor for Driver<'_, S, L, M, P> {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let links = self.links;
        let mut context = VisitContext::new(self, value, def_region_kind);
        match links.try_visit_with(value, &mut context) {
            Some(outcome) => outcome,
            None => context.visit_children(),
        }
    }
}

impl<S, L: VisitCallbackLink<S, M>, M, P: ContextPolicy<S>> ContextDriver<S>
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

    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        Visitor::visit(self, value, kind)
    }

    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        match self.policy {
            None => Visitor::default_visit_children(self, value, kind),
            Some(policy) => run_policy(policy, &mut AfterPolicy(self), value, kind),
        }
    }
}

/// The callback visitor as seen from its policy: the same state and visits, and after the last
/// policy the default children (whose visits run the callbacks, and the policy, again).
struct AfterPolicy<'d, D>(&'d mut D);

impl<S, D: Visitor + ContextDriver<S>> ContextDriver<S> for AfterPolicy<'_, D> {
    #[inline]
    fn state(&self) -> &S {
        self.0.state()
    }

    #[inline]
    fn state_mut(&mut self) -> &mut S {
        self.0.state_mut()
    }

    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.0.visit_value(value, kind)
    }

    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        Visitor::default_visit_children(self.0, value, kind)
    }
}

impl<S, L, M, P> VisitCallbacks<S, L, M, P> {
    #[inline]
    fn driver(&mut self) -> Driver<'_, S, L, M, P> {
        Driver {
            state: &mut self.state,
            links: &self.links,
            policy: self.policy.as_ref(),
            _shapes: PhantomData,
        }
    }
}

impl<S, L: VisitCallbackLink<S, M>, M, P: ContextPolicy<S>> Visitor for VisitCallbacks<S, L, M, P> {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.driver().visit(value, def_region_kind)
    }

    /// The default descent below `value` as a callback's [`VisitContext::default_visit_children`]
    /// runs it: through the policy, if one is set.
    fn default_visit_children(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.driver().visit_default_children(value, def_region_kind)
    }
}

/// A reusable customisation of the default descent of a traversal: what runs below a value
/// that no callback takes (in a [`VisitCallbacks`] with [`VisitCallbacks::with_policy`], or a
/// `#[dispatch(visit, policy = ..)]` type), and below every value a
/// [`WalkWithContextPolicy`](crate::structural::WalkWithContextPolicy) walks on.
///
/// [`ContextPolicy::default_visit`] runs with a [`VisitContext`] on the value: its
/// [`VisitContext::visit_children`] continues with the next policy (a tuple `(outer, inner)`
/// composes two policies, and tuples nest), and after the last one with the default children,
/// which the whole traversal visits again; [`VisitContext::visit`] visits any value through the
/// whole traversal; [`VisitContext::default_visit_children`] continues on another value (without
/// running the callbacks of that value itself) or in another region. A policy is shared
/// (`&self`): what it changes lives in the traversal's state, and what it sets around its
/// descent it restores before returning, an interrupt or an error included.
///
/// ```
/// use tvm_ffi::structural::{self, ContextPolicy, DefRegionKind, VisitCallbacks, VisitContext, VisitInterrupt, VisitValue};
/// use tvm_ffi::{Array, Result};
/// /// Visits the items of arrays of integers as pattern definitions.
/// struct ArraysArePatterns;
/// impl<S> ContextPolicy<S> for ArraysArePatterns {
///     fn default_visit(&self, value: &VisitValue, cx: &mut VisitContext<'_, S>) -> Result<Option<VisitInterrupt>> {
///         match value.cast::<Array<i64>>() {
///             Some(array) => cx.default_visit_children(array, DefRegionKind::Pattern),
///             None => cx.visit_children(),
///         }
///     }
/// }
/// let mut visitor = VisitCallbacks::new(Vec::new(), |v: i64, cx: &mut VisitContext<'_, Vec<(i64, DefRegionKind)>>| {
///     let kind = cx.def_region_kind();
///     cx.state_mut().push((v, kind));
/// })
/// .with_policy(ArraysArePatterns);
/// structural::visit(&Array::new([1i64]).unwrap(), &mut visitor).unwrap();
/// assert_eq!(visitor.into_state(), [(1, DefRegionKind::Pattern)]);
/// ```
///
/// `#[dispatch(visit, policy = expr)]` gives a visitor type a policy over itself (the policy's
/// state is the visitor): the values no `visit_*` method takes, and its
/// `self.default_visit_children`, descend through it.
///
/// ```
/// use tvm_ffi::structural::{self, ContextPolicy, VisitContext, VisitInterrupt, VisitValue};
/// use tvm_ffi::{dispatch, Any, Array, Result};
/// #[derive(Default)]
/// struct Depths { depth: usize, seen: Vec<(i64, usize)> }
/// struct ArrayDepth;
/// impl ContextPolicy<Depths> for ArrayDepth {
///     fn default_visit(&self, value: &VisitValue, cx: &mut VisitContext<'_, Depths>) -> Result<Option<VisitInterrupt>> {
///         let is_array = value.cast::<Array<Any>>().is_some();
///         cx.state_mut().depth += is_array as usize;
///         let outcome = cx.visit_children();
///         cx.state_mut().depth -= is_array as usize;
///         outcome
///     }
/// }
/// #[dispatch(visit, policy = ArrayDepth)]
/// impl Depths {
///     fn visit_int(&mut self, value: i64) {
///         self.seen.push((value, self.depth));
///     }
/// }
/// let root = Array::new([Any::new(1i64), Any::new(Array::new([2i64]).unwrap())]).unwrap();
/// let mut visitor = Depths::default();
/// structural::visit(&root, &mut visitor).unwrap();
/// assert_eq!(visitor.seen, [(1, 1), (2, 2)]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a context policy over the state `{S}`",
    label = "not a `ContextPolicy<{S}>`",
    note = "implement `ContextPolicy<{S}>` for it (`fn default_visit(&self, value: &VisitValue, context: &mut VisitContext<'_, {S}>)`), or compose policies as a tuple `(outer, inner)`; the state is a `VisitCallbacks`'s state, the `#[dispatch(visit)]` type itself, or a `WalkWithContextPolicy`'s walk handler"
)]
pub trait ContextPolicy<S> {
    /// The default descent below `value`, the context's current value (reached in
    /// [`VisitContext::def_region_kind`]). `Ok(Some(..))` stops the traversal.
    fn default_visit(
        &self,
        value: &VisitValue,
        context: &mut VisitContext<'_, S>,
    ) -> Result<Option<VisitInterrupt>>;
}

/// The policy that changes nothing: the default children, as without a policy.
///
/// ```
/// use tvm_ffi::structural::{self, DefaultContextPolicy, VisitCallbacks, VisitContext};
/// let mut visitor = VisitCallbacks::new(0i64, |v: i64, cx: &mut VisitContext<'_, i64>| *cx.state_mut() += v)
///     .with_policy(DefaultContextPolicy);
/// structural::visit(&tvm_ffi::Array::new([1i64, 2]).unwrap(), &mut visitor).unwrap();
/// assert_eq!(visitor.into_state(), 3);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultContextPolicy;

impl<S> ContextPolicy<S> for DefaultContextPolicy {
    #[inline]
    fn default_visit(
        &self,
        _value: &VisitValue,
        context: &mut VisitContext<'_, S>,
    ) -> Result<Option<VisitInterrupt>> {
        context.visit_children()
    }
}

/// Runs `policy` on `value`; `driver` is what follows it (its `visit_default_children`).
#[inline]
pub(crate) fn run_policy<S, P: ContextPolicy<S> + ?Sized>(
    policy: &P,
    driver: &mut dyn ContextDriver<S>,
    value: &VisitValue,
    kind: DefRegionKind,
) -> Result<Option<VisitInterrupt>> {
    policy.default_visit(value, &mut VisitContext::new(driver, value, kind))
}

/// The shapes of visitor [`structural::visit`](visit) accepts, as marker types
/// (they only tell the impls of [`IntoVisitor`] apart).
#[doc(hidden)] // machinery the compiler picks; users never name it
pub mod visitor_shapes {
    use std::marker::PhantomData;

    /// `&mut V` of a [`Visitor`](crate::structural::Visitor) (a `#[dispatch(visit)]` type, a
    /// [`VisitCallbacks`](crate::structural::VisitCallbacks), ...).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, VisitInterrupt, VisitValue, Visitor};
    /// struct Nothing;
    /// impl Visitor for Nothing {
    ///     fn visit(&mut self, _: &VisitValue, _: DefRegionKind) -> tvm_ffi::Result<Option<VisitInterrupt>> {
    ///         Ok(None)
    ///     }
    /// }
    /// structural::visit(&tvm_ffi::Array::new([1i64]).unwrap(), &mut Nothing).unwrap();
    /// ```
    pub struct ByVisitor;

    /// Visit callbacks without state (a callback, or a tuple of them, each taking a
    /// `&mut VisitContext<'_, ()>`).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, VisitContext};
    /// let n = std::cell::Cell::new(0);
    /// structural::visit(&tvm_ffi::Array::new([1i64, 2]).unwrap(), |_: i64, _: &mut VisitContext<'_, ()>| {
    ///     n.set(n.get() + 1);
    /// })
    /// .unwrap();
    /// assert_eq!(n.get(), 2);
    /// ```
    pub struct ByCallbacks<M>(PhantomData<fn(M)>);
}
use visitor_shapes::{ByCallbacks, ByVisitor};

/// What [`structural::visit`](visit) accepts: `&mut` a [`Visitor`] (which
/// [`VisitCallbacks`] and `#[dispatch(visit)]` types are), or visit callbacks without state (a
/// [`VisitCallbackLink`] over `()`). More examples are in the [`visitor_shapes`] docs.
///
/// ```
/// use tvm_ffi::structural::{self, IntoVisitor, VisitContext};
/// use tvm_ffi::Array;
/// fn visit_ints<M>(visitor: impl IntoVisitor<M>) {
///     structural::visit(&Array::new([1i64, 2]).unwrap(), visitor).unwrap();
/// }
/// let n = std::cell::Cell::new(0);
/// visit_ints(|_: i64, _: &mut VisitContext<'_, ()>| n.set(n.get() + 1));
/// assert_eq!(n.get(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural visitor",
    label = "not a visitor",
    note = "pass `&mut` a `Visitor` (a `#[dispatch(visit)]` type, a `VisitCallbacks`), or a callback taking the value (`i64`, `Array<T>`, `&NodeObj`, `&VisitValue`, ...) and a `&mut VisitContext<'_, ()>` (annotate both arguments), or a tuple of up to 12 of them"
)]
pub trait IntoVisitor<M> {
    /// Visits `value`, reached in `def_region_kind`.
    fn visit_root(
        self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>>;
}

impl<V: Visitor> IntoVisitor<ByVisitor> for &mut V {
    #[inline]
    fn visit_root(
        self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.visit(value, def_region_kind)
    }
}

impl<L: VisitCallbackLink<(), M>, M> IntoVisitor<ByCallbacks<M>> for L {
    #[inline]
    fn visit_root(
        self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        VisitCallbacks::new((), self).visit(value, def_region_kind)
    }
}

/// Visits `root` with a visitor (C++ `visitor->Visit(root)`): `&mut` a [`Visitor`] (a
/// `#[dispatch(visit)]` type, a [`VisitCallbacks`], ...),
/// whose `visit` runs for the root, in [`DefRegionKind::None`], and drives the rest; or visit
/// callbacks without state (see [`IntoVisitor`]). A `None` root
/// is not visited.
///
/// ```
/// use tvm_ffi::structural::{self, VisitContext};
/// use tvm_ffi::Array;
/// let sum = std::cell::Cell::new(0);
/// structural::visit(&Array::new([1i64, 2]).unwrap(), |v: i64, _: &mut VisitContext<'_, ()>| {
///     sum.set(sum.get() + v);
/// })
/// .unwrap();
/// assert_eq!(sum.get(), 3);
/// ```
pub fn visit<R: IntoArg, M, V: IntoVisitor<M>>(
    root: R,
    visitor: V,
) -> Result<Option<VisitInterrupt>> {
    let holder = root.into_holder()?;
    let view = R::view(&holder);
    if view.is_none() {
        return Ok(None);
    }
    // SAFETY: `holder` keeps the value alive through the call.
    let value = unsafe { VisitValue::new(view) };
    visitor.visit_root(&value, DefRegionKind::None)
}
