//! Context policies beyond callback visitors: their composition (a tuple `(outer, inner)`),
//! walks with a policy ([`WalkWithContextPolicy`]) and `#[dispatch(visit, policy = ..)]`
//! visitors. Reached through [`crate::structural`]; the trait itself, [`ContextPolicy`], is
//! next to the [`VisitContext`] it works through.
//!
//! Every traversal runs a policy the same way ([`run_policy`]): a [`ContextDriver`] that says
//! what follows the policy (the next policy, or the default children) and how to visit any
//! value through the whole traversal.
use std::cell::Cell;
use std::marker::PhantomData;

use super::visit::{
    nested_region, visit_default_children_of, walk_default_children_of, walk_one, DefRegionKind,
    IntoWalker, VisitDispatch, VisitInterrupt, VisitValue, Visitor, WalkOrder, WalkResult,
};
use super::visit_callbacks::{run_policy, ContextDriver, ContextPolicy, VisitContext};
use crate::base::error::Result;

/// `(outer, inner)`: `outer` runs first, and its `visit_children` continues with `inner`.
impl<S, Outer: ContextPolicy<S>, Inner: ContextPolicy<S>> ContextPolicy<S> for (Outer, Inner) {
    fn default_visit(
        &self,
        value: &VisitValue,
        context: &mut VisitContext<'_, S>,
    ) -> Result<Option<VisitInterrupt>> {
        let kind = context.def_region_kind();
        let mut next = NextPolicy {
            rest: &mut *context.driver,
            policy: &self.1,
        };
        run_policy(&self.0, &mut next, value, kind)
    }
}

/// What follows the outer policy of a pair: the inner one, then what follows the pair (`rest`).
struct NextPolicy<'d, S, P> {
    rest: &'d mut dyn ContextDriver<S>,
    policy: &'d P,
}

impl<S, P: ContextPolicy<S>> ContextDriver<S> for NextPolicy<'_, S, P> {
    #[inline]
    fn state(&self) -> &S {
        self.rest.state()
    }

    #[inline]
    fn state_mut(&mut self) -> &mut S {
        self.rest.state_mut()
    }

    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.rest.visit_value(value, kind)
    }

    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        run_policy(self.policy, &mut *self.rest, value, kind)
    }
}

/// A walk handler (a `#[dispatch(walk)]` type, its state) with a [`ContextPolicy`] running the
/// descent below every value the walk goes on with: below a value whose pre-order handler said
/// [`WalkResult::Advance`] (or took no part), leaves included, and before a post-order handler.
/// The policy's context reaches the handler as its state; its `visit` walks a value (its
/// handler, the policy, its children) in the walk's order. Pass it to
/// [`walk`](crate::structural::walk) by value or as `&mut` (to keep it for another walk).
///
/// ```
/// use tvm_ffi::structural::{self, ContextPolicy, VisitContext, VisitInterrupt, VisitValue, WalkOrder, WalkResult, WalkWithContextPolicy};
/// use tvm_ffi::{dispatch, Any, Array, Result};
/// /// Integers and the depth of the arrays around them.
/// #[derive(Default)]
/// struct Depths { depth: usize, seen: Vec<(i64, usize)> }
/// #[dispatch(walk)]
/// impl Depths {
///     fn walk_int(&mut self, value: i64) -> WalkResult {
///         self.seen.push((value, self.depth));
///         WalkResult::Advance
///     }
/// }
/// struct ArrayDepth;
/// impl ContextPolicy<Depths> for ArrayDepth {
///     fn default_visit(&self, value: &VisitValue, cx: &mut VisitContext<'_, Depths>) -> Result<Option<VisitInterrupt>> {
///         if value.cast::<Array<Any>>().is_none() {
///             return cx.visit_children();
///         }
///         cx.state_mut().depth += 1;
///         let outcome = cx.visit_children();
///         cx.state_mut().depth -= 1;
///         outcome
///     }
/// }
/// let root = Array::new([Any::new(1i64), Any::new(Array::new([2i64]).unwrap())]).unwrap();
/// let mut walker = WalkWithContextPolicy::new(Depths::default(), ArrayDepth);
/// structural::walk(&root, &mut walker, WalkOrder::PreOrder).unwrap();
/// assert_eq!(walker.into_state().seen, [(1, 1), (2, 2)]);
/// ```
pub struct WalkWithContextPolicy<W, P> {
    walker: W,
    policy: P,
}

