//! How callbacks become the handlers of a traversal, once for every traversal: the marker types
//! of the callback shapes ([`shapes`], [`mutate_shapes`]), one bare callback or a tuple of them
//! as a handler ([`SingleLink`], [`LinkChain`]), and the macros that implement a traversal's
//! link traits for each shape and each tuple size (`link_handlers!` for the walk and the map,
//! `context_links!` for the callbacks of visitors and mutators that take a context).
//!
//! The marker types only tell trait impls apart, so that a closure's own argument types choose
//! how it is called; the link traits themselves belong to their traversals (`WalkLink` in
//! `visit.rs`, `MapLink` in `mutate.rs`, ...), which this file does not name.
use std::marker::PhantomData;

/// The shapes of callback a walk or map accepts, as marker types: they only tell the trait
/// impls apart, so that a closure's own argument types choose how it is called. Every shape in
/// one chain:
///
/// ```
/// use tvm_ffi::builtin::AnyObject;
/// use tvm_ffi::structural::{self, DefRegionKind, VisitValue, WalkOrder, WalkResult};
/// use tvm_ffi::{dispatch, Any, Array, ObjectRef};
/// struct Strings(usize);
/// #[dispatch(walk)]
/// impl Strings {
///     fn walk_string(&mut self, _: tvm_ffi::String) -> WalkResult {
///         self.0 += 1;
///         WalkResult::Advance
///     }
/// }
/// let root = Array::new([Any::new(1i64), Any::new(2.5), Any::new("s"), Any::new(true)]).unwrap();
/// let mut strings = Strings(0);
/// let (mut ints, mut floats, mut arrays, mut objects, mut bools, mut rest) = (0, 0, 0, 0, 0, 0);
/// structural::walk(
///     &root,
///     (
///         |_: i64| { ints += 1; WalkResult::Advance },                              // Owned
///         |_: f64, _: DefRegionKind| { floats += 1; WalkResult::Advance },          // OwnedKind
///         &mut strings,                                                             // Dispatch
///         |_: &tvm_ffi::builtin::ArrayObj| { arrays += 1; WalkResult::Advance },    // Node
///         |_: &AnyObject, _: DefRegionKind| { objects += 1; WalkResult::Advance },  // NodeKind
///         |_: bool| { bools += 1; WalkResult::Advance },                            // Owned
///         |_: &VisitValue| { rest += 1; WalkResult::Advance },                      // CatchAll
///     ), // a tuple: Chain
///     WalkOrder::PreOrder,
/// )
/// .unwrap();
/// assert_eq!((ints, floats, strings.0, arrays, objects, bools, rest), (1, 1, 1, 1, 0, 1, 0));
/// ```
#[doc(hidden)] // machinery the compiler picks; users never name it
pub mod shapes {
    use std::marker::PhantomData;

    /// `|value: T|`, any `T` a value can be cast to
    /// ([`VisitValue::cast`](crate::structural::VisitValue::cast)). An example is in the [module
    /// docs](self).
    pub struct Owned<T>(PhantomData<fn(T)>);
    /// `|value: T, kind: DefRegionKind|`. An example is in the [module docs](self).
    pub struct OwnedKind<T>(PhantomData<fn(T)>);
    /// `|node: &T|`, the payload of an object of type `T` or a subtype. An example is in the
    /// [module docs](self).
    pub struct Node<T>(PhantomData<fn(&T)>);
    /// `|node: &T, kind: DefRegionKind|`. An example is in the [module docs](self).
    pub struct NodeKind<T>(PhantomData<fn(&T)>);
    /// `|value: &VisitValue|`: every value. An example is in the [module docs](self).
    pub struct CatchAll;
    /// `|value: &VisitValue, kind: DefRegionKind|`. An example is in the [module docs](self).
    pub struct CatchAllKind;
    /// `&mut V` of a `#[dispatch(..)]` type. An example is in the [module docs](self).
    pub struct Dispatch;
    /// A tuple of links, tried in order. An example is in the [module docs](self).
    pub struct Chain<M>(PhantomData<M>);
}

/// The marker types of the mutate callbacks and `#[dispatch(mutate)]` handlers that take a
/// [`MutateValue`](crate::structural::MutateValue) (they only tell the impls of the link traits
/// apart).
#[doc(hidden)] // machinery the compiler picks; users never name it
pub mod mutate_shapes {
    use std::marker::PhantomData;

