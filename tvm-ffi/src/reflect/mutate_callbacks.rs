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

use super::mutate::{
    user_dispatch, InplaceValue, IntoMapResult, MapValue, Mutator, Permit, UnchangedOr,
};
use super::visit::shapes::{CatchAll, Chain, Node, Owned};
use super::visit::DefRegionKind;
use crate::base::error::Result;
use crate::base::object::ObjectType;
use crate::base::value::{Any, FromAny, IntoAny};
use crate::call::function::IntoArg;

/// What a running callback mutator offers a [`MutateContext`]: its state and its recursion.
trait MutateDriver<S> {
    fn state(&self) -> &S;
    fn state_mut(&mut self) -> &mut S;
    fn mutate_borrowed(&mut self, value: &Any, kind: DefRegionKind) -> Result<Any>;
    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind) -> Result<Any>;
    fn default_mutate_value(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any>;
}

/// The state and the recursion a mutate callback reaches: the user state of its
/// [`MutateCallbacks`] (`()` for bare callbacks, the default), the region its value was reached
/// in, and the mutation of children, which runs the callbacks again.
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

    /// The default children of `value` mutated through the callbacks (copy-on-write: `value`
    /// itself when none changed, a new copy otherwise, never an update in place). An example
    /// is on [`MutateContext`].
    pub fn default_mutate(&mut self, value: &MapValue) -> Result<Any> {
        let kind = self.def_region_kind;
        self.driver.default_mutate_value(value, kind)
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
        let (before, after) = (value.view().as_raw(), mutated.as_raw());
        // SAFETY: reading the 64 bits of the value union, whatever member is active (every
        // member is plain data at most 64 bits wide).
        let same = before.type_index == after.type_index
            && unsafe { before.value.v_int64 == after.value.v_int64 };
        Ok(if same {
            UnchangedOr::Unchanged
        } else {
            UnchangedOr::Changed(mutated)
        })
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
        let holder = child.into_holder()?;
        let view = A::view(&holder);
        let owned = view.to_owned()?;
        let kind = self.def_region_kind;
        self.driver.mutate_borrowed(&owned, kind)
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
        self.driver.mutate_owned(Any::new(child), kind)
    }
}

/// One link of a callback mutator over state `S`: a callback of one of the
/// [`shapes`](super::visit::shapes) followed by `&mut MutateContext<'_, S>` and returning the
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
pub trait MutateCallbackLink<S, M> {
    /// Runs the link on `value` if it takes it.
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>>;
}

impl<S, F, T, O> MutateCallbackLink<S, Owned<T>> for F
where
    F: Fn(T, &mut MutateContext<'_, S>) -> O,
    T: for<'a> FromAny<'a>,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>> {
        value
            .cast::<T>()
            .map(|v| self(v, context).into_map_result())
    }
}

impl<S, F, T, O> MutateCallbackLink<S, Node<T>> for F
where
    F: Fn(&T, &mut MutateContext<'_, S>) -> O,
    T: ObjectType,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>> {
        value
            .as_node::<T>()
            .map(|v| self(v, context).into_map_result())
    }
}

impl<S, F, O> MutateCallbackLink<S, CatchAll> for F
where
    F: Fn(&MapValue, &mut MutateContext<'_, S>) -> O,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate_with(
        &self,
        value: &MapValue,
        context: &mut MutateContext<'_, S>,
    ) -> Option<Result<Any>> {
        Some(self(value, context).into_map_result())
    }
}