impl<W: VisitDispatch, P: ContextPolicy<W>> WalkWithContextPolicy<W, P> {
    /// The walk handler `walker` with `policy`. An example is on [`WalkWithContextPolicy`].
    pub fn new(walker: W, policy: P) -> Self {
        WalkWithContextPolicy { walker, policy }
    }
}

impl<W, P> WalkWithContextPolicy<W, P> {
    /// The walk handler and its state.
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefaultContextPolicy, WalkOrder, WalkResult, WalkWithContextPolicy};
    /// #[derive(Default)]
    /// struct Count(usize);
    /// #[tvm_ffi::dispatch(walk)]
    /// impl Count {
    ///     fn walk_int(&mut self, _: i64) -> WalkResult {
    ///         self.0 += 1;
    ///         WalkResult::Advance
    ///     }
    /// }
    /// let mut walker = WalkWithContextPolicy::new(Count::default(), DefaultContextPolicy);
    /// let root = tvm_ffi::Array::new([1i64, 2]).unwrap();
    /// structural::walk(&root, &mut walker, WalkOrder::PreOrder).unwrap();
    /// assert_eq!(walker.state().0, 2);
    /// walker.state_mut().0 = 0;
    /// structural::walk(&root, &mut walker, WalkOrder::PostOrder).unwrap();
    /// assert_eq!(walker.into_state().0, 2);
    /// ```
    #[inline]
    pub fn state(&self) -> &W {
        &self.walker
    }

    /// The walk handler, mutably (between walks). An example is on
    /// [`WalkWithContextPolicy::state`].
    #[inline]
    pub fn state_mut(&mut self) -> &mut W {
        &mut self.walker
    }

    /// The walk handler, taking the pair apart. An example is on [`WalkWithContextPolicy`].
    #[inline]
    pub fn into_state(self) -> W {
        self.walker
    }

    #[inline]
    fn borrowed(&mut self) -> PolicyWalk<'_, W, P> {
        PolicyWalk {
            walker: &mut self.walker,
            policy: &self.policy,
        }
    }
}

/// The [`IntoWalker`] shape of a [`WalkWithContextPolicy`] (by value or `&mut`).
#[doc(hidden)]
pub struct ByPolicy;

impl<'a, W: VisitDispatch, P: ContextPolicy<W>> IntoWalker<ByPolicy>
    for &'a mut WalkWithContextPolicy<W, P>
{
    type Walker = PolicyWalk<'a, W, P>;
    #[inline]
    fn into_walker(self) -> PolicyWalk<'a, W, P> {
        self.borrowed()
    }
}

impl<W: VisitDispatch, P: ContextPolicy<W>> IntoWalker<ByPolicy> for WalkWithContextPolicy<W, P> {
    type Walker = OwnedPolicyWalk<W, P>;
    #[inline]
    fn into_walker(self) -> OwnedPolicyWalk<W, P> {
        OwnedPolicyWalk(self)
    }
}

/// A [`WalkWithContextPolicy`] borrowed for one walk: the engine's dispatch, whose descent is
/// the policy.
#[doc(hidden)]
pub struct PolicyWalk<'a, W, P> {
    walker: &'a mut W,
    policy: &'a P,
}

impl<W: VisitDispatch, P: ContextPolicy<W>> VisitDispatch for PolicyWalk<'_, W, P> {
    #[inline]
    fn dispatch_visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<WalkResult>> {
        self.walker.dispatch_visit(value, def_region_kind)
    }

    #[inline(always)]
    fn has_custom_descent(&self) -> bool {
        true
    }

    fn walk_default_children(
        &mut self,
        order: WalkOrder,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let policy = self.policy;
        let mut descent = WalkDescent { walk: self, order };
        run_policy(policy, &mut descent, value, def_region_kind)
    }
}