    /// A callback taking `MutateValue<'_, T>` (and, for a callback mutator, its context).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, MutateContext, MutateValue};
    /// let out = structural::mutate(2i64, |value: MutateValue<'_, i64>, _: &mut MutateContext<'_>| {
    ///     value.cast::<i64>().unwrap() * 2
    /// })
    /// .unwrap();
    /// assert_eq!(out.cast::<i64>().unwrap(), 4);
    /// ```
    pub struct Handle<T>(PhantomData<fn(T)>);

    /// A `#[dispatch(mutate)]` handler taking `MutateValue<'_, T>` and a trailing
    /// [`DefRegionKind`](crate::structural::DefRegionKind).
    ///
    /// ```
    /// use tvm_ffi::structural::{self, DefRegionKind, MutateValue};
    /// use tvm_ffi::dispatch;
    /// struct Kinds(Vec<DefRegionKind>);
    /// #[dispatch(mutate)]
    /// impl Kinds {
    ///     fn mutate_int(&mut self, value: MutateValue<'_, i64>, kind: DefRegionKind) -> i64 {
    ///         self.0.push(kind);
    ///         value.cast::<i64>().unwrap()
    ///     }
    /// }
    /// let mut kinds = Kinds(Vec::new());
    /// structural::mutate(1i64, &mut kinds).unwrap();
    /// assert_eq!(kinds.0, [DefRegionKind::None]);
    /// ```
    pub struct HandleKind<T>(PhantomData<fn(T)>);
}

/// One bare callback as a handler: a walk's `VisitDispatch`, a map's `MapDispatch`.
#[doc(hidden)]
pub struct SingleLink<F, M> {
    pub(crate) link: F,
    _shape: PhantomData<fn(M)>,
}

impl<F, M> SingleLink<F, M> {
    #[inline(always)]
    pub(crate) fn new(link: F) -> Self {
        SingleLink {
            link,
            _shape: PhantomData,
        }
    }
}

/// A tuple of links as one handler: the first link that takes a value runs.
#[doc(hidden)]
pub struct LinkChain<L, M> {
    pub(crate) links: L,
    _shapes: PhantomData<fn(M)>,
}

impl<L, M> LinkChain<L, M> {
    #[inline(always)]
    pub(crate) fn new(links: L) -> Self {
        LinkChain {
            links,
            _shapes: PhantomData,
        }
    }
}

/// Expands a macro once per tuple size from 1 to 12 (the longest chain a handler takes; a
/// tuple is itself a link, so longer chains nest): `for_each_tuple_size!([path::to::m] (args))`
/// expands `path::to::m!(args (L0, M0, 0), (L1, M1, 1), ..)`, with the link type, shape type
/// and index of each position.
macro_rules! for_each_tuple_size {
    ([$($m:tt)+] ($($args:tt)*)) => {
        $($m)+!($($args)* (L0, M0, 0));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6), (L7, M7, 7));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6), (L7, M7, 7), (L8, M8, 8));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6), (L7, M7, 7), (L8, M8, 8), (L9, M9, 9));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6), (L7, M7, 7), (L8, M8, 8), (L9, M9, 9), (L10, M10, 10));
        $($m)+!($($args)* (L0, M0, 0), (L1, M1, 1), (L2, M2, 2), (L3, M3, 3), (L4, M4, 4),
            (L5, M5, 5), (L6, M6, 6), (L7, M7, 7), (L8, M8, 8), (L9, M9, 9), (L10, M10, 10),
            (L11, M11, 11));
    };
}
pub(crate) use for_each_tuple_size;