macro_rules! chain_mutate_link {
    ($(($link:ident, $shape:ident, $index:tt)),+) => {
        impl<S, $($link: MutateCallbackLink<S, $shape>, $shape),+>
            MutateCallbackLink<S, Chain<($($shape,)+)>> for ($($link,)+)
        {
            #[inline(always)]
            fn try_mutate_with(
                &self,
                value: &MapValue,
                context: &mut MutateContext<'_, S>,
            ) -> Option<Result<Any>> {
                $(
                    if let Some(result) = self.$index.try_mutate_with(value, context) {
                        return Some(result);
                    }
                )+
                None
            }
        }
    };
}
chain_mutate_link!((L0, M0, 0));
chain_mutate_link!((L0, M0, 0), (L1, M1, 1));
chain_mutate_link!((L0, M0, 0), (L1, M1, 1), (L2, M2, 2));
chain_mutate_link!((L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3));
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6),
    (L7, M7, 7)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6),
    (L7, M7, 7),
    (L8, M8, 8)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6),
    (L7, M7, 7),
    (L8, M8, 8),
    (L9, M9, 9)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6),
    (L7, M7, 7),
    (L8, M8, 8),
    (L9, M9, 9),
    (L10, M10, 10)
);
chain_mutate_link!(
    (L0, M0, 0),
    (L1, M1, 1),
    (L2, M2, 2),
    (L3, M3, 3),
    (L4, M4, 4),
    (L5, M5, 5),
    (L6, M6, 6),
    (L7, M7, 7),
    (L8, M8, 8),
    (L9, M9, 9),
    (L10, M10, 10),
    (L11, M11, 11)
);

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
pub struct MutateCallbacks<S, L, M> {
    state: S,
    links: L,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: MutateCallbackLink<S, M>, M> MutateCallbacks<S, L, M> {
    /// A mutator of `links` over `state`. An example is on [`MutateContext`].
    pub fn new(state: S, links: L) -> Self {
        MutateCallbacks {
            state,
            links,
            _shapes: PhantomData,
        }
    }
}

impl<S, L, M> MutateCallbacks<S, L, M> {
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

/// A running callback mutator: the state borrowed mutably, the links shared (they are `Fn`).
struct Driver<'v, S, L, M> {
    state: &'v mut S,
    links: &'v L,
    _shapes: PhantomData<fn(M)>,
}

impl<S, L: MutateCallbackLink<S, M>, M> Mutator for Driver<'_, S, L, M> {
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        let links = self.links;
        let mut context = MutateContext {
            driver: self,
            def_region_kind,
        };
        match links.try_mutate_with(value, &mut context) {
            Some(result) => result,
            None => self.default_mutate(value, def_region_kind),
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
        };
        match links.try_mutate_with(value.as_value(), &mut context) {
            Some(result) => result,
            None => self.default_maybe_inplace_mutate(value, def_region_kind),
        }
    }
}

impl<S, L: MutateCallbackLink<S, M>, M> MutateDriver<S> for Driver<'_, S, L, M> {
    #[inline]
    fn state(&self) -> &S {
        self.state
    }

    #[inline]
    fn state_mut(&mut self) -> &mut S {
        self.state
    }

    fn mutate_borrowed(&mut self, value: &Any, kind: DefRegionKind) -> Result<Any> {
        self.mutate_child(value, kind)
    }

    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind) -> Result<Any> {
        self.maybe_inplace_mutate_child(value, kind)
    }

    fn default_mutate_value(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
        Mutator::default_mutate(self, value, kind)
    }
}

impl<S, L: MutateCallbackLink<S, M>, M> Mutator for MutateCallbacks<S, L, M> {
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        let mut driver = Driver {
            state: &mut self.state,
            links: &self.links,
            _shapes: PhantomData,
        };
        driver.mutate(value, def_region_kind)
    }

    fn maybe_inplace_mutate(
        &mut self,
        value: InplaceValue<'_>,
        def_region_kind: DefRegionKind,
    ) -> Result<Any> {
        let mut driver = Driver {
            state: &mut self.state,
            links: &self.links,
            _shapes: PhantomData,
        };
        driver.maybe_inplace_mutate(value, def_region_kind)
    }
}

/// The shapes of mutator [`structural::mutate`](mutate) accepts, as marker
/// types (they only tell the impls of [`IntoMutator`] apart).
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