/// A [`WalkWithContextPolicy`] given to one walk by value.
#[doc(hidden)]
pub struct OwnedPolicyWalk<W, P>(WalkWithContextPolicy<W, P>);

impl<W: VisitDispatch, P: ContextPolicy<W>> VisitDispatch for OwnedPolicyWalk<W, P> {
    #[inline]
    fn dispatch_visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<WalkResult>> {
        self.0.walker.dispatch_visit(value, def_region_kind)
    }

    #[inline(always)]
    fn has_custom_descent(&self) -> bool {
        true
    }

    fn walk_default_children(
        &mut self,
        order: WalkOrder,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.0
            .borrowed()
            .walk_default_children(order, value, def_region_kind)
    }
}

/// A walk as its policy sees it: the handler as the state, `visit` walks a value, and after the
/// last policy the default children are walked.
struct WalkDescent<'w, 'a, W, P> {
    walk: &'w mut PolicyWalk<'a, W, P>,
    order: WalkOrder,
}

impl<W: VisitDispatch, P: ContextPolicy<W>> ContextDriver<W> for WalkDescent<'_, '_, W, P> {
    #[inline]
    fn state(&self) -> &W {
        self.walk.walker
    }

    #[inline]
    fn state_mut(&mut self) -> &mut W {
        self.walk.walker
    }

    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        walk_one(self.walk, self.order, value, kind)
    }

    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        walk_default_children_of(self.walk, self.order, value, kind)
    }
}

thread_local! {
    /// The region of the value a `#[dispatch(visit, policy = ..)]` visitor is visiting on this
    /// thread: its `default_visit_children` cannot leave a pattern region the value is in (the
    /// visitor's handler may ask for any region, as upstream's visitors may).
    static POLICY_VISIT_REGION: Cell<DefRegionKind> = const { Cell::new(DefRegionKind::None) };
}

/// What `#[dispatch(visit, policy = ..)]` expands to (`tvm_ffi::__private`; no semver
/// guarantee): marks the region of the value the visitor's `visit` runs for, until dropped.
#[doc(hidden)]
#[inline]
pub fn enter_policy_visit(def_region_kind: DefRegionKind) -> PolicyVisitRegion {
    let previous = POLICY_VISIT_REGION.with(|region| region.replace(def_region_kind));
    PolicyVisitRegion {
        previous,
        _not_send: PhantomData,
    }
}

/// Restores the region [`enter_policy_visit`] replaced.
#[doc(hidden)]
pub struct PolicyVisitRegion {
    previous: DefRegionKind,
    _not_send: PhantomData<*const ()>,
}

impl Drop for PolicyVisitRegion {
    fn drop(&mut self) {
        POLICY_VISIT_REGION.with(|region| region.set(self.previous));
    }
}

/// What `#[dispatch(visit, policy = ..)]` expands to (`tvm_ffi::__private`; no semver
/// guarantee): the visitor's `default_visit_children`, through `policy`, in `def_region_kind`
/// (inside a pattern region: the pattern).
#[doc(hidden)]
pub fn default_visit_with_policy<V: Visitor, P: ContextPolicy<V>>(
    visitor: &mut V,
    policy: &P,
    value: &VisitValue,
    def_region_kind: DefRegionKind,
) -> Result<Option<VisitInterrupt>> {
    let enclosing = POLICY_VISIT_REGION.with(Cell::get);
    let kind = nested_region(enclosing, def_region_kind);
    run_policy(policy, &mut DispatchDescent { visitor }, value, kind)
}

/// A `#[dispatch(visit, policy = ..)]` visitor as its policy sees it: the visitor as the state,
/// `visit` is its `visit`, and after the last policy its default children (not its own
/// `default_visit_children`, which would enter the policy again).
struct DispatchDescent<'v, V> {
    visitor: &'v mut V,
}

impl<V: Visitor> ContextDriver<V> for DispatchDescent<'_, V> {
    #[inline]
    fn state(&self) -> &V {
        self.visitor
    }

    #[inline]
    fn state_mut(&mut self) -> &mut V {
        self.visitor
    }

    fn visit_value(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.visitor.visit(value, kind)
    }

    fn visit_default_children(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        visit_default_children_of(self.visitor, value, kind)
    }
}