/// Implements a traversal's link trait for every callback shape, for `&mut` its dispatch trait
/// and for tuples of links, and its handler trait for all of them: what makes a closure, a
/// `#[dispatch(..)]` type or a tuple of either a walk handler or a mapper. The walk and the map
/// differ only in the names and output given here:
///
/// ```text
/// link_handlers! {
///     // fn try_visit(&mut self, &Value, Region) -> Option<Result<Output>>
///     link: WalkLink::try_visit,
///     value: VisitValue,
///     region: DefRegionKind,
///     output: WalkResult,
///     // what a callback's return converts through
///     returns: IntoWalkResult::into_walk_result,
///     // fn dispatch_visit(&mut self, &Value, Region) -> Option<Result<Output>>
///     dispatch: VisitDispatch::dispatch_visit,
///     handler: IntoWalker::into_walker -> Walker,
/// }
/// ```
macro_rules! link_handlers {
    (
        link: $link:ident::$try:ident,
        value: $value:ty,
        region: $region:ty,
        output: $out:ty,
        returns: $returns:ident::$into_out:ident,
        dispatch: $dispatch:ident::$dispatch_fn:ident,
        handler: $handler:ident::$into_handler:ident -> $assoc:ident $(,)?
    ) => {
        $crate::traverse::link::link_handlers!(@callbacks
            [$link $try [$value] [$region] [$out] $returns $into_out]);

        impl<V: $dispatch> $link<$crate::traverse::link::shapes::Dispatch> for &mut V {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                (**self).$dispatch_fn(value, kind)
            }
        }

        impl<'v, V: $dispatch> $handler<$crate::traverse::link::shapes::Dispatch> for &'v mut V {
            type $assoc = &'v mut V;
            #[inline(always)]
            fn $into_handler(self) -> &'v mut V {
                self
            }
        }

        impl<F: $link<M>, M> $dispatch for $crate::traverse::link::SingleLink<F, M> {
            #[inline(always)]
            fn $dispatch_fn(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                self.link.$try(value, kind)
            }
        }

        $crate::traverse::link::link_handlers!(@single [$link $handler $into_handler $assoc]
            Owned<T> [T], OwnedKind<T> [T], Node<T> [T], NodeKind<T> [T],
            CatchAll [], CatchAllKind []);

        $crate::traverse::link::for_each_tuple_size!(
            [$crate::traverse::link::link_handlers]
            (@chain [$link $try [$value] [$region] [$out] $dispatch $dispatch_fn
                $handler $into_handler $assoc])
        );
    };

    // The six callback shapes: by value (`FromAny`), by node (`ObjectType`), every value;
    // each without and with the trailing region.
    (@callbacks [$link:ident $try:ident [$value:ty] [$region:ty] [$out:ty] $returns:ident
        $into_out:ident]) => {
        impl<F, T, O> $link<$crate::traverse::link::shapes::Owned<T>> for F
        where
            F: FnMut(T) -> O,
            T: for<'a> $crate::base::value::FromAny<'a>,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                _: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.cast::<T>().map(|v| self(v).$into_out())
            }
        }

        impl<F, T, O> $link<$crate::traverse::link::shapes::OwnedKind<T>> for F
        where
            F: FnMut(T, $region) -> O,
            T: for<'a> $crate::base::value::FromAny<'a>,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.cast::<T>().map(|v| self(v, kind).$into_out())
            }
        }

        impl<F, T, O> $link<$crate::traverse::link::shapes::Node<T>> for F
        where
            F: FnMut(&T) -> O,
            T: $crate::base::object::ObjectType,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                _: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.as_node::<T>().map(|v| self(v).$into_out())
            }
        }

        impl<F, T, O> $link<$crate::traverse::link::shapes::NodeKind<T>> for F
        where
            F: FnMut(&T, $region) -> O,
            T: $crate::base::object::ObjectType,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.as_node::<T>().map(|v| self(v, kind).$into_out())
            }
        }

        impl<F, O> $link<$crate::traverse::link::shapes::CatchAll> for F
        where
            F: FnMut(&$value) -> O,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                _: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                Some(self(value).$into_out())
            }
        }

        impl<F, O> $link<$crate::traverse::link::shapes::CatchAllKind> for F
        where
            F: FnMut(&$value, $region) -> O,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                Some(self(value, kind).$into_out())
            }
        }
    };

    // One bare callback of each shape as a handler.
    (@single [$link:ident $handler:ident $into_handler:ident $assoc:ident]
        $($shape:ident$(<$arg:ident>)? [$($param:ident),*]),*) => {$(
        impl<F $(, $param)*> $handler<$crate::traverse::link::shapes::$shape$(<$arg>)?> for F
        where
            F: $link<$crate::traverse::link::shapes::$shape$(<$arg>)?>,
        {
            type $assoc = $crate::traverse::link::SingleLink<
                F,
                $crate::traverse::link::shapes::$shape$(<$arg>)?,
            >;
            #[inline(always)]
            fn $into_handler(self) -> Self::$assoc {
                $crate::traverse::link::SingleLink::new(self)
            }
        }
    )*};

    // A tuple of links: a handler, and itself a link (so chains nest).
    (@chain [$link:ident $try:ident [$value:ty] [$region:ty] [$out:ty] $dispatch:ident
        $dispatch_fn:ident $handler:ident $into_handler:ident $assoc:ident]
        $(($l:ident, $m:ident, $index:tt)),+) => {
        impl<$($l: $link<$m>, $m),+> $dispatch
            for $crate::traverse::link::LinkChain<($($l,)+), ($($m,)+)>
        {
            #[inline(always)]
            fn $dispatch_fn(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                $(
                    if let Some(result) = self.links.$index.$try(value, kind) {
                        return Some(result);
                    }
                )+
                None
            }
        }
        impl<$($l: $link<$m>, $m),+> $link<$crate::traverse::link::shapes::Chain<($($m,)+)>>
            for ($($l,)+)
        {
            #[inline(always)]
            fn $try(
                &mut self,
                value: &$value,
                kind: $region,
            ) -> Option<$crate::base::error::Result<$out>> {
                $(
                    if let Some(result) = self.$index.$try(value, kind) {
                        return Some(result);
                    }
                )+
                None
            }
        }
        impl<$($l: $link<$m>, $m),+> $handler<$crate::traverse::link::shapes::Chain<($($m,)+)>>
            for ($($l,)+)
        {
            type $assoc = $crate::traverse::link::LinkChain<($($l,)+), ($($m,)+)>;
            #[inline(always)]
            fn $into_handler(self) -> Self::$assoc {
                $crate::traverse::link::LinkChain::new(self)
            }
        }
    };
}
pub(crate) use link_handlers;

