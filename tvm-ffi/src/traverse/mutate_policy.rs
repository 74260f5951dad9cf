//! A structural map with context policies: [`MapWithContextPolicy`] runs a
//! [`MutContextPolicy`] around the default descent of each value a [`map`](super::mutate::map)
//! reaches, with the mapper as the policy's state. Reached through [`crate::structural`].
use std::borrow::BorrowMut;
use std::marker::PhantomData;

use super::mutate::{IntoMapper, MapDescent, MapDispatch, Mapper};
use super::mutate_callbacks::{run_policy, MutContextPolicy, MutateDriver};
use super::mutate_value::{mode_of, InplaceMode, MutateValue, Permit};
use super::visit::{DefRegionKind, WalkOrder};
use crate::base::error::Result;
use crate::base::value::{Any, AnyView};

/// A mapper (a [`MapDispatch`]: a `#[dispatch(map)]` type, callbacks made one with
/// [`IntoMapper::into_mapper`], ...) with a [`MutContextPolicy`] around the default descent of
/// every value, the mapper being the policy's state. Pass it, or `&mut` it, to
/// [`structural::map`](crate::structural::map): a value's map callback runs outside its
/// policy, its children inside (pre-order: the callback, then the policy around the
/// children; post-order: the policy around the children, then the callback). Policies see
/// plain values too (whose descent has no children).
///
/// ```
/// use tvm_ffi::builtin::ArrayObj;
/// use tvm_ffi::structural::{self, MapWithContextPolicy, MutContextPolicy, MutateContext};
/// use tvm_ffi::structural::{MutateValue, UnchangedOr, WalkOrder};
/// use tvm_ffi::{dispatch, Any, Array, Result};
/// #[derive(Default)]
/// struct Depths { depth: usize, seen: Vec<(i64, usize)> }
/// #[dispatch(map)]
/// impl Depths {
///     fn map_int(&mut self, v: i64) -> i64 {
///         self.seen.push((v, self.depth));
///         v
///     }
/// }
/// struct ArrayDepth;
/// impl MutContextPolicy<Depths> for ArrayDepth {
///     fn default_mutate(
///         &self,
///         value: MutateValue<'_>,
///         cx: &mut MutateContext<'_, Depths>,
///     ) -> Result<UnchangedOr<Any>> {
///         let array = value.as_node::<ArrayObj>().is_some() as usize;
///         cx.state_mut().depth += array;
///         let result = cx.default_maybe_inplace_mutate_result(value);
///         cx.state_mut().depth -= array;
///         result
///     }
/// }
/// let mut mapper = MapWithContextPolicy::new(Depths::default(), ArrayDepth);
/// let root = Array::new([Any::new(1i64), Any::new(Array::new([2i64]).unwrap())]).unwrap();
/// structural::map(root, &mut mapper, WalkOrder::PreOrder).unwrap();
/// assert_eq!(mapper.state().seen, [(1, 1), (2, 2)]);
/// assert_eq!(mapper.into_state().depth, 0);
/// ```
pub struct MapWithContextPolicy<D, P> {
    mapper: D,
    policy: P,
}

impl<D: MapDispatch, P: MutContextPolicy<D>> MapWithContextPolicy<D, P> {
    /// `mapper` with `policy` (one policy, or a pair `(outer, inner)`). An example is on
    /// [`MapWithContextPolicy`].
    pub fn new(mapper: D, policy: P) -> Self {
        MapWithContextPolicy { mapper, policy }
    }
}

impl<D, P> MapWithContextPolicy<D, P> {
    /// The mapper (and its state). An example is on [`MapWithContextPolicy`].
    #[inline]
    pub fn state(&self) -> &D {
        &self.mapper
    }

    /// The mapper, mutably (between maps).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefaultMutContextPolicy, MapWithContextPolicy, WalkOrder};
    /// use tvm_ffi::dispatch;
    /// struct Count(usize);
    /// #[dispatch(map)]
    /// impl Count {
    ///     fn map_int(&mut self, v: i64) -> i64 {
    ///         self.0 += 1;
    ///         v
    ///     }
    /// }
    /// let mut mapper = MapWithContextPolicy::new(Count(0), DefaultMutContextPolicy);
    /// structural::map(1i64, &mut mapper, WalkOrder::PostOrder).unwrap();
    /// mapper.state_mut().0 += 10;
    /// assert_eq!(mapper.into_state().0, 11);
    /// ```
    #[inline]
    pub fn state_mut(&mut self) -> &mut D {
        &mut self.mapper
    }

