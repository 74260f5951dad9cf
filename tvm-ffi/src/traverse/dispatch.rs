//! What `#[dispatch(walk | visit | map | mutate)]` expands to (through `tvm_ffi::__private`; no
//! semver guarantee): each handler method of the block runs as one link of its mode, tried in
//! source order; a mutate handler taking a [`MutateValue`] also receives the in-place
//! permission the engine granted ([`MutateLink`]).
use super::link::mutate_shapes::{Handle, HandleKind};
use super::link::shapes::{CatchAll, CatchAllKind, Node, NodeKind, Owned, OwnedKind};
use super::mutate::MapLink;
use super::mutate_value::{InplaceMode, IntoMapResult, MapValue, MutateValue};
use super::visit::{
    DefRegionKind, IntoVisitOutcome, VisitInterrupt, VisitValue, WalkLink, WalkResult,
};
use crate::base::error::Result;
use crate::base::value::{Any, FromAny};

/// What `#[dispatch(walk)]` expands to (`tvm_ffi::__private`; no semver guarantee).
#[doc(hidden)]
#[inline(always)]
pub fn try_visit_link<M, L: WalkLink<M>>(
    mut link: L,
    value: &VisitValue,
    def_region_kind: DefRegionKind,
) -> Option<Result<WalkResult>> {
    link.try_visit(value, def_region_kind)
}

/// What `#[dispatch(visit)]` expands to (`tvm_ffi::__private`; no semver guarantee): a visitor
/// handler's outcome as the walk result a link carries.
#[doc(hidden)]
#[inline(always)]
pub fn visit_outcome_as_walk<O: IntoVisitOutcome>(outcome: O) -> Result<WalkResult> {
    Ok(match outcome.into_visit_outcome()? {
        None => WalkResult::Advance,
        Some(interrupt) => WalkResult::InterruptWith(interrupt.value),
    })
}

/// What `#[dispatch(visit)]` expands to (`tvm_ffi::__private`; no semver guarantee): runs a
/// visitor handler's link, its walk result back as the visitor's outcome.
#[doc(hidden)]
#[inline(always)]
pub fn try_visitor_link<M, L: WalkLink<M>>(
    mut link: L,
    value: &VisitValue,
    def_region_kind: DefRegionKind,
) -> Option<Result<Option<VisitInterrupt>>> {
    link.try_visit(value, def_region_kind)
        .map(|result| match result? {
            WalkResult::Advance | WalkResult::Skip => Ok(None),
            WalkResult::Interrupt => Ok(Some(VisitInterrupt { value: Any::none() })),
            WalkResult::InterruptWith(value) => Ok(Some(VisitInterrupt { value })),
        })
}

/// What `#[dispatch(map)]` expands to (`tvm_ffi::__private`; no semver guarantee).
#[doc(hidden)]
#[inline(always)]
pub fn try_map_link<M, L: MapLink<M>>(
    mut link: L,
    value: &MapValue,
    def_region_kind: DefRegionKind,
) -> Option<Result<Any>> {
    link.try_map(value, def_region_kind)
}

/// One handler of a `#[dispatch(mutate)]` type: a map link (see [`MapLink`]) or a handler
/// taking a [`MutateValue`], which receives the engine's in-place permission `mode`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a structural mutate handler",
    label = "not a mutate handler",
    note = "a mutate handler takes the value (`i64`, `Array<T>`, `ObjectRef<T>`, `&NodeObj`, `&MapValue`, `MutateValue<'_, T>`, ...) and optionally a trailing `DefRegionKind`, and returns its replacement (an `Any`, `Unchanged`, an `UnchangedOr<T>` or any value convertible into an `Any`) or a `Result` of one"
)]
pub trait MutateLink<M> {
    /// Runs the link on `value` if it takes it.
    fn try_mutate(
        &mut self,
        value: &MapValue,
        mode: InplaceMode,
        def_region_kind: DefRegionKind,
    ) -> Option<Result<Any>>;
}

macro_rules! mutate_link_via_map_link {
    ($($shape:ty => [$($param:ident),*]),*) => {$(
        impl<L: MapLink<$shape> $(, $param)*> MutateLink<$shape> for L {
            #[inline(always)]
            fn try_mutate(
                &mut self,
                value: &MapValue,
                _: InplaceMode,
                kind: DefRegionKind,
            ) -> Option<Result<Any>> {
                self.try_map(value, kind)
            }
        }
    )*};
}
mutate_link_via_map_link!(
    Owned<T> => [T],
    OwnedKind<T> => [T],
    Node<T> => [T],
    NodeKind<T> => [T],
    CatchAll => [],
    CatchAllKind => []
);

impl<F, T, O> MutateLink<Handle<T>> for F
where
    F: FnMut(MutateValue<'_, T>) -> O,
    T: for<'a> FromAny<'a>,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate(
        &mut self,
        value: &MapValue,
        mode: InplaceMode,
        _: DefRegionKind,
    ) -> Option<Result<Any>> {
        value.cast::<T>()?;
        // SAFETY: `value` outlives the call, which the handle (higher-ranked) cannot outlive;
        // `mode` is what the engine granted this value.
        let handle = unsafe { MutateValue::new(value.view(), mode) };
        Some(self(handle).into_map_result())
    }
}

impl<F, T, O> MutateLink<HandleKind<T>> for F
where
    F: FnMut(MutateValue<'_, T>, DefRegionKind) -> O,
    T: for<'a> FromAny<'a>,
    O: IntoMapResult,
{
    #[inline(always)]
    fn try_mutate(
        &mut self,
        value: &MapValue,
        mode: InplaceMode,
        kind: DefRegionKind,
    ) -> Option<Result<Any>> {
        value.cast::<T>()?;
        // SAFETY: as for `Handle`.
        let handle = unsafe { MutateValue::new(value.view(), mode) };
        Some(self(handle, kind).into_map_result())
    }
}

/// What `#[dispatch(mutate)]` expands to (`tvm_ffi::__private`; no semver guarantee).
#[doc(hidden)]
#[inline(always)]
pub fn try_mutate_link<M, L: MutateLink<M>>(
    mut link: L,
    value: &MapValue,
    mode: InplaceMode,
    def_region_kind: DefRegionKind,
) -> Option<Result<Any>> {
    link.try_mutate(value, mode, def_region_kind)
}