/// Implements a callback link trait (the callbacks of a `VisitCallbacks` or `MutateCallbacks`,
/// which take the value and a context) for the shapes `Owned`, `Node` and `CatchAll` and for
/// tuples of links. Callback visitors and mutators differ only in the names given here:
///
/// ```text
/// context_links! {
///     // fn try_visit_with(&self, &Value, &mut Context<'_, S>) -> Option<Result<Output>>
///     link: VisitCallbackLink::try_visit_with,
///     value: VisitValue,
///     context: VisitContext,
///     output: Option<VisitInterrupt>,
///     // what a callback's return converts through
///     returns: IntoVisitOutcome::into_visit_outcome,
/// }
/// ```
macro_rules! context_links {
    (
        link: $link:ident::$try:ident,
        value: $value:ty,
        context: $context:ident,
        output: $out:ty,
        returns: $returns:ident::$into_out:ident $(,)?
    ) => {
        impl<S, F, T, O> $link<S, $crate::traverse::link::shapes::Owned<T>> for F
        where
            F: Fn(T, &mut $context<'_, S>) -> O,
            T: for<'a> $crate::base::value::FromAny<'a>,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &self,
                value: &$value,
                context: &mut $context<'_, S>,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.cast::<T>().map(|v| self(v, context).$into_out())
            }
        }

        impl<S, F, T, O> $link<S, $crate::traverse::link::shapes::Node<T>> for F
        where
            F: Fn(&T, &mut $context<'_, S>) -> O,
            T: $crate::base::object::ObjectType,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &self,
                value: &$value,
                context: &mut $context<'_, S>,
            ) -> Option<$crate::base::error::Result<$out>> {
                value.as_node::<T>().map(|v| self(v, context).$into_out())
            }
        }

        impl<S, F, O> $link<S, $crate::traverse::link::shapes::CatchAll> for F
        where
            F: Fn(&$value, &mut $context<'_, S>) -> O,
            O: $returns,
        {
            #[inline(always)]
            fn $try(
                &self,
                value: &$value,
                context: &mut $context<'_, S>,
            ) -> Option<$crate::base::error::Result<$out>> {
                Some(self(value, context).$into_out())
            }
        }

        $crate::traverse::link::for_each_tuple_size!(
            [$crate::traverse::link::context_links]
            (@chain [$link $try [$value] $context [$out]])
        );
    };

    // A tuple of links is a link: the first that takes the value runs.
    (@chain [$link:ident $try:ident [$value:ty] $context:ident [$out:ty]]
        $(($l:ident, $m:ident, $index:tt)),+) => {
        impl<S, $($l: $link<S, $m>, $m),+>
            $link<S, $crate::traverse::link::shapes::Chain<($($m,)+)>> for ($($l,)+)
        {
            #[inline(always)]
            fn $try(
                &self,
                value: &$value,
                context: &mut $context<'_, S>,
            ) -> Option<$crate::base::error::Result<$out>> {
                $(
                    if let Some(result) = self.$index.$try(value, context) {
                        return Some(result);
                    }
                )+
                None
            }
        }
    };
}
pub(crate) use context_links;