    /// The mapper, taking this apart. An example is on [`MapWithContextPolicy`].
    #[inline]
    pub fn into_state(self) -> D {
        self.mapper
    }
}

/// The marker of [`IntoMapper`] for a [`MapWithContextPolicy`] (it only tells the impls
/// apart).
#[doc(hidden)]
pub enum ByPolicy {}

/// The mapper alone is its [`MapDispatch`] (a chain taking it as a link would leave the policy
/// out); [`map`](crate::structural::map) runs the policy too.
impl<D: MapDispatch, P: MutContextPolicy<D>> IntoMapper<ByPolicy> for MapWithContextPolicy<D, P> {
    type Mapper = D;
    fn into_mapper(self) -> D {
        self.mapper
    }
    fn map_root(self, root: Any, order: WalkOrder) -> Result<Any> {
        let descent = PolicyDescent::<P, D>::new(&self.policy);
        Mapper::new(self.mapper, order, &descent).run(root)
    }
}

impl<'a, D: MapDispatch, P: MutContextPolicy<D>> IntoMapper<ByPolicy>
    for &'a mut MapWithContextPolicy<D, P>
{
    type Mapper = &'a mut D;
    fn into_mapper(self) -> &'a mut D {
        &mut self.mapper
    }
    fn map_root(self, root: Any, order: WalkOrder) -> Result<Any> {
        let descent = PolicyDescent::<P, D>::new(&self.policy);
        Mapper::new(&mut self.mapper, order, &descent).run(root)
    }
}

/// The default descent of a map through a policy over state `S` (the mapper, by value or
/// `&mut`).
struct PolicyDescent<'q, P, S> {
    policy: &'q P,
    _state: PhantomData<fn(&mut S)>,
}

impl<'q, P, S> PolicyDescent<'q, P, S> {
    fn new(policy: &'q P) -> Self {
        PolicyDescent {
            policy,
            _state: PhantomData,
        }
    }
}

impl<E, P, S> MapDescent<E> for PolicyDescent<'_, P, S>
where
    E: MapDispatch + BorrowMut<S>,
    P: MutContextPolicy<S>,
{
    const DIRECT: bool = false;

    fn descend(
        &self,
        engine: &mut Mapper<'_, E, Self>,
        value: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any> {
        if P::PASS_THROUGH {
            return engine.default_descent(value, kind, permit);
        }
        // SAFETY: `value`'s owner keeps it alive through the call; the mode is what `permit`
        // gives it now.
        let handle = unsafe { MutateValue::new(value, mode_of(value, permit)) };
        run_policy(
            &mut MapDriver {
                engine,
                _state: PhantomData,
            },
            self.policy,
            handle,
            kind,
        )
    }
}

/// The end of the policies of a map: the engine's own descent, the mapper as the state.
struct MapDriver<'e, 'p, 'q, E, P, S> {
    engine: &'e mut Mapper<'p, E, PolicyDescent<'q, P, S>>,
    _state: PhantomData<fn(&mut S)>,
}

impl<E, P, S> MutateDriver<S> for MapDriver<'_, '_, '_, E, P, S>
where
    E: MapDispatch + BorrowMut<S>,
    P: MutContextPolicy<S>,
{
    fn state(&self) -> &S {
        self.engine.dispatch.borrow()
    }
    fn state_mut(&mut self) -> &mut S {
        self.engine.dispatch.borrow_mut()
    }
    fn mutate_borrowed(&mut self, value: &AnyView<'_>, kind: DefRegionKind) -> Result<Any> {
        self.engine.map_value(value, kind, Permit::Copy)
    }
    fn mutate_owned(&mut self, value: Any, kind: DefRegionKind, mode: InplaceMode) -> Result<Any> {
        let permit = if mode == InplaceMode::Allow {
            Permit::InPlace
        } else {
            Permit::Copy
        };
        self.engine.map_value(&value.view(), kind, permit)
    }
    fn default_mutate(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any> {
        let permit = value.permit(InplaceMode::Allow);
        self.engine.default_descent(value.view(), kind, permit)
    }
}
