//! Upstream's Rust tests of structural walk, visit, map and mutate as the crate `tvm-ffi` 0.1.15
//! (crates.io) ships them (`tests/test_structural_visit.rs`,
//! `tests/test_structural_visitor_alignment.rs`, `tests/test_structural_mutate.rs`), translated
//! one to one to this SDK's API with the upstream test names kept (the mutate tests in the module
//! `structural_mutate`: two of their names are visit test names too). `upstream_structural.rs`
//! holds the tests of the older versions of the same files (apache/tvm-ffi's git main,
//! `rust/tvm-ffi` 0.1.0-alpha.0) that are not here under the same name.
//!
//! Spelling of the translations (as in `upstream_structural.rs`):
//! - `structural_walk` / `structural_visit` are `structural::{walk, visit}`, `StructuralView`
//!   is `structural::VisitValue`, `StructuralVisitor` is `structural::Visitor`;
//!   `#[dispatch(walk)]` and `#[dispatch(visit)]` are `tvm_ffi::dispatch` with the same kinds;
//! - upstream's `&Object` (any object's payload) is `&AnyObject`; `Array::new(vec)` returns a
//!   `Result` here (the `array` helper unwraps it); an interrupt's payload is read with
//!   `Any::cast`; `DLDataType` is `DataType`, `DLDevice` is `Device`, `get_type_attr` is
//!   `reflection::type_attr`, `FieldGetter` is `reflection::FieldGetter` (its `get` takes the
//!   object reference);
//! - upstream walks containers through the runtime's registered `__s_visit__` hooks (`ffi.Array`,
//!   `ffi.Map`); this SDK walks them in Rust, with the same children (map values, not keys) and
//!   the same error paths;
//! - the tests that build C++ `testing.TestObjectBase` through `ffi.MakeObjectFromPackedArgs`
//!   (and `testing.TestNonCopyable`) get the same reflected fields from Rust types of this file
//!   (as in `upstream_match.rs`): the test binaries here do not link the C++ testing library
//!   (one test loads it, below);
//!   upstream's runtime globals (`ffi.List`, `ffi.Dict`, `ffi.ArrayGetItem`, ...) are called
//!   through this SDK's `List`, `Dict` and `Array`, which call the same globals.
//!
//! Translated: `test_structural_visit.rs`: all 51 tests (upstream's callback visitors are
//! `structural::{VisitCallbacks, VisitContext}`, bare callbacks go to `structural::visit` as
//! they are; its context policies are `structural::{ContextPolicy, WalkWithContextPolicy}`,
//! `VisitCallbacks::with_policy` and `#[dispatch(visit, policy = ..)]`);
//! `test_structural_visitor_alignment.rs`: both tests. Upstream's C++ fixture
//! `testing.make_visit_region_graph(false)` (`testing.TestVisitRegions`) is the Rust type
//! `TestVisitRegions` of this file; `testing.make_visit_region_graph(true)` (a C++
//! `testing.TestVisitHook`, whose Function-valued `__s_visit__` visits a C++
//! `testing.TestVisitRegions`) is the C++ one, from the wheel's `libtvm_ffi_testing` (loaded by
//! the test that uses it): `policy_regions_compose_with_field_flags_and_function_hooks` runs on
//! both, as upstream's.
//!
//! `test_structural_mutate.rs`: all 49 tests translated (the module `structural_mutate`;
//! upstream's callback mutators are `structural::{MutateCallbacks, MutateContext}`, bare
//! callbacks go to `structural::mutate` as they are; a `#[dispatch(mutate)]` handler takes a
//! trailing `DefRegionKind` instead of upstream's `&mut Mutator` context and recurses through the
//! type's own `Mutator` methods, e.g. `ctx.maybe_inplace_mutate_with_mode(self, ..)` is
//! `self.maybe_inplace_mutate_child_with_mode(..)` and `ctx.default_mutate_with_mode_result(self,
//! value, mode)` is `self.default_maybe_inplace_mutate_with_mode_result(value, kind, mode)`; the
//! in-place permission such a handler reads from its context it reads from its
//! `MutateValue<'_, T>` argument; `testing.TestObjectPtrHolder` and the graph of
//! `testing.make_visit_region_graph(false)` are Rust types of the module). An error's path is checked
//! as upstream checks it, in the runtime's `ffi.VisitErrorContext` (`FindAccessPaths`), and in
//! this SDK's backtrace frames too.
use std::cell::{Cell, RefCell};

use tvm_ffi::builtin::{AnyObject, ArrayObj, FunctionObj, MapObj};
use tvm_ffi::reflection::FieldGetter;
use tvm_ffi::structural::{
    self, ContextPolicy, DefRegionKind, DefaultContextPolicy, DefaultMutContextPolicy, InplaceMode,
    InplaceValue, IntoMapper, MapDispatch, MapValue, MapWithContextPolicy, MutContextPolicy,
    MutateCallbacks, MutateContext, MutateValue, Mutator, Unchanged, UnchangedOr, VarRemap,
    VisitCallbacks, VisitContext, VisitInterrupt, VisitValue, Visitor, WalkOrder, WalkResult,
    WalkWithContextPolicy,
};
use tvm_ffi::{
    dispatch, reflection, sys, Any, Array, DataType, Dict, Error, ErrorKind, Function, List, Map,
    ObjectRef, Result, String as FfiString,
};

fn runtime_error(message: &str) -> Error {
    Error::runtime_error(message)
}

fn array<T: tvm_ffi::TryIntoAny>(items: impl IntoIterator<Item = T>) -> Array<T> {
    Array::new(items).unwrap()
}

/// Upstream's C++ `testing.TestObjectBase`, defined in Rust: its three reflected fields (its
/// `Clone` is its shallow copy, as the C++ type's copy constructor).
#[derive(tvm_ffi::Object, Clone)]
#[ffi_type(key = "upstream_structural_0115.TestObjectBase", structural = "tree")]
#[repr(C)]
pub struct TestObjectBase {
    pub v_i64: i64,
    pub v_f64: f64,
    pub v_str: FfiString,
}

// ---------------------------------------------------------------------------------------------
// test_structural_visit.rs
// ---------------------------------------------------------------------------------------------

#[test]
fn composed_policies_share_array_scope_with_visit_and_walk_callbacks() {
    #[derive(Default)]
    struct CollectIntegers {
        depth: usize,
        integers: Vec<(i64, usize)>,
        descent_depths: Vec<usize>,
    }

    impl CollectIntegers {
        fn record(&mut self, value: i64) {
            self.integers.push((value, self.depth));
        }
    }

    // The outer policy opens a scope around an array's children, whatever the callbacks do
    // with the depth it sets.
    struct ArrayScope;

    impl ContextPolicy<CollectIntegers> for ArrayScope {
        fn default_visit(
            &self,
            value: &VisitValue,
            visitor: &mut VisitContext<'_, CollectIntegers>,
        ) -> Result<Option<VisitInterrupt>> {
            if value.cast::<Array<Any>>().is_none() {
                return visitor.visit_children();
            }
            let outer_depth = visitor.state().depth;
            visitor.state_mut().depth = outer_depth + 1;
            // Continues with RecordDescent, not directly with the children.
            let result = visitor.visit_children();
            visitor.state_mut().depth = outer_depth;
            result
        }
    }

    // The inner policy sees the scope ArrayScope set; its continuation reaches the default
    // children, whose visits run the whole traversal again.
    struct RecordDescent;

    impl ContextPolicy<CollectIntegers> for RecordDescent {
        fn default_visit(
            &self,
            _value: &VisitValue,
            visitor: &mut VisitContext<'_, CollectIntegers>,
        ) -> Result<Option<VisitInterrupt>> {
            let state = visitor.state_mut();
            state.descent_depths.push(state.depth);
            visitor.visit_children()
        }
    }

    // [1, [2, 3], 4]: the last sibling sees the outer depth restored.
    let root = array(vec![
        Any::new(1i64),
        Any::new(array(vec![2i64, 3])),
        Any::new(4i64),
    ]);
    let expected = vec![(1, 1), (2, 2), (3, 2), (4, 1)];

    let mut visitor = VisitCallbacks::new(
        CollectIntegers::default(),
        |value: i64, visitor: &mut VisitContext<'_, CollectIntegers>| {
            visitor.state_mut().record(value);
            // A matched callback owns the recursion: an integer has none.
        },
    )
    .with_policy((ArrayScope, RecordDescent));
    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(visitor.state().integers, expected);
    assert_eq!(visitor.state().depth, 0);
    // Only the arrays (which no callback takes) enter the policies in a visit.
    assert_eq!(visitor.state().descent_depths, vec![1, 2]);

    #[dispatch(visit, policy = (ArrayScope, RecordDescent))]
    impl CollectIntegers {
        fn visit_integer(&mut self, value: i64) {
            self.record(value);
        }
    }
    let mut visitor = CollectIntegers::default();
    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(visitor.integers, expected);
    assert_eq!(visitor.descent_depths, vec![1, 2]);
    assert_eq!(visitor.depth, 0);

    #[dispatch(walk)]
    impl CollectIntegers {
        fn walk_integer(&mut self, value: i64) -> WalkResult {
            self.record(value);
            WalkResult::Advance
        }
    }

    // The same policies with a `#[dispatch(walk)]` handler. The walk drives the recursion, so
    // the policies run below the integer leaves too.
    for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
        let mut walker =
            WalkWithContextPolicy::new(CollectIntegers::default(), (ArrayScope, RecordDescent));
        for run in 1..=2 {
            assert!(structural::walk(&root, &mut walker, order)
                .unwrap()
                .is_none());
            assert_eq!(walker.state().integers, expected.repeat(run));
            assert_eq!(walker.state().depth, 0);
            assert_eq!(
                walker.state().descent_depths,
                [1, 1, 2, 2, 2, 1].repeat(run)
            );
        }
        assert!(structural::walk(&root, walker, order).unwrap().is_none());
    }
}

// Enter Simple, then Pattern, then try to leave the pattern for None. Each enclosing region is
// restored, also when a child interrupts or fails.
#[test]
fn policy_continuation_scopes_regions_and_restores_after_halts() {
    #[derive(Clone, Copy)]
    enum Outcome {
        Finish,
        Interrupt,
        Error,
    }
    struct Probe {
        outcome: Outcome,
        seen: Vec<(i64, DefRegionKind)>,
        regions: Vec<DefRegionKind>,
    }
    impl Probe {
        fn record(&mut self, value: i64, kind: DefRegionKind) -> Result<Option<VisitInterrupt>> {
            self.seen.push((value, kind));
            if value == 1 {
                match self.outcome {
                    Outcome::Interrupt => return Ok(Some(VisitInterrupt::with(42i64))),
                    Outcome::Error => return Err(runtime_error("continuation failed")),
                    Outcome::Finish => {}
                }
            }
            Ok(None)
        }
    }
    #[dispatch(walk)]
    impl Probe {
        fn walk_integer(&mut self, value: i64, kind: DefRegionKind) -> Result<WalkResult> {
            Ok(match self.record(value, kind)? {
                Some(interrupt) => WalkResult::InterruptWith(interrupt.value),
                None => WalkResult::Advance,
            })
        }
    }
    struct Scope(DefRegionKind, i64);
    impl ContextPolicy<Probe> for Scope {
        fn default_visit(
            &self,
            value: &VisitValue,
            ctx: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            let Some(array) = value.cast::<Array<i64>>() else {
                return ctx.visit_children();
            };
            let outer = ctx.def_region_kind();
            ctx.state_mut().regions.push(outer);
            let result = ctx.default_visit_children(&array, self.0);
            assert_eq!(ctx.def_region_kind(), outer);
            // A visit after the scoped descent is in the restored region.
            assert!(ctx.visit(self.1)?.is_none());
            result
        }
    }
    use DefRegionKind::{None as Use, Pattern, Simple};
    #[dispatch(visit, policy = (Scope(Simple, 4), (Scope(Pattern, 3), Scope(Use, 2))))]
    impl Probe {
        fn visit_any(
            &mut self,
            value: &VisitValue,
            kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            if let Some(value) = value.cast::<i64>() {
                self.record(value, kind)
            } else {
                self.default_visit_children(value, kind)
            }
        }
    }
    let root = array(vec![1i64, 5]);
    for outcome in [Outcome::Finish, Outcome::Interrupt, Outcome::Error] {
        for (entry, order) in [
            None,
            None,
            Some(WalkOrder::PreOrder),
            Some(WalkOrder::PostOrder),
        ]
        .into_iter()
        .enumerate()
        {
            let state = Probe {
                outcome,
                seen: vec![],
                regions: vec![],
            };
            let policies = (Scope(Simple, 4), (Scope(Pattern, 3), Scope(Use, 2)));
            let (result, state) = if let Some(order) = order {
                let mut walker = WalkWithContextPolicy::new(state, policies);
                let result = structural::walk(&root, &mut walker, order);
                // The same borrowed walker after a completion, an interrupt or an error: the
                // new root starts outside every region of the previous walk.
                assert!(structural::walk(99i64, &mut walker, order)
                    .unwrap()
                    .is_none());
                (result, walker.into_state())
            } else if entry == 0 {
                let mut visitor = state;
                let result = structural::visit(&root, &mut visitor);
                (result, visitor)
            } else {
                let mut visitor =
                    VisitCallbacks::new(state, |value: i64, ctx: &mut VisitContext<'_, Probe>| {
                        let kind = ctx.def_region_kind();
                        ctx.state_mut().record(value, kind)
                    })
                    .with_policy(policies);
                let result = structural::visit(&root, &mut visitor);
                (result, visitor.into_state())
            };
            match outcome {
                Outcome::Finish => assert!(result.unwrap().is_none()),
                Outcome::Interrupt => {
                    assert_eq!(result.unwrap().unwrap().value.cast::<i64>().unwrap(), 42)
                }
                Outcome::Error => assert_eq!(result.unwrap_err().message(), "continuation failed"),
            }
            assert_eq!(state.regions, vec![Use, Simple, Pattern]);
            let mut expected = vec![(1, Pattern)];
            if matches!(outcome, Outcome::Finish) {
                expected.push((5, Pattern)); // A halt skips the remaining child.
            }
            // The innermost, middle and outer scopes unwind.
            expected.extend([(2, Pattern), (3, Simple), (4, Use)]);
            if order.is_some() {
                expected.push((99, Use));
            }
            assert_eq!(state.seen, expected);
        }
    }
}

/// Upstream's C++ `testing.TestVisitRegions` (`testing.make_visit_region_graph(false)`),
/// defined in Rust: the fields `simple = 1` (a simple definition), `pattern = 2` (a pattern
/// definition) and `ordinary = 3`.
#[derive(tvm_ffi::Object)]
#[ffi_type(
    key = "upstream_structural_0115.TestVisitRegions",
    structural = "tree",
    final
)]
#[repr(C)]
pub struct TestVisitRegions {
    #[ffi(structural = "def-simple")]
    pub simple: i64,
    #[ffi(structural = "def-pattern")]
    pub pattern: i64,
    pub ordinary: i64,
}

fn visit_region_graph() -> ObjectRef<TestVisitRegions> {
    ObjectRef::new(TestVisitRegions {
        simple: 1,
        pattern: 2,
        ordinary: 3,
    })
}

#[derive(Default)]
struct PolicyRegionTrace(Vec<(i64, DefRegionKind)>);
#[dispatch(walk)]
impl PolicyRegionTrace {
    fn walk_integer(&mut self, value: i64, kind: DefRegionKind) -> WalkResult {
        self.0.push((value, kind));
        WalkResult::Advance
    }
}

// A default descent may move to a child container without running the callbacks of that
// container, and still run the later policies and the callbacks of its children.
#[test]
fn policy_continuation_retargets_without_dispatching_the_container() {
    #[derive(Default)]
    struct Probe(Vec<(&'static str, i64, DefRegionKind)>, bool);

    #[dispatch(walk)]
    impl Probe {
        fn walk_array(&mut self, value: Array<Any>, kind: DefRegionKind) -> WalkResult {
            self.0.push(("array callback", value.len() as i64, kind));
            if self.1 {
                WalkResult::Skip
            } else {
                WalkResult::Advance
            }
        }
        fn walk_integer(&mut self, value: i64, kind: DefRegionKind) -> WalkResult {
            self.0.push(("integer callback", value, kind));
            WalkResult::Advance
        }
    }

    struct Redirect;
    impl ContextPolicy<Probe> for Redirect {
        fn default_visit(
            &self,
            value: &VisitValue,
            ctx: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            let Some(array) = value.cast::<Array<Any>>() else {
                return ctx.visit_children();
            };
            assert_eq!(
                array.len(),
                2,
                "the array moved to must not start this policy again"
            );
            let kind = ctx.def_region_kind();
            ctx.state_mut().0.push(("before", 2, kind));
            let target = array.get(0).unwrap();
            let result = ctx.default_visit_children(&target, DefRegionKind::Pattern);
            assert_eq!(ctx.current().cast::<Array<Any>>().unwrap().len(), 2);
            assert_eq!(ctx.def_region_kind(), DefRegionKind::None);
            let kind = ctx.def_region_kind();
            ctx.state_mut().0.push(("after", 2, kind));
            result
        }
    }

    struct Observe;
    impl ContextPolicy<Probe> for Observe {
        fn default_visit(
            &self,
            value: &VisitValue,
            ctx: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            if let Some(array) = value.cast::<Array<Any>>() {
                assert_eq!(ctx.current().cast::<Array<Any>>().unwrap().len(), 1);
                let kind = ctx.def_region_kind();
                ctx.state_mut()
                    .0
                    .push(("next policy", array.len() as i64, kind));
            } else if value.cast::<i64>().is_none() {
                let kind = ctx.def_region_kind();
                ctx.state_mut().0.push(("reflected policy", 0, kind));
            }
            ctx.visit_children()
        }
    }

    let root = array(vec![Any::new(array(vec![7i64])), Any::new(99i64)]);
    let descent = vec![
        ("before", 2, DefRegionKind::None),
        ("next policy", 1, DefRegionKind::Pattern),
        ("integer callback", 7, DefRegionKind::Pattern),
        ("after", 2, DefRegionKind::None),
    ];
    for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
        for skip in [false, true] {
            let mut walker = WalkWithContextPolicy::new(Probe(vec![], skip), (Redirect, Observe));
            assert!(structural::walk(&root, &mut walker, order)
                .unwrap()
                .is_none());
            let mut expected = descent.clone();
            let array_callback = ("array callback", 2, DefRegionKind::None);
            match order {
                WalkOrder::PreOrder => {
                    if skip {
                        expected.clear(); // A Skip prunes the policies with the children.
                    }
                    expected.insert(0, array_callback);
                }
                WalkOrder::PostOrder => expected.push(array_callback),
            }
            assert_eq!(walker.state().0, expected);
        }
    }
    let mut visitor = VisitCallbacks::new(
        Probe::default(),
        |value: &VisitValue, ctx: &mut VisitContext<'_, Probe>| {
            let kind = ctx.def_region_kind();
            if let Some(array) = value.cast::<Array<Any>>() {
                ctx.state_mut()
                    .0
                    .push(("array callback", array.len() as i64, kind));
                ctx.visit_children()
            } else {
                ctx.state_mut()
                    .0
                    .push(("integer callback", value.cast::<i64>().unwrap(), kind));
                Ok(None)
            }
        },
    )
    .with_policy((Redirect, Observe));
    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    let mut expected = descent;
    expected.insert(0, ("array callback", 2, DefRegionKind::None));
    assert_eq!(visitor.state().0, expected);

    // A callback can move the default descent too, entering the configured policy; this
    // target's children are its reflected fields.
    let target = visit_region_graph();
    let mut visitor = VisitCallbacks::new(
        Probe::default(),
        |value: &VisitValue, ctx: &mut VisitContext<'_, Probe>| {
            if value.cast::<i64>() == Some(-1) {
                assert!(ctx
                    .default_visit_children(Any::none(), DefRegionKind::Pattern)?
                    .is_none());
                let result = ctx.default_visit_children(&target, DefRegionKind::Pattern);
                assert_eq!(ctx.current().cast::<i64>(), Some(-1));
                assert_eq!(ctx.def_region_kind(), DefRegionKind::None);
                return result;
            }
            // A callback for the target itself would fail this cast.
            let integer = value.cast::<i64>().unwrap();
            let kind = ctx.def_region_kind();
            ctx.state_mut().0.push(("integer callback", integer, kind));
            Ok(None)
        },
    )
    .with_policy(Observe);
    assert!(structural::visit(-1i64, &mut visitor).unwrap().is_none());
    assert_eq!(
        visitor.state().0,
        vec![
            ("reflected policy", 0, DefRegionKind::Pattern),
            ("integer callback", 1, DefRegionKind::Pattern),
            ("integer callback", 2, DefRegionKind::Pattern),
            ("integer callback", 3, DefRegionKind::Pattern),
        ]
    );
}

#[test]
fn policy_halts_skip_remaining_policies_and_restore_outer_state() {
    #[derive(Default)]
    struct Probe {
        events: Vec<&'static str>,
        depth: usize,
    }
    #[dispatch(walk)]
    impl Probe {
        fn walk_any(&mut self, value: &VisitValue, kind: DefRegionKind) -> WalkResult {
            assert!(
                value.cast::<Array<i64>>().is_some(),
                "children must not be visited"
            );
            assert_eq!(kind, DefRegionKind::None);
            self.events.push("callback");
            WalkResult::Advance
        }
    }
    struct Scope;
    impl ContextPolicy<Probe> for Scope {
        fn default_visit(
            &self,
            value: &VisitValue,
            ctx: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            ctx.state_mut().events.push("enter");
            ctx.state_mut().depth += 1;
            let result = ctx.default_visit_children(value.to_owned(), DefRegionKind::Pattern);
            assert_eq!(ctx.def_region_kind(), DefRegionKind::None);
            ctx.state_mut().depth -= 1;
            ctx.state_mut().events.push("exit");
            result
        }
    }
    struct Stop(bool);
    impl ContextPolicy<Probe> for Stop {
        fn default_visit(
            &self,
            _: &VisitValue,
            ctx: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            assert_eq!(ctx.def_region_kind(), DefRegionKind::Pattern);
            assert_eq!(ctx.state().depth, 1);
            ctx.state_mut().events.push("stop");
            if self.0 {
                Err(runtime_error("policy failed"))
            } else {
                Ok(Some(VisitInterrupt::with(42i64)))
            }
        }
    }
    struct Unreachable;
    impl ContextPolicy<Probe> for Unreachable {
        fn default_visit(
            &self,
            _: &VisitValue,
            _: &mut VisitContext<'_, Probe>,
        ) -> Result<Option<VisitInterrupt>> {
            panic!("the policy after Stop must not run")
        }
    }
    let root = array(vec![1i64]);
    for error in [false, true] {
        for order in [None, Some(WalkOrder::PreOrder), Some(WalkOrder::PostOrder)] {
            let policies = (Scope, (Stop(error), Unreachable));
            let (result, state) = if let Some(order) = order {
                let mut walker = WalkWithContextPolicy::new(Probe::default(), policies);
                let result = structural::walk(&root, &mut walker, order);
                (result, walker.into_state())
            } else {
                let mut visitor = VisitCallbacks::new(
                    Probe::default(),
                    |value: &VisitValue, ctx: &mut VisitContext<'_, Probe>| {
                        let kind = ctx.def_region_kind();
                        assert!(matches!(
                            ctx.state_mut().walk_any(value, kind),
                            WalkResult::Advance
                        ));
                        ctx.visit_children()
                    },
                )
                .with_policy(policies);
                let result = structural::visit(&root, &mut visitor);
                (result, visitor.into_state())
            };
            if error {
                let error = result.unwrap_err();
                assert_eq!(error.kind(), ErrorKind::Runtime);
                assert_eq!(error.message(), "policy failed");
            } else {
                assert_eq!(result.unwrap().unwrap().value.cast::<i64>().unwrap(), 42);
            }
            let expected = if order == Some(WalkOrder::PostOrder) {
                vec!["enter", "stop", "exit"]
            } else {
                vec!["callback", "enter", "stop", "exit"]
            };
            assert_eq!(state.events, expected);
            assert_eq!(state.depth, 0);
        }
    }
}

/// Upstream's `visit_region_graph(with_hook)`: `testing.make_visit_region_graph` of the wheel's
/// C++ test library; with the hook, a C++ `testing.TestVisitHook` whose Function-valued
/// `__s_visit__` visits its `child` (a C++ `testing.TestVisitRegions`) in a simple region, then
/// the integer 4 in the region it was visited in.
fn cpp_visit_region_graph(with_hook: bool) -> Any {
    tvm_ffi_tests::load_cpp_testing_library();
    Function::get_global("testing.make_visit_region_graph")
        .unwrap()
        .call((with_hook,))
        .unwrap()
}

#[test]
fn policy_regions_compose_with_field_flags_and_function_hooks() {
    struct SetRootRegion(i32, DefRegionKind);
    impl ContextPolicy<PolicyRegionTrace> for SetRootRegion {
        fn default_visit(
            &self,
            value: &VisitValue,
            ctx: &mut VisitContext<'_, PolicyRegionTrace>,
        ) -> Result<Option<VisitInterrupt>> {
            if value.type_index() == self.0 {
                ctx.default_visit_children(value.to_owned(), self.1)
            } else {
                ctx.visit_children()
            }
        }
    }
    use DefRegionKind::{None as Use, Pattern, Simple};
    // Upstream's first half runs on C++ `testing.TestVisitRegions` (`with_hook = false`), here
    // on its Rust copy `TestVisitRegions`; the second half on the C++ `testing.TestVisitHook`.
    let rust_fields = Any::new(visit_region_graph());
    for (with_hook, root) in [(false, rust_fields), (true, cpp_visit_region_graph(true))] {
        if with_hook {
            // Exercise the Function-valued __s_visit__ path, not an opaque pointer hook.
            assert!(reflection::type_attr(root.type_index(), "__s_visit__")
                .unwrap()
                .cast::<Function>()
                .is_ok());
        }
        for region in [Use, Simple, Pattern] {
            let ordinary = if with_hook && region == Use {
                Simple
            } else {
                region
            };
            let mut expected = vec![
                (1, if region == Pattern { Pattern } else { Simple }),
                (2, Pattern),
                (3, ordinary),
            ];
            if with_hook {
                expected.push((4, region));
            }
            for order in [None, Some(WalkOrder::PreOrder), Some(WalkOrder::PostOrder)] {
                let policy = SetRootRegion(root.type_index(), region);
                let state = if let Some(order) = order {
                    let mut walker =
                        WalkWithContextPolicy::new(PolicyRegionTrace::default(), policy);
                    assert!(structural::walk(&root, &mut walker, order)
                        .unwrap()
                        .is_none());
                    walker.into_state()
                } else {
                    let mut visitor = VisitCallbacks::new(
                        PolicyRegionTrace::default(),
                        |value: i64, ctx: &mut VisitContext<'_, PolicyRegionTrace>| {
                            let kind = ctx.def_region_kind();
                            ctx.state_mut().0.push((value, kind));
                        },
                    )
                    .with_policy(policy);
                    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
                    visitor.into_state()
                };
                assert_eq!(
                    state.0, expected,
                    "with_hook={with_hook}, region={region:?}, order={order:?}"
                );
            }
        }
    }
}

struct ReenterRegion(DefRegionKind);
impl ContextPolicy<PolicyRegionTrace> for ReenterRegion {
    fn default_visit(
        &self,
        value: &VisitValue,
        ctx: &mut VisitContext<'_, PolicyRegionTrace>,
    ) -> Result<Option<VisitInterrupt>> {
        match value.cast::<i64>() {
            Some(2) => {
                assert_eq!(ctx.def_region_kind(), DefRegionKind::Pattern);
                // A visit straight away (no `visit_children` first) is in the field's pattern.
                ctx.visit_with(99i64, self.0)
            }
            Some(3) => {
                assert_eq!(ctx.def_region_kind(), DefRegionKind::None);
                // The previous field's pattern does not reach its sibling.
                ctx.visit(100i64)
            }
            _ => ctx.visit_children(),
        }
    }
}

#[dispatch(visit, policy = ReenterRegion(DefRegionKind::None))]
impl PolicyRegionTrace {
    fn visit_any(
        &mut self,
        value: &VisitValue,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        if let Some(integer) = value.cast::<i64>() {
            assert!(matches!(
                self.walk_integer(integer, kind),
                WalkResult::Advance
            ));
            if integer != 2 && integer != 3 {
                return Ok(None);
            }
        }
        self.default_visit_children(value, DefRegionKind::None)
    }
}

#[test]
fn policies_preserve_reflected_pattern_before_default_descent() {
    let root = visit_region_graph();
    use DefRegionKind::{None as Use, Pattern, Simple};
    let mut visitor = PolicyRegionTrace::default();
    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(
        visitor.0,
        vec![
            (1, Simple),
            (2, Pattern),
            (99, Pattern),
            (3, Use),
            (100, Use)
        ]
    );
    for requested in [Use, Simple] {
        for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
            let mut walker =
                WalkWithContextPolicy::new(PolicyRegionTrace::default(), ReenterRegion(requested));
            assert!(structural::walk(&root, &mut walker, order)
                .unwrap()
                .is_none());
            let expected = match order {
                WalkOrder::PreOrder => vec![
                    (1, Simple),
                    (2, Pattern),
                    (99, Pattern),
                    (3, Use),
                    (100, Use),
                ],
                WalkOrder::PostOrder => vec![
                    (1, Simple),
                    (99, Pattern),
                    (2, Pattern),
                    (100, Use),
                    (3, Use),
                ],
            };
            assert_eq!(
                walker.state().0,
                expected,
                "order={order:?}, requested={requested:?}"
            );
        }
    }
}

#[test]
fn public_reflection_access_uses_registered_field_and_type_attr() {
    // Upstream builds a C++ `testing.TestObjectBase` (linked for its registrations); the Rust
    // type of this file has the same reflected fields and, being `Clone`, a shallow copy.
    let root = ObjectRef::new(TestObjectBase {
        v_i64: 0,
        v_f64: 0.0,
        v_str: "an owning C++ reflected field value".into(),
    });
    let type_index = root.type_index();

    let getter = FieldGetter::new(type_index, "v_str").unwrap();
    let selected = getter.get::<_, FfiString>(&root).unwrap();
    drop(root);
    assert_eq!(selected.as_str(), "an owning C++ reflected field value");

    let wrong_type = array([0i64]);
    assert!(getter.get_any(wrong_type.as_object_ref()).is_err());
    assert!(FieldGetter::new(type_index, "missing").is_err());

    // A copyable type registers this Function-valued attribute.
    assert!(reflection::type_attr(type_index, "__ffi_shallow_copy__")
        .unwrap()
        .cast::<Function>()
        .is_ok());
    assert!(Function::from_type_attr(type_index, "__ffi_shallow_copy__").is_ok());
    assert!(reflection::type_attr(type_index, "missing").is_none());
}

#[test]
fn plain_walk_uses_registered_array_hook() {
    let root = array(vec![1i64, 2, 3]);
    let mut integers = 0;
    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            if value.cast::<i64>().is_some() {
                integers += 1;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(integers, 3);
}

#[test]
fn plain_walk_visits_map_values_without_visiting_keys() {
    let root: Map<FfiString, i64> = [(FfiString::from("a"), 1i64), (FfiString::from("b"), 2i64)]
        .into_iter()
        .collect();
    let mut integers = 0;
    let mut strings = 0;
    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            if value.cast::<i64>().is_some() {
                integers += 1;
            } else if value.cast::<FfiString>().is_some() {
                strings += 1;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(integers, 2);
    assert_eq!(strings, 0);
}

#[test]
fn primitive_values_are_leaves_in_pre_and_post_order() {
    assert!(reflection::type_attr(sys::type_index::kTVMFFIDataType, "__s_visit__").is_none());
    let dtype = DataType::float(32);

    let mut pre = Vec::new();
    assert!(structural::walk(
        dtype,
        |value: &VisitValue| {
            if value.cast::<DataType>().is_some() {
                pre.push("dtype");
            } else if value.cast::<i64>().is_some() {
                pre.push("child");
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(pre, ["dtype"]);

    let mut skipped = Vec::new();
    assert!(structural::walk(
        dtype,
        |value: &VisitValue| {
            if value.cast::<DataType>().is_some() {
                skipped.push("dtype");
                WalkResult::Skip
            } else {
                skipped.push("child");
                WalkResult::Advance
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(skipped, ["dtype"]);

    let mut post = Vec::new();
    assert!(structural::walk(
        dtype,
        |value: &VisitValue| {
            if value.cast::<DataType>().is_some() {
                post.push("dtype");
            } else if value.cast::<i64>().is_some() {
                post.push("child");
            }
            WalkResult::Advance
        },
        WalkOrder::PostOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(post, ["dtype"]);
}

#[test]
fn primitive_fast_path_preserves_none_interrupt_and_error() {
    let mut none_calls = 0;
    assert!(structural::walk(
        Any::none(),
        |_value: &VisitValue| {
            none_calls += 1;
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(none_calls, 0);

    let interrupt = structural::walk(
        1i64,
        |_value: i64| WalkResult::interrupt_with(9i64),
        WalkOrder::PostOrder,
    )
    .unwrap()
    .unwrap();
    assert_eq!(interrupt.value.cast::<i64>().unwrap(), 9);

    let error = match structural::walk(
        1i64,
        |_value: i64| -> Result<WalkResult> { Err(runtime_error("primitive failed")) },
        WalkOrder::PreOrder,
    ) {
        Err(error) => error,
        Ok(_) => panic!("failing primitive callback unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "primitive failed");
}

#[test]
fn registered_map_hook_visits_all_values_without_visiting_keys() {
    // More than 4 entries forces the dense (block + iteration list) layout.
    let root: Map<FfiString, i64> = (0..9)
        .map(|i| (FfiString::from(format!("k{i}")), i as i64))
        .collect();
    let mut sum = 0;
    let mut strings = 0;
    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            if let Some(integer) = value.cast::<i64>() {
                sum += integer;
            } else if value.cast::<FfiString>().is_some() {
                strings += 1;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(sum, (0..9).sum::<i64>());
    assert_eq!(strings, 0);
}

#[test]
fn interrupt_payload_crosses_map_traversal() {
    let root: Map<FfiString, i64> = [(FfiString::from("a"), 1i64), (FfiString::from("b"), 2i64)]
        .into_iter()
        .collect();
    let outcome = structural::walk(
        &root,
        |value: &VisitValue| {
            if value.cast::<i64>().is_some() {
                return WalkResult::interrupt_with(99i64);
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    let Some(interrupt) = outcome else {
        panic!("map walk unexpectedly completed");
    };
    assert_eq!(interrupt.value.cast::<i64>().unwrap(), 99);
}

#[test]
fn handler_error_crosses_map_traversal() {
    let root: Map<FfiString, i64> = [(FfiString::from("a"), 1i64)].into_iter().collect();
    let error = match structural::walk(
        &root,
        |value: &VisitValue| -> Result<WalkResult> {
            if value.cast::<i64>().is_some() {
                Err(runtime_error("map handler failed"))
            } else {
                Ok(WalkResult::Advance)
            }
        },
        WalkOrder::PreOrder,
    ) {
        Err(error) => error,
        Ok(_) => panic!("map handler unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "map handler failed");
    assert!(error.backtrace().contains("object `ffi.Map`"));
}

#[test]
fn interrupt_stops_without_running_remaining_callbacks() {
    let root = array(vec![1i64, 2, 3]);
    let mut integers = 0;
    let outcome = structural::walk(
        &root,
        |value: &VisitValue| {
            if value.cast::<i64>().is_some() {
                integers += 1;
                return WalkResult::Interrupt;
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert!(outcome.is_some());
    assert_eq!(integers, 1);
}

/// Visitor-layer traversal that overrides the def-region for one child and
/// inherits it for the next, mirroring a C++ visitor using
/// `WithDefRegionKind`.
#[derive(Default)]
struct ManualRegionVisitor {
    seen: Vec<DefRegionKind>,
}

impl Visitor for ManualRegionVisitor {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        if let Some(array) = value.cast::<Array<i64>>() {
            // Override the state for exactly this child's subtree...
            let overridden = array.get(0).unwrap();
            if let Some(interrupt) = self.visit_child(overridden, DefRegionKind::Simple)? {
                return Ok(Some(interrupt));
            }
            // ...and forward the received state to inherit it.
            let inherited = array.get(1).unwrap();
            return self.visit_child(inherited, def_region_kind);
        }
        if value.cast::<i64>().is_some() {
            self.seen.push(def_region_kind);
        }
        Ok(None)
    }
}

#[test]
fn manual_child_visit_can_override_def_region() {
    let root = array(vec![7i64, 8]);
    let mut probe = ManualRegionVisitor::default();
    assert!(structural::visit(&root, &mut probe).unwrap().is_none());
    assert_eq!(probe.seen, vec![DefRegionKind::Simple, DefRegionKind::None]);
}

#[derive(Default)]
struct GeneratedLeafVisitor {
    integers: Vec<(i64, DefRegionKind)>,
}

#[dispatch(visit)]
impl GeneratedLeafVisitor {
    fn visit_integer(&mut self, value: i64, kind: DefRegionKind) {
        self.integers.push((value, kind));
    }
}

#[test]
fn generated_visitor_defaults_unmatched_values() {
    let root = array(vec![1i64, 2]);
    let mut visitor = GeneratedLeafVisitor::default();
    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(
        visitor.integers,
        vec![(1, DefRegionKind::None), (2, DefRegionKind::None)]
    );
}

#[derive(Default)]
struct GeneratedRecursiveVisitor {
    events: Vec<String>,
}

#[dispatch(visit)]
impl GeneratedRecursiveVisitor {
    fn visit_array(
        &mut self,
        array: Array<i64>,
        kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        self.events.push("enter:array".to_string());
        for value in array.iter() {
            if let Some(interrupt) = self.visit_child(value, kind)? {
                return Ok(Some(interrupt));
            }
        }
        self.events.push("exit:array".to_string());
        Ok(None)
    }

    fn visit_integer(&mut self, value: i64) -> Option<VisitInterrupt> {
        self.events.push(format!("int:{value}"));
        (value == 2).then(|| VisitInterrupt::with(value))
    }

    fn visit_other_object(&mut self, _value: &AnyObject) {}
}

#[test]
fn generated_visitor_can_drive_recursion_through_mut_self() {
    let root = array(vec![1i64, 2, 3]);
    let mut visitor = GeneratedRecursiveVisitor::default();
    let interrupt = structural::visit(&root, &mut visitor).unwrap().unwrap();
    assert_eq!(interrupt.value.cast::<i64>().unwrap(), 2);
    assert_eq!(visitor.events, vec!["enter:array", "int:1", "int:2"]);
}

#[derive(Default)]
struct GenericDispatchProbe {
    integers: Vec<i64>,
    objects: usize,
    catch_all: usize,
}

#[dispatch(walk)]
impl GenericDispatchProbe {
    fn walk_integer(&mut self, value: i64) -> WalkResult {
        self.integers.push(value);
        WalkResult::Advance
    }

    // Trailing DefRegionKind: handlers may mix arities within one impl.
    fn walk_object(&mut self, _value: &AnyObject, kind: DefRegionKind) -> WalkResult {
        assert_eq!(kind, DefRegionKind::None);
        self.objects += 1;
        WalkResult::Advance
    }

    fn walk_any(&mut self, _value: &VisitValue) -> WalkResult {
        self.catch_all += 1;
        WalkResult::Advance
    }
}

#[test]
fn generated_dispatch_supports_pod_and_ordered_catch_all() {
    let root = array(vec![1i64, 2]);
    let mut probe = GenericDispatchProbe::default();
    assert!(structural::walk(&root, &mut probe, WalkOrder::PreOrder)
        .unwrap()
        .is_none());
    assert_eq!(probe.integers, vec![1, 2]);
    assert_eq!(probe.objects, 1);

    let floats = array(vec![1.0f64, 2.0]);
    assert!(structural::walk(&floats, &mut probe, WalkOrder::PreOrder)
        .unwrap()
        .is_none());
    assert_eq!(probe.objects, 2);
    assert_eq!(probe.catch_all, 2);
}

/// Visitor-layer enter/exit straddling: run enter logic, delegate the
/// default child recursion, then run exit logic with the same locals in
/// scope — the C++ `DefaultVisitExpected` pattern.
#[derive(Default)]
struct StraddleVisitor {
    events: Vec<String>,
}

impl Visitor for StraddleVisitor {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let label = match value.cast::<i64>() {
            Some(integer) => format!("int:{integer}"),
            None => "node".to_string(),
        };
        self.events.push(format!("enter:{label}"));
        if let Some(interrupt) = self.default_visit_children(value, def_region_kind)? {
            return Ok(Some(interrupt));
        }
        self.events.push(format!("exit:{label}"));
        Ok(None)
    }
}

#[test]
fn visitor_can_straddle_default_children() {
    let root = array(vec![1i64, 2]);
    let mut probe = StraddleVisitor::default();
    assert!(structural::visit(&root, &mut probe).unwrap().is_none());
    assert_eq!(
        probe.events,
        vec![
            "enter:node",
            "enter:int:1",
            "exit:int:1",
            "enter:int:2",
            "exit:int:2",
            "exit:node",
        ]
    );
}

#[derive(Default)]
struct OrderProbe {
    events: Vec<String>,
}

#[dispatch(walk)]
impl OrderProbe {
    fn walk_array(&mut self, _array: Array<i64>) -> WalkResult {
        self.events.push("array".to_string());
        WalkResult::Advance
    }

    fn walk_integer(&mut self, value: i64) -> WalkResult {
        self.events.push(format!("int:{value}"));
        WalkResult::Advance
    }
}

#[test]
fn stateful_structural_walk_supports_post_order() {
    let root = array(vec![1i64, 2]);
    let mut probe = OrderProbe::default();
    assert!(structural::walk(&root, &mut probe, WalkOrder::PostOrder)
        .unwrap()
        .is_none());
    assert_eq!(probe.events, vec!["int:1", "int:2", "array"]);
}

#[test]
fn nested_walk_restores_the_outer_active_visitor() {
    let outer = array(vec![10i64, 20]);
    let inner = array(vec![1i64, 2]);
    let mut entered_inner = false;
    let mut outer_values = Vec::new();
    let mut inner_values = Vec::new();

    assert!(structural::walk(
        &outer,
        |value: &VisitValue| -> Result<WalkResult> {
            if let Some(value) = value.cast::<i64>() {
                outer_values.push(value);
            }
            if !entered_inner {
                entered_inner = true;
                structural::walk(
                    &inner,
                    |value: &VisitValue| {
                        if let Some(value) = value.cast::<i64>() {
                            inner_values.push(value);
                        }
                        WalkResult::Advance
                    },
                    WalkOrder::PreOrder,
                )?;
            }
            Ok(WalkResult::Advance)
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(outer_values, vec![10, 20]);
    assert_eq!(inner_values, vec![1, 2]);
}

#[test]
fn interrupt_payload_is_returned_to_the_caller() {
    let root = array(vec![1i64, 2]);
    let outcome = structural::walk(
        &root,
        |value: &VisitValue| {
            if value.cast::<i64>() == Some(1) {
                return WalkResult::interrupt_with(42i64);
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    let Some(interrupt) = outcome else {
        panic!("walk unexpectedly completed");
    };
    assert_eq!(interrupt.value.cast::<i64>().unwrap(), 42);
}

#[test]
fn handler_errors_include_native_visit_path() {
    let root = array(vec![1i64]);
    let error = match structural::walk(
        &root,
        |value: &VisitValue| -> Result<WalkResult> {
            if value.cast::<i64>().is_some() {
                Err(runtime_error("handler failed"))
            } else {
                Ok(WalkResult::Advance)
            }
        },
        WalkOrder::PreOrder,
    ) {
        Err(error) => error,
        Ok(_) => panic!("handler unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "handler failed");
    assert!(error.backtrace().contains("object `ffi.Array`"));
}

#[test]
fn visitor_errors_include_native_visit_path() {
    struct FailingVisitor;

    impl Visitor for FailingVisitor {
        fn visit(
            &mut self,
            value: &VisitValue,
            def_region_kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            if value.cast::<i64>().is_some() {
                return Err(runtime_error("visitor failed"));
            }
            self.default_visit_children(value, def_region_kind)
        }
    }

    let root = array(vec![1i64]);
    let error = match structural::visit(&root, &mut FailingVisitor) {
        Err(error) => error,
        Ok(_) => panic!("visitor unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "visitor failed");
    assert!(error.backtrace().contains("object `ffi.Array`"));

    let error = match structural::visit(
        &root,
        |_value: i64, _visitor: &mut VisitContext<'_, ()>| -> Result<()> {
            Err(runtime_error("callback visitor failed"))
        },
    ) {
        Err(error) => error,
        Ok(_) => panic!("callback visitor unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "callback visitor failed");
    assert!(error.backtrace().contains("object `ffi.Array`"));
}

#[test]
fn callback_panics_resume_after_the_registered_hook_returns() {
    let root = array(vec![1i64]);
    let panic = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        structural::walk(
            &root,
            |_value: i64| -> WalkResult { panic!("visitor panic") },
            WalkOrder::PreOrder,
        )
    })) {
        Err(panic) => panic,
        Ok(_) => panic!("panicking visitor unexpectedly returned"),
    };
    let message = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    assert_eq!(message, Some("visitor panic"));
}

#[test]
fn visitor_interrupt_propagates_through_default_children() {
    struct InterruptingVisitor;

    impl Visitor for InterruptingVisitor {
        fn visit(
            &mut self,
            value: &VisitValue,
            def_region_kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            if value.cast::<i64>() == Some(2) {
                return Ok(Some(VisitInterrupt::with(7i64)));
            }
            self.default_visit_children(value, def_region_kind)
        }
    }

    let root = array(vec![1i64, 2, 3]);
    let outcome = structural::visit(&root, &mut InterruptingVisitor).unwrap();
    let Some(interrupt) = outcome else {
        panic!("visitor traversal unexpectedly completed");
    };
    assert_eq!(interrupt.value.cast::<i64>().unwrap(), 7);
}

#[test]
fn closure_walk_receives_def_region_kind() {
    // C++: StructuralWalk<kPreOrder>(root,
    //          [&](const TVarObj* var, TVMFFIDefRegionKind kind) { ... })
    let root = array(vec![1i64, 2]);
    let mut kinds = Vec::new();
    assert!(structural::walk(
        &root,
        |value: &VisitValue, kind: DefRegionKind| {
            if value.cast::<i64>().is_some() {
                kinds.push(kind);
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(kinds, vec![DefRegionKind::None; 2]);
}

#[test]
fn closure_walk_supports_post_order_and_skip() {
    let root = array(vec![1i64, 2]);
    let mut order_probe = Vec::new();
    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            order_probe.push(value.cast::<i64>());
            WalkResult::Advance
        },
        WalkOrder::PostOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(order_probe, vec![Some(1), Some(2), None]);

    let mut visited = 0;
    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            visited += 1;
            if value.cast::<i64>().is_none() {
                WalkResult::Skip
            } else {
                WalkResult::Advance
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(visited, 1);
}

// ---------------------------------------------------------------------------
// Tuple walkers: structural::walk(root, (link1, link2, ...), order) — links
// are tried in order and the first whose argument type matches the value
// runs, the Rust analog of the variadic C++ StructuralWalk callback chain.
// ---------------------------------------------------------------------------
#[test]
fn chain_accepts_owned_object_ref_links() {
    let root = array(vec![array(vec![1i64]), array(vec![2i64, 3])]);
    let mut lengths = Vec::new();
    assert!(structural::walk(
        &root,
        (
            |array: Array<i64>| {
                lengths.push(array.len());
                WalkResult::Advance
            },
            |_value: i64| WalkResult::Advance,
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    // The outer Array<Array<i64>> fails the strict element check and falls
    // through the chain; only the inner arrays match the typed link.
    assert_eq!(lengths, vec![1, 2]);
}

#[test]
fn chain_links_may_mix_def_region_arity() {
    let root = array(vec![1i64, 2]);
    let mut kinds = Vec::new();
    let mut objects = 0;
    assert!(structural::walk(
        &root,
        (
            |_value: i64, kind: DefRegionKind| {
                kinds.push(kind);
                WalkResult::Advance
            },
            |_value: &VisitValue, kind: DefRegionKind| {
                assert_eq!(kind, DefRegionKind::None);
                objects += 1;
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(kinds, vec![DefRegionKind::None; 2]);
    assert_eq!(objects, 1);
}

#[test]
fn chain_links_can_skip_children() {
    let root = array(vec![array(vec![1i64]), array(vec![2i64])]);
    let mut arrays = 0;
    let mut integers = 0;
    assert!(structural::walk(
        &root,
        (
            |_array: Array<i64>| {
                arrays += 1;
                WalkResult::Skip
            },
            |_value: i64| {
                integers += 1;
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(arrays, 2);
    assert_eq!(integers, 0); // both inner arrays were skipped
}

#[test]
fn chain_link_errors_include_native_visit_path() {
    let root = array(vec![1i64]);
    let error = match structural::walk(
        &root,
        (
            |_value: i64| -> Result<WalkResult> { Err(runtime_error("link failed")) },
            |_value: &VisitValue| WalkResult::Advance,
        ),
        WalkOrder::PreOrder,
    ) {
        Err(error) => error,
        Ok(_) => panic!("link unexpectedly succeeded"),
    };
    assert_eq!(error.message(), "link failed");
    assert!(error.backtrace().contains("object `ffi.Array`"));
}

#[test]
fn chain_supports_post_order() {
    let root = array(vec![1i64, 2]);
    let events = std::cell::RefCell::new(Vec::new());
    assert!(structural::walk(
        &root,
        (
            |value: i64| {
                events.borrow_mut().push(format!("int:{value}"));
                WalkResult::Advance
            },
            |_object: &AnyObject| {
                events.borrow_mut().push("array".to_string());
                WalkResult::Advance
            },
        ),
        WalkOrder::PostOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(events.into_inner(), vec!["int:1", "int:2", "array"]);
}

#[derive(Default)]
struct ObjectCounter {
    objects: usize,
}

#[dispatch(walk)]
impl ObjectCounter {
    fn walk_object(&mut self, _value: &AnyObject) -> WalkResult {
        self.objects += 1;
        WalkResult::Advance
    }
}

#[test]
fn chain_splices_dispatch_walkers_between_closures() {
    let root = array(vec![1i64, 2]);
    let mut counter = ObjectCounter::default();
    let mut integers = 0;
    assert!(structural::walk(
        &root,
        (&mut counter, |_value: i64| {
            integers += 1;
            WalkResult::Advance
        },),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(counter.objects, 1);
    assert_eq!(integers, 2);
}

#[test]
fn chain_supports_full_arity() {
    let root = array(vec![1i64, 2, 3]);
    let mut integers = Vec::new();
    let mut objects = 0;
    let mut others = 0;
    assert!(structural::walk(
        &root,
        (
            |_value: f64| WalkResult::Advance,
            |_value: bool| WalkResult::Advance,
            |_value: tvm_ffi::String| WalkResult::Advance,
            |_value: Array<f64>| WalkResult::Advance,
            |_value: f32| WalkResult::Advance,
            |_value: tvm_ffi::Device| WalkResult::Advance,
            |_value: Array<bool>| WalkResult::Advance,
            |_value: Array<tvm_ffi::String>| WalkResult::Advance,
            |_value: Map<FfiString, i64>, _kind: DefRegionKind| WalkResult::Advance,
            |value: i64| {
                integers.push(value);
                WalkResult::Advance
            },
            |_object: &AnyObject, _kind: DefRegionKind| {
                objects += 1;
                WalkResult::Advance
            },
            |_value: &VisitValue, _kind: DefRegionKind| {
                others += 1;
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(integers, vec![1, 2, 3]);
    assert_eq!(objects, 1); // the array itself; integers matched earlier
    assert_eq!(others, 0); // every value matched an earlier link
}

#[test]
fn typed_lambda_walks_bare_and_as_single_link_tuple() {
    // A lone typed handler needs no tuple: unmatched values (the array
    // itself) advance normally. The 1-tuple spelling routes through the
    // chain impls instead and must agree.
    let root = array(vec![1i64, 2, 3]);
    let mut bare = 0;
    assert!(structural::walk(
        &root,
        |value: i64| {
            bare += value;
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    let mut tupled = 0;
    assert!(structural::walk(
        &root,
        (|value: i64| {
            tupled += value;
            WalkResult::Advance
        },),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!((bare, tupled), (6, 6));
}

#[test]
fn bare_node_lambda_takes_def_region_kind() {
    let root = array(vec![1i64, 2]);
    let mut objects = 0;
    assert!(structural::walk(
        &root,
        |_object: &AnyObject, kind: DefRegionKind| {
            assert_eq!(kind, DefRegionKind::None);
            objects += 1;
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(objects, 1);
}

struct InheritedRegionProbe {
    at_root: bool,
    seen: Vec<DefRegionKind>,
}

impl Visitor for InheritedRegionProbe {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        if self.at_root {
            self.at_root = false;
            let outer = value.cast::<Array<Array<i64>>>().unwrap();
            let inner = outer.get(0).unwrap();
            return self.visit_child(&inner, DefRegionKind::Pattern);
        }
        self.seen.push(def_region_kind);
        self.default_visit_children(value, def_region_kind)
    }
}

#[test]
fn def_region_is_inherited_through_containers() {
    let root = array(vec![array(vec![1i64, 2])]);
    let mut probe = InheritedRegionProbe {
        at_root: true,
        seen: Vec::new(),
    };
    assert!(structural::visit(&root, &mut probe).unwrap().is_none());
    assert_eq!(probe.seen, vec![DefRegionKind::Pattern; 3]);
}

#[test]
fn reflected_fields_reach_typed_handlers() {
    // Upstream builds a `testing.TestObjectBase` of the C++ testing library through
    // `ffi.MakeObjectFromPackedArgs`; the same reflected fields, defined in Rust.
    let root = ObjectRef::new(TestObjectBase {
        v_i64: 1,
        v_f64: 2.5,
        v_str: "a reflected string".into(),
    });
    let mut integers = Vec::new();
    let mut floats = Vec::new();
    let mut strings = Vec::new();
    assert!(structural::walk(
        &root,
        (
            |value: i64, kind: DefRegionKind| {
                integers.push((value, kind));
                WalkResult::Advance
            },
            |value: f64| {
                floats.push(value);
                WalkResult::Advance
            },
            |value: FfiString| {
                strings.push(value);
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(integers, vec![(1, DefRegionKind::None)]);
    assert_eq!(floats, vec![2.5]);
    assert_eq!(strings.len(), 1);
    assert_eq!(strings[0].as_str(), "a reflected string");
}

#[test]
fn nested_tuple_chain_exceeds_flat_arity() {
    let root = array(vec![1i64, 2, 3]);
    let mut integers = Vec::new();
    let mut objects = 0;
    let mut others = 0;
    assert!(structural::walk(
        &root,
        (
            (
                |_value: f64| WalkResult::Advance,
                |_value: bool| WalkResult::Advance,
                |_value: tvm_ffi::String| WalkResult::Advance,
                |_value: Array<f64>| WalkResult::Advance,
                |_value: f32| WalkResult::Advance,
                |_value: tvm_ffi::Device| WalkResult::Advance,
                |_value: Array<bool>| WalkResult::Advance,
                |_value: Array<tvm_ffi::String>| WalkResult::Advance,
                |_value: Map<FfiString, i64>| WalkResult::Advance,
                |_value: Map<i64, i64>, _kind: DefRegionKind| WalkResult::Advance,
                |_value: Array<Array<i64>>| WalkResult::Advance,
                |_value: tvm_ffi::Function| WalkResult::Advance,
            ),
            (
                |value: i64| {
                    integers.push(value);
                    WalkResult::Advance
                },
                (
                    |_object: &AnyObject, _kind: DefRegionKind| {
                        objects += 1;
                        WalkResult::Advance
                    },
                    (|_value: &VisitValue, _kind: DefRegionKind| {
                        others += 1;
                        WalkResult::Advance
                    },),
                ),
                |_value: &VisitValue| WalkResult::Advance,
            ),
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(integers, vec![1, 2, 3]);
    assert_eq!(objects, 1);
    assert_eq!(others, 0);
}

#[test]
fn nested_tuple_first_match_order_is_flattened() {
    let root = array(vec![1i64, 2]);
    let mut first = 0;
    let mut second = 0;
    assert!(structural::walk(
        &root,
        (
            (|_value: &VisitValue| {
                first += 1;
                WalkResult::Advance
            },),
            |_value: i64| {
                second += 1;
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());
    assert_eq!(first, 3);
    assert_eq!(second, 0);
}

#[test]
fn callback_visit_defaults_only_when_no_link_matches() {
    let root = array(vec![1i64, 2]);
    let integers = Cell::new(0);
    assert!(
        structural::visit(&root, |value: i64, _visitor: &mut VisitContext<'_, ()>| {
            integers.set(integers.get() + value);
        })
        .unwrap()
        .is_none()
    );
    assert_eq!(integers.get(), 3);

    let integers = Cell::new(0);
    assert!(structural::visit(
        &root,
        (
            |_array: Array<i64>, _visitor: &mut VisitContext<'_, ()>| {},
            |value: i64, _visitor: &mut VisitContext<'_, ()>| {
                integers.set(integers.get() + value);
            },
        ),
    )
    .unwrap()
    .is_none());
    assert_eq!(integers.get(), 0);
}

#[derive(Default)]
struct StatefulVisitStats {
    arrays: usize,
    integer_sum: i64,
}

fn stateful_visit_array(
    _array: Array<i64>,
    visitor: &mut VisitContext<'_, StatefulVisitStats>,
) -> Result<Option<VisitInterrupt>> {
    visitor.state_mut().arrays += 1;
    assert!(visitor.current().cast::<Array<i64>>().is_some());
    visitor.visit_children()
}

fn stateful_visit_integer(value: i64, visitor: &mut VisitContext<'_, StatefulVisitStats>) {
    visitor.state_mut().integer_sum += value;
}

#[test]
fn stateful_callback_visit_uses_ordinary_mutable_state() {
    let root = array(vec![1i64, 2, 3]);
    let mut visitor = VisitCallbacks::new(
        StatefulVisitStats::default(),
        (stateful_visit_array, stateful_visit_integer),
    );

    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(visitor.state().arrays, 1);
    assert_eq!(visitor.state().integer_sum, 6);

    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(visitor.state().arrays, 2);
    assert_eq!(visitor.into_state().integer_sum, 12);
}

#[derive(Default)]
struct StatefulVisitDepth {
    current: usize,
    maximum: usize,
    calls: usize,
}

#[test]
fn stateful_callback_visit_reborrows_visitor_during_recursion() {
    let root = array(vec![array(vec![1i64, 2])]);
    let mut visitor = VisitCallbacks::new(
        StatefulVisitDepth::default(),
        |_value: &VisitValue, visitor: &mut VisitContext<'_, StatefulVisitDepth>| {
            visitor.state_mut().current += 1;
            visitor.state_mut().calls += 1;
            let current = visitor.state().current;
            visitor.state_mut().maximum = visitor.state().maximum.max(current);

            let outcome = visitor.visit_children();
            visitor.state_mut().current -= 1;
            outcome
        },
    );

    assert!(structural::visit(&root, &mut visitor).unwrap().is_none());
    assert_eq!(visitor.state().current, 0);
    assert_eq!(visitor.state().maximum, 3);
    assert_eq!(visitor.state().calls, 4);
}

#[test]
fn callback_visit_can_reenter_the_same_fn_through_visitor() {
    let root = array(vec![1i64, 2]);
    let visits = Cell::new(0);
    assert!(structural::visit(
        &root,
        |_value: &VisitValue, visitor: &mut VisitContext<'_, ()>| {
            visits.set(visits.get() + 1);
            visitor.visit_children()
        },
    )
    .unwrap()
    .is_none());
    assert_eq!(visits.get(), 3);
}

#[test]
fn callback_visit_tuple_is_first_match_and_can_interrupt() {
    let root = array(vec![1i64, 2, 3]);
    let fallback = Cell::new(0);
    let interrupted = structural::visit(
        &root,
        (
            |value: i64, _visitor: &mut VisitContext<'_, ()>| {
                (value == 2).then(|| VisitInterrupt::with(value))
            },
            |_value: &VisitValue, visitor: &mut VisitContext<'_, ()>| {
                fallback.set(fallback.get() + 1);
                visitor.visit_children()
            },
        ),
    )
    .unwrap()
    .unwrap();
    assert_eq!(interrupted.value.cast::<i64>().unwrap(), 2);
    assert_eq!(fallback.get(), 1);
}

#[test]
fn callback_visit_supports_node_links_and_nested_tuples() {
    let root = array(vec![1i64, 2]);
    let seen = RefCell::new(Vec::new());
    assert!(structural::visit(
        &root,
        (
            (
                |_value: f64, _visitor: &mut VisitContext<'_, ()>| {},
                |_node: &tvm_ffi::builtin::ArrayObj, visitor: &mut VisitContext<'_, ()>| {
                    assert_eq!(visitor.def_region_kind(), DefRegionKind::None);
                    visitor.visit_children()
                },
            ),
            |value: i64, visitor: &mut VisitContext<'_, ()>| {
                seen.borrow_mut().push((value, visitor.def_region_kind()));
            },
        ),
    )
    .unwrap()
    .is_none());
    assert_eq!(
        *seen.borrow(),
        vec![(1, DefRegionKind::None), (2, DefRegionKind::None)]
    );
}

#[test]
fn callback_visit_with_overrides_child_def_region() {
    let root = array(vec![1i64, 2]);
    let seen = RefCell::new(Vec::new());
    assert!(structural::visit(
        &root,
        (
            |array: Array<i64>, visitor: &mut VisitContext<'_, ()>| {
                for value in array.iter() {
                    if let Some(interrupt) = visitor.visit_with(value, DefRegionKind::Pattern)? {
                        return Ok(Some(interrupt));
                    }
                }
                Ok(None)
            },
            |value: i64, visitor: &mut VisitContext<'_, ()>| {
                seen.borrow_mut().push((value, visitor.def_region_kind()));
            },
        ),
    )
    .unwrap()
    .is_none());
    assert_eq!(
        *seen.borrow(),
        vec![(1, DefRegionKind::Pattern), (2, DefRegionKind::Pattern),]
    );
}

#[test]
fn nested_callback_visit_restores_the_outer_active_visitor() {
    let outer = array(vec![10i64, 20]);
    let inner = array(vec![1i64, 2]);
    let entered_inner = Cell::new(false);
    let outer_values = RefCell::new(Vec::new());
    let inner_values = RefCell::new(Vec::new());

    assert!(structural::visit(
        &outer,
        |value: &VisitValue, visitor: &mut VisitContext<'_, ()>| {
            if let Some(value) = value.cast::<i64>() {
                outer_values.borrow_mut().push(value);
            }
            if !entered_inner.replace(true) {
                structural::visit(&inner, |value: i64, _visitor: &mut VisitContext<'_, ()>| {
                    inner_values.borrow_mut().push(value);
                })?;
            }
            visitor.visit_children()
        },
    )
    .unwrap()
    .is_none());
    assert_eq!(*outer_values.borrow(), vec![10, 20]);
    assert_eq!(*inner_values.borrow(), vec![1, 2]);
}

#[test]
fn callback_visit_panics_resume_and_leave_the_next_run_usable() {
    let root = array(vec![1i64]);
    let entered_callback = Cell::new(false);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        structural::visit(
            &root,
            |_value: i64, _visitor: &mut VisitContext<'_, ()>| -> () {
                entered_callback.set(true);
                panic!("callback visitor panic")
            },
        )
    }));
    assert!(
        entered_callback.get(),
        "panicking callback visitor was never called"
    );
    let panic = match outcome {
        Err(panic) => panic,
        Ok(Err(error)) => panic!("panicking callback visitor returned an error: {error}"),
        Ok(Ok(_)) => panic!("panicking callback visitor unexpectedly returned"),
    };
    assert_eq!(
        panic.downcast_ref::<&str>().copied(),
        Some("callback visitor panic")
    );

    let calls = Cell::new(0);
    assert!(
        structural::visit(&root, |_value: i64, _visitor: &mut VisitContext<'_, ()>| {
            calls.set(calls.get() + 1);
        })
        .unwrap()
        .is_none()
    );
    assert_eq!(calls.get(), 1);
}

// ---------------------------------------------------------------------------------------------
// test_structural_visitor_alignment.rs
// ---------------------------------------------------------------------------------------------

/// C++: class TestVisitorObj : public VisitorObj
#[derive(Default)]
struct RecordingVisitor {
    /// C++: `std::vector<ObjectRef> visited;`
    visited: Vec<String>,
    /// C++: `std::vector<TVMFFIDefRegionKind> modes;`
    modes: Vec<DefRegionKind>,
    /// C++: `ObjectRef interrupt_on;`
    interrupt_on: Option<i64>,
}

impl Visitor for RecordingVisitor {
    /// C++ analog: `TestVisitorObj::VisitImpl` — record every value together
    /// with the active def-region state, optionally interrupt with a payload,
    /// otherwise delegate recursion explicitly. The array arm mirrors
    /// `TFuncObj::StructuralVisit`.
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        let integer = value.cast::<i64>();
        let label = match integer {
            Some(integer) => integer.to_string(),
            None if value.cast::<Array<i64>>().is_some() => "array".to_string(),
            None => "obj".to_string(),
        };
        // C++: visited.push_back(value_ref);
        //      modes.push_back(def_region_mode_);
        self.visited.push(label);
        self.modes.push(def_region_kind);

        // C++: if (value_ref.same_as(interrupt_on))
        //          return VisitInterrupt(String("stop"));
        if self.interrupt_on.is_some() && integer == self.interrupt_on {
            return Ok(Some(VisitInterrupt::with(FfiString::from("stop"))));
        }

        // C++ analog: `TFuncObj::StructuralVisit` — visit "params"
        // (element 0) under a pattern definition region, then the "body"
        // (element 1) under the inherited state.
        if let Some(array) = value.cast::<Array<i64>>() {
            // C++: visitor->WithDefRegionKind(kTVMFFIDefRegionKindPattern,
            //          [&] { return visitor->VisitExpected(self->params); })
            let params = array.get(0).unwrap();
            if let Some(interrupt) = self.visit_child(params, DefRegionKind::Pattern)? {
                return Ok(Some(interrupt));
            }
            // C++: visitor->VisitExpected(self->body)  (inherits the state)
            let body = array.get(1).unwrap();
            return self.visit_child(body, def_region_kind);
        }

        // C++: return DefaultVisitExpected(value);
        self.default_visit_children(value, def_region_kind)
    }
}

/// C++ analog: TEST(Visitor, TraversesFunction) — the def-region
/// state flips to Recursive under "params" and back to None for the "body".
#[test]
fn records_values_and_def_region_modes() {
    let root = array(vec![10i64, 20]);
    let mut visitor = RecordingVisitor::default();

    let outcome = structural::visit(&root, &mut visitor).unwrap();

    assert!(outcome.is_none());
    assert_eq!(visitor.visited, vec!["array", "10", "20"]);
    assert_eq!(
        visitor.modes,
        vec![
            DefRegionKind::None,    // the array itself
            DefRegionKind::Pattern, // element 0: the "params" position
            DefRegionKind::None,    // element 1: the "body" position
        ]
    );
}

/// C++ analog: TEST(Visitor, StopsOnInterrupt) — the traversal
/// halts at the marked value and the payload reaches the caller.
#[test]
fn stops_on_interrupt_with_payload() {
    let root = array(vec![10i64, 20]);
    let mut visitor = RecordingVisitor {
        interrupt_on: Some(20),
        ..RecordingVisitor::default()
    };

    let outcome = structural::visit(&root, &mut visitor).unwrap();

    let Some(interrupt) = outcome else {
        panic!("traversal unexpectedly completed");
    };
    assert_eq!(
        interrupt.value.cast::<FfiString>().unwrap().as_str(),
        "stop"
    );
    assert_eq!(visitor.visited, vec!["array", "10", "20"]);
}

// ---------------------------------------------------------------------------------------------
// test_structural_mutate.rs
// ---------------------------------------------------------------------------------------------

/// `test_structural_mutate.rs`, in a module of its own: two of its test names are also test names
/// of `test_structural_visit.rs`.
mod structural_mutate {
    use super::*;

    struct IncrementIntegers;

    impl MapDispatch for IncrementIntegers {
        fn dispatch_map(
            &mut self,
            value: &MapValue,
            _def_region_kind: DefRegionKind,
        ) -> Option<Result<Any>> {
            value.cast::<i64>().map(|integer| Ok(Any::new(integer + 1)))
        }
    }

    #[derive(Default)]
    struct ManualIncrement {
        remap: VarRemap,
    }

    impl Mutator for ManualIncrement {
        fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
            if let Some(integer) = value.cast::<i64>() {
                Ok(Any::new(integer + 1))
            } else {
                self.default_mutate(value, def_region_kind)
            }
        }

        fn maybe_inplace_mutate(
            &mut self,
            value: InplaceValue<'_>,
            def_region_kind: DefRegionKind,
        ) -> Result<Any> {
            self.default_maybe_inplace_mutate(value, def_region_kind)
        }

        fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
            self.remap.get(var)
        }

        fn var_remap_set(&mut self, var: &MapValue, mapped_value: &Any) -> Result<()> {
            self.remap.set(var, mapped_value)
        }
    }

    #[derive(Default)]
    struct ReplaceNone {
        remap: VarRemap,
        calls: usize,
    }

    impl Mutator for ReplaceNone {
        fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
            if value.type_index() == sys::type_index::kTVMFFINone {
                self.calls += 1;
                Ok(Any::new(8i64))
            } else {
                self.default_mutate(value, def_region_kind)
            }
        }

        fn maybe_inplace_mutate(
            &mut self,
            value: InplaceValue<'_>,
            def_region_kind: DefRegionKind,
        ) -> Result<Any> {
            self.default_maybe_inplace_mutate(value, def_region_kind)
        }

        fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
            self.remap.get(var)
        }

        fn var_remap_set(&mut self, var: &MapValue, mapped_value: &Any) -> Result<()> {
            self.remap.set(var, mapped_value)
        }
    }

    struct RecursiveEntryMutator {
        remap: VarRemap,
        use_owned_value: bool,
        owned_value_pointer: Option<usize>,
    }

    impl Mutator for RecursiveEntryMutator {
        fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
            if value.type_index() == sys::type_index::kTVMFFINone {
                if self.use_owned_value {
                    let value = array([1i64]);
                    self.owned_value_pointer = Some(array_pointer(&value));
                    self.maybe_inplace_mutate_child(value, def_region_kind)
                } else {
                    self.mutate_child(1i64, def_region_kind)
                }
            } else if let Some(integer) = value.cast::<i64>() {
                Ok(Any::new(integer + 1))
            } else {
                self.default_mutate(value, def_region_kind)
            }
        }

        fn maybe_inplace_mutate(
            &mut self,
            value: InplaceValue<'_>,
            def_region_kind: DefRegionKind,
        ) -> Result<Any> {
            self.default_maybe_inplace_mutate(value, def_region_kind)
        }

        fn var_remap_get(&mut self, var: &MapValue) -> Result<Option<Any>> {
            self.remap.get(var)
        }

        fn var_remap_set(&mut self, var: &MapValue, mapped_value: &Any) -> Result<()> {
            self.remap.set(var, mapped_value)
        }
    }

    /// Upstream's `reflected_object()`: a C++ `testing.TestObjectBase` (here the Rust type of this
    /// file, whose `Clone` is its shallow copy).
    fn reflected_object() -> Any {
        Any::new(ObjectRef::new(TestObjectBase {
            v_i64: 1,
            v_f64: 2.5,
            v_str: "a reflected string".into(),
        }))
    }

    /// A type with a structural field but no shallow copy (not `Clone`): upstream's C++
    /// `testing.TestNonCopyable`, which deletes its copy constructor.
    #[derive(tvm_ffi::Object)]
    #[ffi_type(
        key = "upstream_structural_0115.TestNonCopyable",
        structural = "tree",
        final
    )]
    #[repr(C)]
    pub struct TestNonCopyable {
        pub value: i64,
    }

    fn test_object_base(value: &Any) -> ObjectRef<TestObjectBase> {
        value.cast::<ObjectRef<TestObjectBase>>().unwrap()
    }

    fn array_pointer<T>(array: &Array<T>) -> usize {
        array.as_object_ref().as_raw().as_ptr() as usize
    }

    fn map_pointer<K, V>(map: &Map<K, V>) -> usize {
        map.as_object_ref().as_raw().as_ptr() as usize
    }

    fn any_object_pointer(value: &Any) -> usize {
        value
            .cast::<ObjectRef<AnyObject>>()
            .unwrap()
            .as_raw()
            .as_ptr() as usize
    }

    fn to_array(value: Any) -> Result<Array<i64>> {
        value.cast::<Array<i64>>()
    }

    fn list_item(list: &Any, index: usize) -> i64 {
        list.cast::<List<i64>>().unwrap().get(index).unwrap()
    }

    fn array_item(array: &Any, index: usize) -> Any {
        array.cast::<Array<Any>>().unwrap().get(index).unwrap()
    }

    fn dict_item(dict: &Any, key: i64) -> i64 {
        dict.cast::<Dict<i64, i64>>().unwrap().get(key).unwrap()
    }

    fn new_dict(key: i64, value: i64) -> Any {
        Any::new(Dict::<i64, i64>::new([(key, value)]).unwrap())
    }

    #[test]
    fn unique_array_is_reused_while_shared_array_uses_copy_on_write() {
        let unique = array([1i64, 2, 3]);
        let unique_pointer = array_pointer(&unique);
        let mapped = structural::map(unique, &mut IncrementIntegers, WalkOrder::PostOrder)
            .and_then(to_array)
            .unwrap();
        assert_eq!(array_pointer(&mapped), unique_pointer);
        assert_eq!(mapped.to_vec(), vec![2, 3, 4]);

        let source = array([4i64, 5]);
        let source_pointer = array_pointer(&source);
        let mapped = structural::map(source.clone(), &mut IncrementIntegers, WalkOrder::PostOrder)
            .and_then(to_array)
            .unwrap();
        assert_ne!(array_pointer(&mapped), source_pointer);
        assert_eq!(source.to_vec(), vec![4, 5]);
        assert_eq!(mapped.to_vec(), vec![5, 6]);
    }

    #[test]
    fn user_driven_mutator_controls_default_recursion_and_in_place_opt_in() {
        let unique = array([1i64, 2]);
        let unique_pointer = array_pointer(&unique);
        let mutated = structural::mutate(unique, ManualIncrement::default())
            .and_then(to_array)
            .unwrap();
        assert_eq!(array_pointer(&mutated), unique_pointer);
        assert_eq!(mutated.to_vec(), vec![2, 3]);

        let source = array([3i64]);
        let source_pointer = array_pointer(&source);
        let mutated = structural::mutate(source.clone(), ManualIncrement::default())
            .and_then(to_array)
            .unwrap();
        assert_ne!(array_pointer(&mutated), source_pointer);
        assert_eq!(source.get(0).unwrap(), 3);
        assert_eq!(mutated.get(0).unwrap(), 4);

        let map = Map::<i64, i64>::new([(1, 10)]).unwrap();
        let source_map_pointer = map_pointer(&map);
        let mutated_map = structural::mutate(map, ManualIncrement::default())
            .and_then(|value| value.cast::<Map<i64, i64>>())
            .unwrap();
        assert_eq!(map_pointer(&mutated_map), source_map_pointer);
        assert_eq!(mutated_map.get(1).unwrap(), 11);

        let dict = new_dict(1, 10);
        let dict_pointer = any_object_pointer(&dict);
        let mutated_dict = structural::mutate(dict, ManualIncrement::default()).unwrap();
        assert_eq!(any_object_pointer(&mutated_dict), dict_pointer);
        assert_eq!(dict_item(&mutated_dict, 1), 11);
    }

    #[test]
    fn none_values_are_dispatched_to_map_callbacks_and_user_mutators() {
        let mut map_calls = 0;
        let mapped = structural::map(
            Any::none(),
            |value: &MapValue| {
                map_calls += 1;
                assert_eq!(value.type_index(), sys::type_index::kTVMFFINone);
                Any::new(7i64)
            },
            WalkOrder::PostOrder,
        )
        .and_then(|value| value.cast::<i64>())
        .unwrap();
        assert_eq!(mapped, 7);
        assert_eq!(map_calls, 1);

        let mut mutator = ReplaceNone::default();
        let mutated = structural::mutate(Any::none(), &mut mutator)
            .and_then(|value| value.cast::<i64>())
            .unwrap();
        assert_eq!(mutated, 8);
        assert_eq!(mutator.calls, 1);
    }

    #[test]
    fn user_mutator_recursive_entries_reenter_the_same_mutator() {
        let mut borrowed = RecursiveEntryMutator {
            remap: VarRemap::default(),
            use_owned_value: false,
            owned_value_pointer: None,
        };
        let mutated = structural::mutate(Any::none(), &mut borrowed)
            .and_then(|value| value.cast::<i64>())
            .unwrap();
        assert_eq!(mutated, 2);

        let mut owned = RecursiveEntryMutator {
            remap: VarRemap::default(),
            use_owned_value: true,
            owned_value_pointer: None,
        };
        let mutated = structural::mutate(Any::none(), &mut owned)
            .and_then(to_array)
            .unwrap();
        assert_eq!(array_pointer(&mutated), owned.owned_value_pointer.unwrap());
        assert_eq!(mutated.get(0).unwrap(), 2);
    }

    #[test]
    fn default_mutation_mode_preserves_ownership_and_unchanged_results() {
        struct Controlled {
            mode: InplaceMode,
            increment: bool,
        }
        impl Mutator for Controlled {
            fn mutate(&mut self, value: &MapValue, _: DefRegionKind) -> Result<Any> {
                let integer = value.cast::<i64>().unwrap();
                Ok(if self.increment {
                    Any::new(integer + 1)
                } else {
                    Any::new(Unchanged)
                })
            }
            fn maybe_inplace_mutate(
                &mut self,
                value: InplaceValue<'_>,
                kind: DefRegionKind,
            ) -> Result<Any> {
                if self.increment {
                    self.default_maybe_inplace_mutate_with_mode(value, kind, self.mode)
                } else {
                    let result =
                        self.default_maybe_inplace_mutate_with_mode_result(value, kind, self.mode)?;
                    assert!(result.is_unchanged());
                    Ok(Any::new(result))
                }
            }
        }
        for mode in [InplaceMode::Disallow, InplaceMode::Allow] {
            for increment in [false, true] {
                let root = array(vec![1_i64]);
                let pointer = array_pointer(&root);
                let result = structural::mutate(root, &mut Controlled { mode, increment })
                    .and_then(to_array)
                    .unwrap();
                assert_eq!(
                    array_pointer(&result) == pointer,
                    mode == InplaceMode::Allow || !increment
                );
                assert_eq!(result.get(0).unwrap(), if increment { 2 } else { 1 });
            }
        }
    }

    #[test]
    fn owned_entry_mode_is_forwarded_by_generated_and_closure_callbacks() {
        struct Entry {
            mode: InplaceMode,
            pointer: usize,
        }
        // Upstream's handlers take `&mut Mutator`; here they recurse through the type's own
        // `Mutator` methods and take the region as a trailing `DefRegionKind`.
        #[dispatch(mutate)]
        impl Entry {
            fn mutate_bool(&mut self, _: bool) -> Result<Any> {
                let child = array(vec![1_i64]);
                self.pointer = array_pointer(&child);
                let mode = self.mode;
                self.maybe_inplace_mutate_child_with_mode(child, DefRegionKind::Pattern, mode)
            }
            fn mutate_integer(&mut self, value: i64, kind: DefRegionKind) -> i64 {
                assert_eq!(kind, DefRegionKind::Pattern);
                value + 1
            }
        }
        assert_eq!(InplaceMode::default(), InplaceMode::Disallow);
        for mode in [InplaceMode::Disallow, InplaceMode::Allow] {
            let mut entry = Entry { mode, pointer: 0 };
            let result = structural::mutate(true, &mut entry)
                .and_then(to_array)
                .unwrap();
            assert_eq!(
                array_pointer(&result) == entry.pointer,
                mode == InplaceMode::Allow
            );
            assert_eq!(result.get(0).unwrap(), 2);

            let pointer = Cell::new(0usize);
            let result = structural::mutate(
                true,
                (
                    |_: bool, ctx: &mut MutateContext<'_>| {
                        let child = array(vec![1_i64]);
                        pointer.set(array_pointer(&child));
                        ctx.maybe_inplace_mutate_with_mode(child, DefRegionKind::Pattern, mode)
                    },
                    |value: i64, ctx: &mut MutateContext<'_>| {
                        assert_eq!(ctx.def_region_kind(), DefRegionKind::Pattern);
                        value + 1
                    },
                ),
            )
            .and_then(to_array)
            .unwrap();
            assert_eq!(
                array_pointer(&result) == pointer.get(),
                mode == InplaceMode::Allow
            );
            assert_eq!(result.get(0).unwrap(), 2);
        }
    }

    #[test]
    fn consuming_callbacks_forward_permissions_without_temporary_owners() {
        struct Forward {
            requested: InplaceMode,
            retain: bool,
            alias: Option<Any>,
            modes: Vec<InplaceMode>,
        }
        impl Forward {
            fn observe(&mut self, value: &MutateValue<'_, Array<Any>>) {
                self.modes.push(value.inplace_mode());
                let node = value.as_node::<ArrayObj>().unwrap();
                assert_eq!(node.seq.size, 1);
                // A temporary typed handle must not permanently revoke permission.
                let temporary = value.cast::<Array<Any>>().unwrap();
                if self.retain && self.alias.is_none() {
                    self.alias = Some(Any::new(temporary.clone()));
                }
                drop(temporary);
            }
        }
        // Upstream's handlers read the permission from their `&mut Mutator` context too; here
        // the handle is the one place it lives.
        #[dispatch(mutate)]
        impl Forward {
            fn mutate_string(&mut self, _: MutateValue<'_, FfiString>) -> Any {
                panic!("typed miss must preserve the capability for the next handler")
            }
            fn mutate_array(
                &mut self,
                value: MutateValue<'_, Array<Any>>,
                kind: DefRegionKind,
            ) -> Result<UnchangedOr<Any>> {
                self.observe(&value);
                let requested = self.requested;
                self.default_maybe_inplace_mutate_with_mode_result(value, kind, requested)
            }
            fn mutate_integer(&mut self, value: MutateValue<'_, i64>) -> i64 {
                assert_eq!(value.inplace_mode(), InplaceMode::Disallow);
                value.cast::<i64>().unwrap() + 1
            }
        }
        use InplaceMode::{Allow, Disallow};
        for (requested, shared, retain) in [
            (Allow, false, false),
            (Disallow, false, false),
            (Allow, true, false),
            (Allow, false, true),
        ] {
            for generated in [true, false] {
                let child = array(vec![1_i64]);
                let child_ptr = array_pointer(&child);
                let root = array(vec![child]);
                let root_ptr = array_pointer(&root);
                let original = shared.then(|| root.clone());
                let mut state = Forward {
                    requested,
                    retain,
                    alias: None,
                    modes: vec![],
                };
                let result = if generated {
                    structural::mutate(root, &mut state).unwrap()
                } else {
                    let miss = |_: MutateValue<'_, FfiString>,
                                _: &mut MutateContext<'_, Forward>|
                     -> Any { panic!("typed miss must continue") };
                    let increment = |value: i64, _: &mut MutateContext<'_, Forward>| value + 1;
                    let descend =
                        |value: MutateValue<'_, Array<Any>>,
                         ctx: &mut MutateContext<'_, Forward>| {
                            assert_eq!(value.inplace_mode(), ctx.inplace_mode());
                            ctx.state_mut().observe(&value);
                            let requested = ctx.state().requested;
                            ctx.default_mutate_with_mode(value, requested)
                        };
                    let mut callbacks = MutateCallbacks::new(state, (miss, (increment, descend)));
                    let result = structural::mutate(root, &mut callbacks).unwrap();
                    state = callbacks.into_state();
                    result
                };
                let result = result.cast::<Array<Array<i64>>>().unwrap();
                let child = result.get(0).unwrap();
                let reuse = requested == Allow && !shared && !retain;
                assert_eq!(
                    state.modes,
                    vec![
                        if shared { Disallow } else { Allow },
                        if reuse { Allow } else { Disallow }
                    ]
                );
                assert_eq!(array_pointer(&result) == root_ptr, reuse);
                assert_eq!(array_pointer(&child) == child_ptr, reuse);
                assert_eq!(child.get(0).unwrap(), 2);
                for alias in original.map(Any::new).into_iter().chain(state.alias) {
                    let alias = alias.cast::<Array<Array<i64>>>().unwrap();
                    assert_eq!(alias.get(0).unwrap().get(0).unwrap(), 1);
                }
            }
        }
    }

    #[test]
    fn consuming_default_descent_transfers_between_contexts_without_node_borrows() {
        struct Inner<'a> {
            value: Option<MutateValue<'a>>,
            preserve_unchanged: bool,
            result: Any,
        }
        #[dispatch(mutate)]
        impl Inner<'_> {
            fn mutate_bool(&mut self, _: bool, kind: DefRegionKind) -> Result<Any> {
                let value = self.value.take().unwrap();
                self.result = if self.preserve_unchanged {
                    Any::new(self.default_maybe_inplace_mutate_result(value, kind)?)
                } else {
                    self.default_maybe_inplace_mutate(value, kind)?
                };
                Ok(Any::none())
            }
            fn mutate_integer(&mut self, value: i64) -> i64 {
                value + 1
            }
        }
        fn transfer(
            value: MutateValue<'_>,
            generated: bool,
            preserve: bool,
            retain: bool,
        ) -> Result<Any> {
            let alias = retain.then(|| value.cast::<Array<i64>>().unwrap());
            assert_eq!(value.inplace_mode(), InplaceMode::Allow);
            // Carry the result back to the array callback: Unchanged belongs to
            // that input, not to the nested traversal's boolean root.
            let mut inner = Inner {
                value: Some(value),
                preserve_unchanged: preserve,
                result: Any::none(),
            };
            let result = if generated {
                structural::mutate(true, &mut inner)?;
                inner.result
            } else {
                let mut callbacks = MutateCallbacks::new(
                    inner,
                    (
                        |_: bool, ctx: &mut MutateContext<'_, Inner<'_>>| -> Result<Any> {
                            let value = ctx.state_mut().value.take().unwrap();
                            let result = if ctx.state().preserve_unchanged {
                                Any::new(ctx.default_maybe_inplace_mutate_result(value)?)
                            } else {
                                ctx.default_maybe_inplace_mutate(value)?
                            };
                            ctx.state_mut().result = result;
                            Ok(Any::none())
                        },
                        |value: i64, _: &mut MutateContext<'_, Inner<'_>>| value + 1,
                    ),
                );
                structural::mutate(true, &mut callbacks)?;
                callbacks.into_state().result
            };
            if let Some(alias) = alias {
                assert_eq!(alias.get(0), Some(1));
            }
            Ok(result)
        }
        struct Outer {
            preserve: bool,
            retain: bool,
        }
        #[dispatch(mutate)]
        impl Outer {
            fn mutate_any(&mut self, value: MutateValue<'_>) -> Result<Any> {
                transfer(value, true, self.preserve, self.retain)
            }
        }
        for preserve in [false, true] {
            for retain in [false, true] {
                for generated in [false, true] {
                    let root = array(vec![1_i64]);
                    let pointer = array_pointer(&root);
                    let result = if generated {
                        structural::mutate(root, &mut Outer { preserve, retain })
                    } else {
                        structural::mutate(
                            root,
                            |value: MutateValue<'_>, _: &mut MutateContext<'_>| {
                                transfer(value, false, preserve, retain)
                            },
                        )
                    }
                    .and_then(to_array)
                    .unwrap();
                    assert_eq!(array_pointer(&result) == pointer, !retain);
                    assert_eq!(result.get(0).unwrap(), 2);
                }
            }
        }
    }

    #[test]
    fn consuming_default_descent_preserves_unchanged_and_propagates_errors() {
        for fail in [false, true] {
            let root = array(vec![1_i64]);
            let pointer = array_pointer(&root);
            let result = structural::mutate(
                root,
                |value: MutateValue<'_>, ctx: &mut MutateContext<'_>| -> Result<UnchangedOr<Any>> {
                    if value.cast::<i64>().is_some() {
                        return if fail {
                            Err(runtime_error("child failed"))
                        } else {
                            Ok(UnchangedOr::unchanged())
                        };
                    }
                    let result = ctx.default_maybe_inplace_mutate_result(value)?;
                    assert!(result.is_unchanged());
                    Ok(result)
                },
            );
            if fail {
                assert_eq!(result.unwrap_err().message(), "child failed");
            } else {
                let result = to_array(result.unwrap()).unwrap();
                assert_eq!(array_pointer(&result), pointer);
            }
        }
    }

    #[test]
    fn reflected_fields_use_shallow_copy_and_setters() {
        let source = reflected_object();
        let mut regions = Vec::new();
        let mapped = structural::map(
            source.clone(),
            |integer: i64, kind: DefRegionKind| {
                regions.push(kind);
                Any::new(integer + 1)
            },
            WalkOrder::PostOrder,
        )
        .unwrap();

        assert_ne!(any_object_pointer(&mapped), any_object_pointer(&source));
        assert_eq!(test_object_base(&source).v_i64, 1);
        assert_eq!(test_object_base(&mapped).v_i64, 2);
        assert_eq!(test_object_base(&mapped).v_f64, 2.5);
        assert_eq!(
            test_object_base(&mapped).v_str.as_str(),
            "a reflected string"
        );
        assert_eq!(regions, vec![DefRegionKind::None]);
    }

    #[test]
    fn reflected_no_change_returns_original() {
        let source = reflected_object();
        let mapped = structural::map(
            source.clone(),
            |string: FfiString| Any::new(string),
            WalkOrder::PostOrder,
        )
        .unwrap();

        assert_eq!(any_object_pointer(&mapped), any_object_pointer(&source));
    }

    #[test]
    fn native_unchanged_hook_returns_original_without_exposing_marker() {
        let source = Any::new(FfiString::from("unchanged"));
        let source_pointer = any_object_pointer(&source);
        let mutated = structural::mutate(source, ManualIncrement::default()).unwrap();

        assert_eq!(any_object_pointer(&mutated), source_pointer);
        assert_ne!(
            mutated.as_raw().type_index,
            sys::type_index::kTVMFFIUnchanged
        );
    }

    #[test]
    fn reflected_object_without_shallow_copy_is_rejected_even_when_unchanged() {
        let source = ObjectRef::new(TestNonCopyable { value: 1 });
        // Leave its integer field unmatched to test the unchanged-object path.
        let error = match structural::map(
            source,
            |string: FfiString| Any::new(string),
            WalkOrder::PostOrder,
        ) {
            Ok(_) => panic!("reflected object without a shallow-copy hook unexpectedly succeeded"),
            Err(error) => error,
        };
        assert!(error.message().contains("__ffi_shallow_copy__"));
    }

    #[test]
    fn callback_panics_resume_after_the_registered_hook_returns() {
        let panic = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            structural::map(
                array([1i64]),
                |_integer: i64| -> Any { panic!("mapper panic") },
                WalkOrder::PostOrder,
            )
        })) {
            Err(panic) => panic,
            Ok(_) => panic!("panicking mapper unexpectedly returned"),
        };

        let message = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
        assert_eq!(message, Some("mapper panic"));

        let mapped = structural::map(
            array([1i64]),
            |integer: i64| Any::new(integer + 1),
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.get(0).unwrap(), 2);
    }

    #[test]
    fn unique_map_reuses_nested_unique_value_storage() {
        let child = array([1i64, 2]);
        let child_pointer = array_pointer(&child);
        let source = Map::<i64, Array<i64>>::new([(1, child)]).unwrap();
        let source_pointer = map_pointer(&source);

        let mapped = structural::map(source, &mut IncrementIntegers, WalkOrder::PostOrder)
            .and_then(|value| value.cast::<Map<i64, Array<i64>>>())
            .unwrap();
        let mapped_child = mapped.get(1).unwrap();

        assert_eq!(map_pointer(&mapped), source_pointer);
        assert_eq!(array_pointer(&mapped_child), child_pointer);
        assert_eq!(mapped_child.to_vec(), vec![2, 3]);
    }

    #[test]
    fn shared_map_and_dict_copy_only_when_a_value_changes() {
        let source = Map::<i64, i64>::new([(1, 10)]).unwrap();
        let source_pointer = map_pointer(&source);
        let unchanged = structural::map(
            source.clone(),
            |value: FfiString| Any::new(value),
            WalkOrder::PostOrder,
        )
        .and_then(|value| value.cast::<Map<i64, i64>>())
        .unwrap();
        assert_eq!(map_pointer(&unchanged), source_pointer);

        let mapped = structural::map(source.clone(), &mut IncrementIntegers, WalkOrder::PostOrder)
            .and_then(|value| value.cast::<Map<i64, i64>>())
            .unwrap();
        assert_ne!(map_pointer(&mapped), source_pointer);
        assert_eq!(source.get(1).unwrap(), 10);
        assert_eq!(mapped.get(1).unwrap(), 11);

        let dict = new_dict(1, 10);
        let dict_pointer = any_object_pointer(&dict);
        let unchanged_dict = structural::map(
            dict.clone(),
            |value: FfiString| Any::new(value),
            WalkOrder::PostOrder,
        )
        .unwrap();
        assert_eq!(any_object_pointer(&unchanged_dict), dict_pointer);

        let mapped_dict =
            structural::map(dict.clone(), &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
        assert_ne!(any_object_pointer(&mapped_dict), dict_pointer);
        assert_eq!(dict_item(&dict, 1), 10);
        assert_eq!(dict_item(&mapped_dict, 1), 11);
    }

    #[test]
    fn shared_map_callback_error_preserves_source_and_reports_object_context() {
        let source = Map::<i64, i64>::new([(1, 10), (2, 20)]).unwrap();
        let error = match structural::map(
            source.clone(),
            |_integer: i64| -> Result<i64> {
                Err(Error::with_backtrace(
                    ErrorKind::Runtime,
                    "map mapper failed",
                    "origin",
                ))
            },
            WalkOrder::PostOrder,
        ) {
            Ok(_) => panic!("fallible map mapper unexpectedly succeeded"),
            Err(error) => error,
        };

        assert_eq!(source.get(1).unwrap(), 10);
        assert_eq!(source.get(2).unwrap(), 20);
        assert_eq!(error.message(), "map mapper failed");
        assert!(error.backtrace().contains("origin"));
        assert!(error.backtrace().contains("object `ffi.Map`"));
    }

    #[test]
    fn shared_outer_container_does_not_mutate_its_nested_child() {
        let nested = Any::new(List::<i64>::new([1i64]).unwrap());
        let nested_pointer = any_object_pointer(&nested);
        let outer = Any::new(array([nested]));
        // The nested List's only owning reference is the outer array's cell.
        let outer_alias = outer.clone();

        let mapped = structural::map(outer, &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
        let source_nested = array_item(&outer_alias, 0);
        let mapped_nested = array_item(&mapped, 0);
        assert_eq!(any_object_pointer(&source_nested), nested_pointer);
        assert_ne!(any_object_pointer(&mapped_nested), nested_pointer);
        assert_eq!(list_item(&source_nested, 0), 1);
        assert_eq!(list_item(&mapped_nested, 0), 2);
    }

    #[test]
    fn shared_list_uses_copy_on_write() {
        let source = Any::new(List::<i64>::new([1i64, 2]).unwrap());
        let source_pointer = any_object_pointer(&source);
        let mapped =
            structural::map(source.clone(), &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();

        assert_ne!(any_object_pointer(&mapped), source_pointer);
        assert_eq!((list_item(&mapped, 0), list_item(&mapped, 1)), (2, 3));
        assert_eq!((list_item(&source, 0), list_item(&source, 1)), (1, 2));
    }

    #[derive(Default)]
    struct GeneratedMapper {
        integers: Vec<(i64, DefRegionKind)>,
        catch_all: usize,
    }

    #[dispatch(map)]
    impl GeneratedMapper {
        fn map_integer(&mut self, value: i64, kind: DefRegionKind) -> Any {
            self.integers.push((value, kind));
            Any::new(value + 1)
        }

        fn map_any(&mut self, value: &MapValue) -> Result<Any> {
            self.catch_all += 1;
            Ok(value.to_owned())
        }
    }

    #[test]
    fn generated_map_dispatch_supports_kind_and_ordered_catch_all() {
        let mut mapper = GeneratedMapper::default();
        let mapped = structural::map(array([1i64, 2]), &mut mapper, WalkOrder::PostOrder)
            .and_then(to_array)
            .unwrap();

        assert_eq!(mapped.to_vec(), vec![2, 3]);
        assert_eq!(
            mapper.integers,
            vec![(1, DefRegionKind::None), (2, DefRegionKind::None)]
        );
        assert_eq!(mapper.catch_all, 1);
    }

    #[derive(Default)]
    struct GeneratedLeafDispatch {
        integers: Vec<(i64, DefRegionKind)>,
    }

    // Upstream's handlers take a trailing `&mut Mutator` context (its region, its recursion);
    // here a trailing `DefRegionKind`, the recursion being the type's own `Mutator` methods.
    #[dispatch(mutate)]
    impl GeneratedLeafDispatch {
        fn mutate_integer(&mut self, value: i64, region: DefRegionKind) -> Any {
            self.integers.push((value, region));
            Any::new(value + 1)
        }
    }

    struct GeneratedStatelessDispatch;

    #[dispatch(mutate)]
    impl GeneratedStatelessDispatch {
        fn mutate_integer(&mut self, value: i64) -> i64 {
            value + 1
        }
    }

    #[test]
    fn generated_stateless_mutate_dispatch_is_a_direct_callback() {
        assert_eq!(
            structural::mutate(1i64, GeneratedStatelessDispatch)
                .and_then(|value| value.cast::<i64>())
                .unwrap(),
            2
        );
    }

    #[test]
    fn generated_mutate_dispatch_defaults_unmatched_values_and_preserves_inplace_permit() {
        let root = array([1i64, 2]);
        let root_pointer = array_pointer(&root);
        let mut mutator = GeneratedLeafDispatch::default();
        let mutated = structural::mutate(root, &mut mutator)
            .and_then(to_array)
            .unwrap();

        assert_eq!(array_pointer(&mutated), root_pointer);
        assert_eq!(mutated.to_vec(), vec![2, 3]);
        assert_eq!(
            mutator.integers,
            vec![(1, DefRegionKind::None), (2, DefRegionKind::None)]
        );
    }

    #[derive(Default)]
    struct GeneratedRecursiveDispatch {
        arrays: Vec<DefRegionKind>,
        integers: Vec<(i64, DefRegionKind)>,
    }

    #[dispatch(mutate)]
    impl GeneratedRecursiveDispatch {
        fn mutate_array(&mut self, array: Array<i64>, region: DefRegionKind) -> Result<Array<i64>> {
            self.arrays.push(region);
            let mut mutated = Vec::with_capacity(array.len());
            for value in array.iter() {
                mutated.push(self.mutate_child(value, region)?.cast::<i64>()?);
            }
            Array::new(mutated)
        }

        fn mutate_integer(&mut self, value: i64, region: DefRegionKind) -> Any {
            self.integers.push((value, region));
            Any::new(value + 10)
        }
    }

    #[test]
    fn generated_mutate_dispatch_recurses_through_context() {
        let mut mutator = GeneratedRecursiveDispatch::default();
        let mutated = structural::mutate(array([1i64, 2]), &mut mutator)
            .and_then(to_array)
            .unwrap();

        assert_eq!(mutated.to_vec(), vec![11, 12]);
        assert_eq!(mutator.arrays, vec![DefRegionKind::None]);
        assert_eq!(
            mutator.integers,
            vec![(1, DefRegionKind::None), (2, DefRegionKind::None)]
        );
    }

    #[derive(Default)]
    struct GeneratedDefaultingDispatch {
        preserve_unchanged: bool,
        arrays: usize,
        integers: Vec<i64>,
    }

    #[dispatch(mutate)]
    impl GeneratedDefaultingDispatch {
        fn mutate_array(&mut self, array: Array<i64>, region: DefRegionKind) -> Result<Any> {
            self.arrays += 1;
            if self.preserve_unchanged {
                self.default_mutate_value_result(&array, region)
                    .map(Any::new)
            } else {
                self.default_mutate_value(&array, region)
            }
        }

        fn mutate_integer(&mut self, value: i64) -> Any {
            self.integers.push(value);
            Any::new(value + 1)
        }
    }

    #[test]
    fn generated_mutate_dispatch_can_default_recurse_from_a_typed_handler() {
        for preserve_unchanged in [false, true] {
            let mut mutator = GeneratedDefaultingDispatch {
                preserve_unchanged,
                ..Default::default()
            };
            let mutated = structural::mutate(array([1i64, 2]), &mut mutator)
                .and_then(to_array)
                .unwrap();

            assert_eq!(mutated.to_vec(), vec![2, 3]);
            assert_eq!(mutator.arrays, 1);
            assert_eq!(mutator.integers, vec![1, 2]);
        }
    }

    #[test]
    fn closures_and_tuples_use_ordered_first_match() {
        let root = array([1i64, 2]);
        let mapped = structural::map(
            root,
            |integer: i64| Any::new(integer + 10),
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.to_vec(), vec![11, 12]);

        let mut first_calls = 0;
        let mut later_calls = 0;
        let mapped = structural::map(
            array([3i64]),
            (
                |integer: i64| {
                    first_calls += 1;
                    Any::new(integer + 1)
                },
                |integer: i64| {
                    later_calls += 1;
                    Any::new(integer + 100)
                },
            ),
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.get(0).unwrap(), 4);
        assert_eq!(first_calls, 1);
        assert_eq!(later_calls, 0);
    }

    #[test]
    fn pre_order_unchanged_reuses_unmodified_subtrees() {
        let unchanged = array([1i64, 2]);
        let changed = array([-1i64, 2]);
        let source = array([unchanged.clone(), changed.clone()]);

        let mapped = structural::map(
            source.clone(),
            (
                |integer: i64| -> UnchangedOr<i64> {
                    if integer < 0 {
                        UnchangedOr::changed(0)
                    } else {
                        UnchangedOr::unchanged()
                    }
                },
                // Keeping an array still lets pre-order map transform its children.
                |_value: &MapValue| Unchanged,
            ),
            WalkOrder::PreOrder,
        )
        .and_then(|value| value.cast::<Array<Array<i64>>>())
        .unwrap();

        let mapped_unchanged = mapped.get(0).unwrap();
        let mapped_changed = mapped.get(1).unwrap();
        assert_eq!(mapped_unchanged.to_vec(), vec![1, 2]);
        assert_eq!(mapped_changed.to_vec(), vec![0, 2]);

        // Reuse the untouched subtree and copy the shared containers that changed.
        assert_eq!(array_pointer(&mapped_unchanged), array_pointer(&unchanged));
        assert_ne!(array_pointer(&mapped_changed), array_pointer(&changed));
        assert_ne!(array_pointer(&mapped), array_pointer(&source));
        assert_eq!(source.get(1).unwrap().to_vec(), vec![-1, 2]);
    }

    #[test]
    fn twelve_link_tuple_reaches_final_map_dispatch() {
        let mut final_dispatch = IncrementIntegers;
        let mapped = structural::map(
            1i64,
            (
                |_value: bool| Any::new(false),
                |_value: f64| Any::new(0.0f64),
                |value: FfiString| Any::new(value),
                |value: Function| Any::new(value),
                |_node: &MapObj| Any::none(),
                |_node: &FunctionObj| Any::none(),
                |value: Array<i64>| Any::new(value),
                |value: Array<f64>| Any::new(value),
                |value: Array<bool>| Any::new(value),
                |value: Array<FfiString>, _kind: DefRegionKind| Any::new(value),
                |value: Map<FfiString, i64>| Any::new(value),
                &mut final_dispatch,
            ),
            WalkOrder::PostOrder,
        )
        .and_then(|value| value.cast::<i64>())
        .unwrap();

        assert_eq!(mapped, 2);
    }

    #[test]
    fn nested_tuple_chain_exceeds_flat_arity() {
        let root = array([1i64, 2, 3]);
        let mut catch_all = 0;
        let mapped = structural::map(
            root,
            (
                (
                    |_value: bool| Any::new(false),
                    |_value: f64| Any::new(0.0f64),
                    |value: FfiString| Any::new(value),
                    |value: Function| Any::new(value),
                    |_node: &MapObj| Any::none(),
                    |_node: &FunctionObj| Any::none(),
                    |value: Array<f64>| Any::new(value),
                    |value: Array<bool>| Any::new(value),
                    |value: Array<Array<i64>>| Any::new(value),
                    |value: Map<FfiString, i64>| Any::new(value),
                    |value: Array<Function>, _kind: DefRegionKind| Any::new(value),
                    |value: Map<i64, i64>| Any::new(value),
                ),
                (
                    |value: i64| Any::new(value * 10),
                    (
                        |value: Array<FfiString>| Any::new(value),
                        (|value: &MapValue| {
                            catch_all += 1;
                            value.to_owned()
                        },),
                    ),
                ),
            ),
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.to_vec(), vec![10, 20, 30]);
        assert_eq!(catch_all, 1);
    }

    #[test]
    fn callbacks_run_in_the_configured_order() {
        let root = array([1i64, 2]);
        let mut pre = Vec::new();
        structural::map(
            root.clone(),
            |value: &MapValue| {
                pre.push(value.cast::<i64>());
                value.to_owned()
            },
            WalkOrder::PreOrder,
        )
        .unwrap();
        assert_eq!(pre, vec![None, Some(1), Some(2)]);

        let mut post = Vec::new();
        structural::map(
            root,
            |value: &MapValue| {
                post.push(value.cast::<i64>());
                value.to_owned()
            },
            WalkOrder::PostOrder,
        )
        .unwrap();
        assert_eq!(post, vec![Some(1), Some(2), None]);
    }

    #[test]
    fn map_keys_are_anchors_and_object_leaves_are_preserved() {
        let root = Map::<FfiString, i64>::new([("a".into(), 1i64), ("b".into(), 2i64)]).unwrap();
        let mut key_callbacks = 0;
        let mapped = structural::map(
            root,
            (
                |_key: FfiString| {
                    key_callbacks += 1;
                    Any::new(FfiString::from("changed"))
                },
                |value: i64| Any::new(value + 1),
            ),
            WalkOrder::PostOrder,
        )
        .and_then(|value| value.cast::<Map<FfiString, i64>>())
        .unwrap();
        assert_eq!(key_callbacks, 0);
        assert_eq!(mapped.get("a").unwrap(), 2);
        assert_eq!(mapped.get("b").unwrap(), 3);

        let string = FfiString::from("leaf");
        let heterogeneous = array([Any::new(1i64), Any::new(string)]);
        let mapped = structural::map(
            heterogeneous,
            |value: i64| Any::new(value + 1),
            WalkOrder::PostOrder,
        )
        .unwrap();
        assert_eq!(array_item(&mapped, 0).cast::<i64>().unwrap(), 2);
        assert_eq!(
            array_item(&mapped, 1).cast::<FfiString>().unwrap().as_str(),
            "leaf"
        );
    }

    #[test]
    fn callback_mutate_defaults_unmatched_values_and_preserves_root_permit() {
        let root = array(vec![1i64, 2]);
        let root_pointer = array_pointer(&root);
        let mutated = structural::mutate(root, |value: i64, _mutator: &mut MutateContext<'_>| {
            Any::new(value + 1)
        })
        .and_then(to_array)
        .unwrap();
        assert_eq!(array_pointer(&mutated), root_pointer);
        assert_eq!(mutated.to_vec(), vec![2, 3]);
    }

    #[derive(Default)]
    struct CallbackMutateStats {
        integers: Vec<i64>,
        defaults: usize,
    }

    fn stateful_mutate_integer(
        value: i64,
        mutator: &mut MutateContext<'_, CallbackMutateStats>,
    ) -> Any {
        mutator.state_mut().integers.push(value);
        Any::new(value + 1)
    }

    fn stateful_mutate_default(
        value: &MapValue,
        mutator: &mut MutateContext<'_, CallbackMutateStats>,
    ) -> Result<Any> {
        mutator.state_mut().defaults += 1;
        mutator.default_mutate(value)
    }

    #[test]
    fn callback_mutator_carries_reusable_mutable_state() {
        let mut mutator = MutateCallbacks::new(
            CallbackMutateStats::default(),
            (stateful_mutate_integer, stateful_mutate_default),
        );

        let first = structural::mutate(array(vec![1i64, 2]), &mut mutator)
            .and_then(to_array)
            .unwrap();
        assert_eq!(first.to_vec(), vec![2, 3]);
        assert_eq!(mutator.state().integers, vec![1, 2]);
        assert_eq!(mutator.state().defaults, 1);

        let second = structural::mutate(array(vec![3i64]), &mut mutator)
            .and_then(to_array)
            .unwrap();
        assert_eq!(second.to_vec(), vec![4]);

        let state = mutator.into_state();
        assert_eq!(state.integers, vec![1, 2, 3]);
        assert_eq!(state.defaults, 2);
    }

    #[derive(Default)]
    struct CallbackMutateDepth {
        current: usize,
        maximum: usize,
        exits: usize,
    }

    fn stateful_mutate_recursive(
        value: &MapValue,
        mutator: &mut MutateContext<'_, CallbackMutateDepth>,
    ) -> Result<Any> {
        {
            let state = mutator.state_mut();
            state.current += 1;
            state.maximum = state.maximum.max(state.current);
        }
        let mutated = mutator.default_mutate(value)?;
        {
            let state = mutator.state_mut();
            state.current -= 1;
            state.exits += 1;
        }
        Ok(mutated)
    }

    #[test]
    fn callback_mutator_state_can_change_around_recursive_reborrows() {
        let root = array(vec![array(vec![1i64, 2])]);
        let mut mutator =
            MutateCallbacks::new(CallbackMutateDepth::default(), stateful_mutate_recursive);
        let mutated = structural::mutate(root, &mut mutator)
            .and_then(|value| value.cast::<Array<Array<i64>>>())
            .unwrap();

        assert_eq!(mutated.get(0).unwrap().to_vec(), vec![1, 2]);
        assert_eq!(mutator.state().current, 0);
        assert_eq!(mutator.state().maximum, 3);
        assert_eq!(mutator.state().exits, 4);
    }

    #[test]
    fn callback_mutate_explicit_default_is_repeatable_copy_path() {
        let root = array(vec![1i64, 2]);
        let root_pointer = array_pointer(&root);
        let defaults = Cell::new(0);
        let mutated = structural::mutate(
            root,
            (
                |value: i64, _mutator: &mut MutateContext<'_>| Any::new(value + 1),
                |value: &MapValue, mutator: &mut MutateContext<'_>| -> Result<Any> {
                    defaults.set(defaults.get() + 1);
                    let first = mutator.default_mutate(value)?;
                    let second = mutator.default_mutate(value)?;
                    assert_ne!(any_object_pointer(&first), any_object_pointer(&second));
                    Ok(first)
                },
            ),
        )
        .and_then(to_array)
        .unwrap();
        assert_ne!(array_pointer(&mutated), root_pointer);
        assert_eq!(mutated.to_vec(), vec![2, 3]);
        assert_eq!(defaults.get(), 1);
    }

    #[test]
    fn callback_mutate_match_is_final_and_same_fn_can_reenter() {
        let integer_calls = Cell::new(0);
        let mutated = structural::mutate(
            array(vec![1i64]),
            (
                |_array: Array<i64>, _mutator: &mut MutateContext<'_>| Any::new(array(vec![10i64])),
                |value: i64, _mutator: &mut MutateContext<'_>| {
                    integer_calls.set(integer_calls.get() + 1);
                    Any::new(value + 1)
                },
            ),
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mutated.to_vec(), vec![10]);
        assert_eq!(integer_calls.get(), 0);

        let calls = Cell::new(0);
        let mutated = structural::mutate(
            array(vec![1i64, 2]),
            |value: &MapValue, mutator: &mut MutateContext<'_>| {
                calls.set(calls.get() + 1);
                mutator.default_mutate(value)
            },
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mutated.to_vec(), vec![1, 2]);
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn callback_mutate_supports_node_links_nested_tuples_and_reflection() {
        let root = array([
            Any::new(Function::from_packed(|_| Ok(Any::none()))),
            reflected_object(),
        ]);
        let regions = RefCell::new(Vec::new());
        let mutated = structural::mutate(
            root,
            (
                (
                    |_value: bool, _mutator: &mut MutateContext<'_>| Any::none(),
                    |_node: &FunctionObj, _mutator: &mut MutateContext<'_>| Any::new(7i64),
                ),
                |value: i64, mutator: &mut MutateContext<'_>| {
                    regions.borrow_mut().push(mutator.def_region_kind());
                    Any::new(value + 1)
                },
            ),
        )
        .unwrap();

        assert_eq!(array_item(&mutated, 0).cast::<i64>().unwrap(), 7);
        let object = array_item(&mutated, 1);
        assert_eq!(test_object_base(&object).v_i64, 2);
        assert_eq!(test_object_base(&object).v_f64, 2.5);
        assert_eq!(
            test_object_base(&object).v_str.as_str(),
            "a reflected string"
        );
        assert_eq!(*regions.borrow(), vec![DefRegionKind::None]);
    }

    #[test]
    fn callback_mutate_distinguishes_borrowed_and_owned_children() {
        let borrowed_child = array(vec![1i64]);
        let borrowed_pointer = array_pointer(&borrowed_child);
        let mutated = structural::mutate(
            true,
            (
                |_value: bool, mutator: &mut MutateContext<'_>| mutator.mutate(&borrowed_child),
                |value: i64, _mutator: &mut MutateContext<'_>| Any::new(value + 1),
            ),
        )
        .and_then(to_array)
        .unwrap();
        assert_ne!(array_pointer(&mutated), borrowed_pointer);
        assert_eq!(borrowed_child.get(0).unwrap(), 1);
        assert_eq!(mutated.get(0).unwrap(), 2);

        let owned_pointer = Cell::new(0usize);
        let mutated = structural::mutate(
            true,
            (
                |_value: bool, mutator: &mut MutateContext<'_>| {
                    let child = array(vec![1i64]);
                    owned_pointer.set(array_pointer(&child));
                    mutator.maybe_inplace_mutate(child)
                },
                |value: i64, _mutator: &mut MutateContext<'_>| Any::new(value + 1),
            ),
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(array_pointer(&mutated), owned_pointer.get());
        assert_eq!(mutated.get(0).unwrap(), 2);
    }

    #[test]
    fn nested_callback_mutate_restores_the_outer_active_mutator() {
        let mutated = structural::mutate(
            1i64,
            |value: i64, mutator: &mut MutateContext<'_>| -> Result<Any> {
                if value != 1 {
                    return Ok(Any::new(value + 1));
                }
                let inner =
                    structural::mutate(2i64, |value: i64, _mutator: &mut MutateContext<'_>| {
                        Any::new(value + 10)
                    })?;
                assert_eq!(inner.cast::<i64>().unwrap(), 12);
                mutator.mutate(3i64)
            },
        )
        .and_then(|value| value.cast::<i64>())
        .unwrap();
        assert_eq!(mutated, 4);
    }

    #[test]
    fn callback_mutate_panics_resume_and_leave_the_next_run_usable() {
        let panic = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            structural::mutate(
                array(vec![1i64]),
                |_value: i64, _mutator: &mut MutateContext<'_>| -> Any {
                    panic!("callback mutator panic")
                },
            )
        })) {
            Err(panic) => panic,
            Ok(_) => panic!("panicking callback mutator unexpectedly returned"),
        };
        assert_eq!(
            panic.downcast_ref::<&str>().copied(),
            Some("callback mutator panic")
        );

        let mutated = structural::mutate(
            array(vec![1i64]),
            |value: i64, _mutator: &mut MutateContext<'_>| Any::new(value + 1),
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mutated.get(0).unwrap(), 2);
    }

    #[test]
    fn callbacks_return_values_convertible_into_any() {
        let mapped = structural::map(
            array(vec![1i64, 2]),
            |integer: i64| integer + 10,
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.to_vec(), vec![11, 12]);

        let mapped = structural::map(
            array(vec![1i64, 2]),
            |integer: i64| -> Result<i64> { Ok(integer + 20) },
            WalkOrder::PostOrder,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mapped.to_vec(), vec![21, 22]);

        let mutated = structural::mutate(
            array(vec![1i64, 2]),
            |integer: i64, _mutator: &mut MutateContext<'_>| integer * 2,
        )
        .and_then(to_array)
        .unwrap();
        assert_eq!(mutated.to_vec(), vec![2, 4]);
    }

    #[test]
    fn recursive_mutate_returns_unchanged_or_a_replacement() {
        fn clamp_negative_integers(
            value: &MapValue,
            mutator: &mut MutateContext<'_>,
        ) -> Result<UnchangedOr<Any>> {
            if let Some(integer) = value.cast::<i64>() {
                if integer >= 0 {
                    // Keep this input without constructing an owning return value.
                    return Ok(UnchangedOr::unchanged());
                }
                return Ok(UnchangedOr::changed(Any::new(0i64)));
            }

            // Recurse into containers. Keep the unchanged marker if no child changed.
            mutator.default_mutate_result(value)
        }

        // No rewrite: the public entry resolves unchanged to the original array.
        let source = array(vec![1i64, 2]);
        let result = structural::mutate(source.clone(), clamp_negative_integers)
            .and_then(to_array)
            .unwrap();
        assert_eq!(result.to_vec(), vec![1, 2]);
        assert_eq!(array_pointer(&result), array_pointer(&source));

        // One rewrite: replace only the negative integer and keep the source intact.
        let source = array(vec![-1i64, 2]);
        let result = structural::mutate(source.clone(), clamp_negative_integers)
            .and_then(to_array)
            .unwrap();
        assert_eq!(result.to_vec(), vec![0, 2]);
        assert_ne!(array_pointer(&result), array_pointer(&source));
        assert_eq!(source.to_vec(), vec![-1, 2]);
    }

    /// Upstream's C++ `testing.TestObjectPtrHolder`: one object-valued field (its `Clone` is
    /// its shallow copy).
    #[derive(tvm_ffi::Object, Clone)]
    #[ffi_type(
        key = "upstream_structural_0115.TestObjectPtrHolder",
        structural = "tree"
    )]
    #[repr(C)]
    pub struct TestObjectPtrHolder {
        pub value: Any,
    }

    /// What upstream's C++ `testing.make_visit_region_graph(false)` builds, as its tests read
    /// it: 1 in a simple definition region, 2 in a pattern region, 3 in none.
    #[derive(tvm_ffi::Object, Clone)]
    #[ffi_type(key = "upstream_structural_0115.VisitRegionGraph", structural = "tree")]
    #[repr(C)]
    pub struct VisitRegionGraph {
        #[ffi(structural = "def-simple")]
        pub simple: i64,
        #[ffi(structural = "def-pattern")]
        pub pattern: i64,
        pub used: i64,
    }

    fn visit_region_graph() -> Any {
        Any::new(ObjectRef::new(VisitRegionGraph {
            simple: 1,
            pattern: 2,
            used: 3,
        }))
    }

    /// The objects an error's `ffi.VisitErrorContext` lists, innermost first.
    fn visit_records(error: &Error) -> Vec<Any> {
        let context = error.extra_context().unwrap();
        assert_eq!(context.type_key(), "ffi.VisitErrorContext");
        context
            .get_field::<List<Any>>("reverse_visit_pattern")
            .unwrap()
            .snapshot()
            .unwrap()
    }

    fn same_object(a: &Any, b: &Any) -> bool {
        let object = |v: &Any| v.cast::<ObjectRef<AnyObject>>().unwrap();
        object(a).ptr_eq(&object(b))
    }

    #[test]
    fn callback_errors_preserve_message_and_add_object_context() {
        // The path of an error is in the runtime's `ffi.VisitErrorContext` (the error's extra
        // context: the objects it passed through, innermost first), as upstream checks it, and
        // in this SDK's backtrace frames, checked too.
        struct Delegate(Error);
        #[dispatch(visit, policy = (DefaultContextPolicy, DefaultContextPolicy))]
        impl Delegate {
            fn visit_any(
                &mut self,
                value: &VisitValue,
                kind: DefRegionKind,
            ) -> Result<Option<VisitInterrupt>> {
                if value.cast::<i64>().is_some() {
                    return Err(self.0.clone());
                }
                self.default_visit_children(value, kind)
            }
        }
        #[dispatch(mutate, policy = (DefaultMutContextPolicy, DefaultMutContextPolicy))]
        impl Delegate {
            fn mutate_any(&mut self, value: MutateValue<'_>, kind: DefRegionKind) -> Result<Any> {
                if value.cast::<i64>().is_some() {
                    return Err(self.0.clone());
                }
                self.default_maybe_inplace_mutate(value, kind)
            }
        }
        let child = reflected_object();
        let root = Any::new(ObjectRef::new(TestObjectPtrHolder {
            value: child.clone(),
        }));
        let payload = array(vec![7i64]).into_object_ref().into_object();
        let records = List::<Any>::new([Any::none()]).unwrap();
        let context = Function::get_global_required("ffi.MakeObjectFromPackedArgs")
            .unwrap()
            .call((
                "ffi.VisitErrorContext",
                "reverse_visit_pattern",
                &records,
                "prev_error_context",
                &payload,
            ))
            .unwrap()
            .cast::<ObjectRef<AnyObject>>()
            .unwrap();
        let cause = Error::with_backtrace(ErrorKind::Runtime, "cause", "");
        let source = Error::with_cause_and_extra_context(
            ErrorKind::Runtime,
            "callback failed",
            "origin",
            Some(&cause),
            Some(&context),
        );
        let mut errors = Vec::new();
        for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
            let leaf_error = structural::map(
                1i64,
                |_value: i64| -> Result<i64> { Err(source.clone()) },
                order,
            )
            .unwrap_err();
            assert!(leaf_error.as_object_ref().ptr_eq(source.as_object_ref()));
            errors.push(
                structural::map(
                    root.clone(),
                    |_value: i64| -> Result<i64> { Err(source.clone()) },
                    order,
                )
                .unwrap_err(),
            );
            errors.push(
                structural::walk(
                    &root,
                    |_value: i64| -> Result<WalkResult> { Err(source.clone()) },
                    order,
                )
                .unwrap_err(),
            );
            let mut mapper = MapWithContextPolicy::new(
                (|_: i64| -> Result<i64> { Err(source.clone()) }).into_mapper(),
                (DefaultMutContextPolicy, DefaultMutContextPolicy),
            );
            errors.push(structural::map(root.clone(), &mut mapper, order).unwrap_err());
        }
        errors.push(
            structural::mutate(
                root.clone(),
                |_value: i64, _: &mut MutateContext<'_>| -> Result<i64> { Err(source.clone()) },
            )
            .unwrap_err(),
        );
        errors.push(
            structural::visit(
                &root,
                |_value: i64, _: &mut VisitContext<'_, ()>| -> Result<()> { Err(source.clone()) },
            )
            .unwrap_err(),
        );
        let mut mutator =
            MutateCallbacks::new((), |value: MutateValue<'_>, ctx: &mut MutateContext<'_>| {
                if value.cast::<i64>().is_some() {
                    return Err(source.clone());
                }
                ctx.default_maybe_inplace_mutate(value)
            })
            .with_policy((DefaultMutContextPolicy, DefaultMutContextPolicy));
        let mut visitor =
            VisitCallbacks::new((), |value: &VisitValue, ctx: &mut VisitContext<'_, ()>| {
                if value.cast::<i64>().is_some() {
                    return Err(source.clone());
                }
                ctx.visit_children()
            })
            .with_policy((DefaultContextPolicy, DefaultContextPolicy));
        errors.push(structural::visit(&root, &mut visitor).unwrap_err());
        errors.push(structural::mutate(root.clone(), &mut mutator).unwrap_err());
        let mut delegate = Delegate(source.clone());
        errors.push(structural::visit(&root, &mut delegate).unwrap_err());
        errors.push(structural::mutate(root.clone(), &mut delegate).unwrap_err());
        let seeded = errors[0].clone();
        assert_eq!(errors.len(), 12);
        for error in errors {
            assert_eq!(error.message(), "callback failed");
            let error_cause = error.cause_chain().unwrap();
            assert!(error_cause.as_object_ref().ptr_eq(cause.as_object_ref()));
            // The runtime's visit context: the seed record, then the objects innermost first.
            let context = error.extra_context().unwrap();
            assert_eq!(context.type_key(), "ffi.VisitErrorContext");
            let previous: ObjectRef<AnyObject> = context.get_field("prev_error_context").unwrap();
            assert!(previous.ptr_eq(&payload));
            let nodes = visit_records(&error);
            assert_eq!(nodes.len(), 3);
            assert!(nodes[0].is_none());
            assert!(same_object(&nodes[1], &child) && same_object(&nodes[2], &root));
            // SAFETY: a root and the context of an error raised while visiting it.
            let paths =
                unsafe { Function::get_global_unchecked("ffi.VisitErrorContext.FindAccessPaths") }
                    .unwrap()
                    .call((&root, &context, false))
                    .unwrap()
                    .cast::<Array<Any>>()
                    .unwrap();
            assert_eq!(paths.len(), 1);
            let repr = Function::get_global_required("ffi.ReprPrint")
                .unwrap()
                .call((paths.get(0).unwrap(),))
                .unwrap();
            assert_eq!(repr.cast::<String>().unwrap(), "<root>.value");
            let backtrace = error.backtrace();
            assert!(backtrace.starts_with("origin"));
            // Innermost first: the failing field, its object, the holder's field, the root.
            let frames = [
                "field `v_i64`",
                "object `upstream_structural_0115.TestObjectBase`",
                "field `value`",
                "object `upstream_structural_0115.TestObjectPtrHolder`",
            ];
            let positions: Vec<usize> = frames
                .iter()
                .map(|frame| {
                    backtrace
                        .find(frame)
                        .unwrap_or_else(|| panic!("{backtrace}"))
                })
                .collect();
            assert!(
                positions.windows(2).all(|pair| pair[0] < pair[1]),
                "{backtrace}"
            );
        }
        // The source error is never changed by the frames added to the errors it became.
        // The source's own context is never changed by the records of the errors it became.
        assert_eq!(records.len(), 1);
        assert_eq!(source.backtrace(), "origin");

        // Keep nonconsecutive occurrences: child -> root -> child is a distinct path.
        let error = structural::map(
            child.clone(),
            |_: i64| -> Result<i64> { Err(seeded.clone()) },
            WalkOrder::PreOrder,
        )
        .unwrap_err();
        assert_eq!(
            error
                .backtrace()
                .matches("object `upstream_structural_0115.TestObjectBase`")
                .count(),
            2
        );
        let nodes = visit_records(&error);
        assert_eq!(nodes.len(), 4);
        for (node, expected) in nodes[1..].iter().zip([&child, &root, &child]) {
            assert!(same_object(node, expected));
        }

        // The failing node may be a pre-order replacement or a post-order rebuilt parent.
        for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
            let root = array(vec![0i64]);
            let failed_node = RefCell::new(None);
            let error = structural::map(
                root.clone(),
                (
                    |value: Array<i64>| -> Result<Any> {
                        let value = if order == WalkOrder::PreOrder {
                            array(vec![1i64])
                        } else {
                            value
                        };
                        *failed_node.borrow_mut() = Some(value.clone());
                        if order == WalkOrder::PreOrder {
                            Ok(Any::new(value))
                        } else {
                            Err(runtime_error("failed"))
                        }
                    },
                    |value: i64| -> Result<i64> {
                        if order == WalkOrder::PreOrder {
                            Err(runtime_error("failed"))
                        } else {
                            Ok(value + 1)
                        }
                    },
                ),
                order,
            )
            .unwrap_err();
            // One object frame, the failing (replaced or rebuilt) array's.
            assert_eq!(error.backtrace().matches("object `ffi.Array`").count(), 1);
            let failed_node = failed_node.into_inner().unwrap();
            let nodes = visit_records(&error);
            assert_eq!(nodes.len(), 1);
            assert!(same_object(&nodes[0], &Any::new(failed_node.clone())));
            // Pre-order: the replacement `[1]`; post-order: the parent rebuilt from `[0]`.
            assert_eq!(failed_node.get(0).unwrap(), 1);
            assert_eq!(root.get(0).unwrap(), 0);
        }
    }

    #[test]
    fn pre_order_mapping_preserves_inplace_permission() {
        struct Observe<'a>(&'a Cell<Option<InplaceMode>>);
        impl<State> MutContextPolicy<State> for Observe<'_> {
            fn default_mutate(
                &self,
                value: MutateValue<'_>,
                ctx: &mut MutateContext<'_, State>,
            ) -> Result<UnchangedOr<Any>> {
                if value.type_index() >= sys::type_index::kTVMFFIStaticObjectBegin {
                    self.0.set(Some(value.inplace_mode()));
                }
                ctx.default_maybe_inplace_mutate_result(value)
            }
        }
        for with_policy in [false, true] {
            for case in ["inline", "unique", "shared", "retained"] {
                let root = match case {
                    "inline" => Any::new(true),
                    "retained" => Any::new(List::<i64>::new([1i64]).unwrap()),
                    _ => Any::new(array(vec![true])),
                };
                let root_pointer = (case == "retained").then(|| any_object_pointer(&root));
                let alias = (case == "shared").then(|| root.clone());
                let mut retained = None;
                let mut pointer = 0usize;
                let mode = Cell::new(None);
                let mut mapper = (|value: &MapValue| {
                    if let Some(integer) = value.cast::<i64>() {
                        return Any::new(integer + 1);
                    }
                    let mapped = if case == "retained" {
                        retained = Some(value.to_owned());
                        value.to_owned()
                    } else {
                        Any::new(array(vec![1_i64]))
                    };
                    pointer = any_object_pointer(&mapped);
                    mapped
                })
                .into_mapper();
                let output = if with_policy {
                    structural::map(
                        root,
                        MapWithContextPolicy::new(&mut mapper, Observe(&mode)),
                        WalkOrder::PreOrder,
                    )
                    .unwrap()
                } else {
                    structural::map(root, &mut mapper, WalkOrder::PreOrder).unwrap()
                };
                let reuse = case == "unique";
                assert_eq!(
                    any_object_pointer(&output) == pointer,
                    reuse,
                    "{case}, policy={with_policy}"
                );
                if with_policy {
                    assert_eq!(
                        mode.get(),
                        Some(if reuse {
                            InplaceMode::Allow
                        } else {
                            InplaceMode::Disallow
                        })
                    );
                }
                if case == "retained" {
                    let retained = retained.unwrap();
                    assert_eq!(any_object_pointer(&retained), root_pointer.unwrap());
                    assert_eq!(list_item(&retained, 0), 1);
                    assert_eq!(list_item(&output, 0), 2);
                } else {
                    assert_eq!(to_array(output).unwrap().get(0).unwrap(), 2);
                }
                if let Some(alias) = alias {
                    assert!(alias.cast::<Array<bool>>().unwrap().get(0).unwrap());
                }
            }
        }
    }

    #[test]
    fn post_order_unchanged_preserves_descendant_rewrites() {
        for with_policy in [false, true] {
            for shared in [false, true] {
                let root = array(vec![1_i64]);
                let pointer = array_pointer(&root);
                let alias = shared.then(|| root.clone());
                let callbacks = (
                    |integer: i64| integer + 1,
                    |value: &MapValue| {
                        assert_eq!(value.cast::<Array<i64>>().unwrap().get(0).unwrap(), 2);
                        Unchanged
                    },
                );
                let mapped = if with_policy {
                    structural::map(
                        root,
                        MapWithContextPolicy::new(callbacks.into_mapper(), DefaultMutContextPolicy),
                        WalkOrder::PostOrder,
                    )
                } else {
                    structural::map(root, callbacks, WalkOrder::PostOrder)
                }
                .and_then(to_array)
                .unwrap();
                assert_eq!(mapped.get(0).unwrap(), 2);
                if let Some(alias) = alias {
                    assert_eq!(alias.get(0).unwrap(), 1);
                    assert_ne!(array_pointer(&mapped), pointer);
                } else {
                    assert_eq!(array_pointer(&mapped), pointer);
                }
            }
        }
    }

    #[derive(Default)]
    struct PolicyState {
        depth: usize,
        events: Vec<(&'static str, usize)>,
    }
    #[dispatch(map)]
    impl PolicyState {
        fn map_integer(&mut self, value: i64) -> i64 {
            self.events.push(("integer", self.depth));
            value + 1
        }
        fn map_array(&mut self, value: Array<Any>) -> Any {
            self.events.push(("callback", self.depth));
            Any::new(value)
        }
    }

    struct ArrayPolicy;
    impl MutContextPolicy<PolicyState> for ArrayPolicy {
        fn default_mutate(
            &self,
            value: MutateValue<'_>,
            ctx: &mut MutateContext<'_, PolicyState>,
        ) -> Result<UnchangedOr<Any>> {
            if value.as_node::<ArrayObj>().is_none() {
                return ctx.default_maybe_inplace_mutate_result(value);
            }
            ctx.state_mut().depth += 1;
            let depth = ctx.state().depth;
            ctx.state_mut().events.push(("enter", depth));
            let result = ctx.default_maybe_inplace_mutate_result(value);
            ctx.state_mut().depth -= 1;
            let depth = ctx.state().depth;
            ctx.state_mut().events.push(("exit", depth));
            result
        }
    }
    struct RecordPolicy;
    impl MutContextPolicy<PolicyState> for RecordPolicy {
        fn default_mutate(
            &self,
            value: MutateValue<'_>,
            ctx: &mut MutateContext<'_, PolicyState>,
        ) -> Result<UnchangedOr<Any>> {
            if value.as_node::<ArrayObj>().is_some() {
                let depth = ctx.state().depth;
                ctx.state_mut().events.push(("next", depth));
            }
            ctx.default_maybe_inplace_mutate_result(value)
        }
    }

    #[dispatch(mutate, policy = (ArrayPolicy, RecordPolicy))]
    impl PolicyState {
        fn mutate_integer(&mut self, value: i64) -> i64 {
            self.map_integer(value)
        }
    }

    #[test]
    fn mutation_policies_share_state_and_preserve_callback_order() {
        let root = || array(vec![Any::new(array(vec![1_i64])), Any::new(2_i64)]);
        let int_at = |value: &Any, index: usize| array_item(value, index).cast::<i64>().unwrap();
        let pre = vec![
            ("callback", 0),
            ("enter", 1),
            ("next", 1),
            ("callback", 1),
            ("enter", 2),
            ("next", 2),
            ("integer", 2),
            ("exit", 1),
            ("integer", 1),
            ("exit", 0),
        ];
        let post = vec![
            ("enter", 1),
            ("next", 1),
            ("enter", 2),
            ("next", 2),
            ("integer", 2),
            ("exit", 1),
            ("callback", 1),
            ("integer", 1),
            ("exit", 0),
            ("callback", 0),
        ];
        for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
            let mut mapper = MapWithContextPolicy::new(
                PolicyState::default(),
                (ArrayPolicy, (RecordPolicy, DefaultMutContextPolicy)),
            );
            let output = structural::map(root(), &mut mapper, order).unwrap();
            assert_eq!(int_at(&output, 1), 3);
            assert_eq!(int_at(&array_item(&output, 0), 0), 2);
            assert_eq!(mapper.state().depth, 0);
            assert_eq!(
                &mapper.state().events,
                if order == WalkOrder::PreOrder {
                    &pre
                } else {
                    &post
                }
            );
        }
        let mut mutator = MutateCallbacks::new(
            PolicyState::default(),
            (
                |x: i64, ctx: &mut MutateContext<'_, PolicyState>| {
                    let depth = ctx.state().depth;
                    ctx.state_mut().events.push(("integer", depth));
                    x + 1
                },
                |value: MutateValue<'_>, ctx: &mut MutateContext<'_, PolicyState>| {
                    let depth = ctx.state().depth;
                    ctx.state_mut().events.push(("callback", depth));
                    ctx.default_maybe_inplace_mutate_result(value)
                },
            ),
        )
        .with_policy((ArrayPolicy, RecordPolicy));
        let output = structural::mutate(root(), &mut mutator).unwrap();
        assert_eq!(int_at(&output, 1), 3);
        assert_eq!(mutator.state().events, pre);
        assert_eq!(mutator.state().depth, 0);

        let mut dispatch = PolicyState::default();
        let output = structural::mutate(root(), &mut dispatch).unwrap();
        assert_eq!(int_at(&output, 1), 3);
        assert_eq!(int_at(&array_item(&output, 0), 0), 2);
        assert_eq!(dispatch.depth, 0);
        assert_eq!(
            dispatch.events,
            pre.into_iter()
                .filter(|(tag, _)| *tag != "callback")
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn map_policy_entries_preserve_descent_and_callback_composition() {
        struct Stop;
        impl<State> MutContextPolicy<State> for Stop {
            fn default_mutate(
                &self,
                _: MutateValue<'_>,
                _: &mut MutateContext<'_, State>,
            ) -> Result<UnchangedOr<Any>> {
                Ok(UnchangedOr::unchanged())
            }
        }

        let root = || array(vec![1_i64]);
        let first = |value: Any| to_array(value).unwrap().get(0).unwrap();
        for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
            for entry in 0..2 {
                let mut state = PolicyState::default();
                let output = {
                    let mut mapper =
                        MapWithContextPolicy::new(&mut state, (DefaultMutContextPolicy, Stop));
                    match entry {
                        0 => structural::map(root(), mapper, order),
                        _ => structural::map(root(), &mut mapper, order),
                    }
                }
                .unwrap();
                assert_eq!(first(output), 1);
                assert_eq!(state.events, vec![("callback", 0)]);
            }

            let mut dispatch = IncrementIntegers;
            let callbacks = (|s: FfiString| s, (&mut dispatch,));
            assert_eq!(first(structural::map(root(), callbacks, order).unwrap()), 2);

            let callbacks = (|x: i64| x + 1, (|s: FfiString| s,));
            assert_eq!(first(structural::map(root(), callbacks, order).unwrap()), 2);
            let mapper = MapWithContextPolicy::new(callbacks.into_mapper(), Stop);
            assert_eq!(first(structural::map(root(), mapper, order).unwrap()), 1);
        }
    }

    #[test]
    fn mutation_policy_continuations_preserve_ownership_and_markers() {
        struct Ownership {
            increment: bool,
            retained: Option<Any>,
            mode: InplaceMode,
            retain: bool,
        }
        #[dispatch(map)]
        impl Ownership {
            fn map_integer(&mut self, x: i64) -> UnchangedOr<i64> {
                if self.increment {
                    UnchangedOr::changed(x + 1)
                } else {
                    UnchangedOr::unchanged()
                }
            }
        }
        struct Control {
            mode: InplaceMode,
            retain: bool,
        }
        impl MutContextPolicy<Ownership> for Control {
            fn default_mutate(
                &self,
                value: MutateValue<'_>,
                ctx: &mut MutateContext<'_, Ownership>,
            ) -> Result<UnchangedOr<Any>> {
                let array = value.as_node::<ArrayObj>().is_some();
                if array && self.retain {
                    ctx.state_mut().retained = Some(value.to_owned());
                }
                let result = ctx.default_mutate_with_mode_result(value, self.mode)?;
                if array && !ctx.state().increment {
                    assert!(result.is_unchanged());
                }
                Ok(result)
            }
        }
        #[dispatch(mutate, policy = (
            Control { mode: self.mode, retain: self.retain },
            DefaultMutContextPolicy,
        ))]
        impl Ownership {
            fn mutate_integer(&mut self, value: i64) -> UnchangedOr<i64> {
                self.map_integer(value)
            }
            fn mutate_array(
                &mut self,
                value: MutateValue<'_, Array<i64>>,
                kind: DefRegionKind,
            ) -> Result<UnchangedOr<Any>> {
                self.default_maybe_inplace_mutate_result(value, kind)
            }
        }
        for entry in 0..4 {
            // pre-order map, post-order map, closure mutation, generated mutation
            for case in 0..4 {
                // unique, shared, alias retained by policy, forced copy
                for increment in [false, true] {
                    let root = array(vec![1_i64]);
                    let pointer = array_pointer(&root);
                    let alias = (case == 1).then(|| root.clone());
                    let policy = (
                        Control {
                            mode: if case == 3 {
                                InplaceMode::Disallow
                            } else {
                                InplaceMode::Allow
                            },
                            retain: case == 2,
                        },
                        DefaultMutContextPolicy,
                    );
                    let state = Ownership {
                        increment,
                        retained: None,
                        mode: policy.0.mode,
                        retain: policy.0.retain,
                    };
                    let (output, state) = if entry < 2 {
                        let mut mapper = MapWithContextPolicy::new(state, policy);
                        let output = structural::map(
                            root,
                            &mut mapper,
                            if entry == 0 {
                                WalkOrder::PreOrder
                            } else {
                                WalkOrder::PostOrder
                            },
                        )
                        .unwrap();
                        (output, mapper.into_state())
                    } else if entry == 3 {
                        let mut dispatch = state;
                        let output = structural::mutate(root, &mut dispatch).unwrap();
                        (output, dispatch)
                    } else {
                        let mut mutator = MutateCallbacks::new(
                            state,
                            (
                                |x: i64, ctx: &mut MutateContext<'_, Ownership>| {
                                    ctx.state_mut().map_integer(x)
                                },
                                |value: MutateValue<'_>, ctx: &mut MutateContext<'_, Ownership>| {
                                    ctx.default_maybe_inplace_mutate_result(value)
                                },
                            ),
                        )
                        .with_policy(policy);
                        let output = structural::mutate(root, &mut mutator).unwrap();
                        (output, mutator.into_state())
                    };
                    let output = to_array(output).unwrap();
                    assert_eq!(output.get(0).unwrap(), if increment { 2 } else { 1 });
                    assert_eq!(
                        array_pointer(&output) == pointer,
                        !increment || case == 0,
                        "entry {entry}, case {case}, increment {increment}"
                    );
                    if let Some(alias) = alias {
                        assert_eq!(alias.get(0).unwrap(), 1);
                    }
                    if let Some(alias) = state.retained {
                        assert_eq!(to_array(alias).unwrap().get(0).unwrap(), 1);
                    }
                }
            }
        }
    }

    #[test]
    fn mutation_policy_regions_retargeting_and_error_restore() {
        use DefRegionKind::{None as Use, Pattern, Simple};
        #[derive(Default)]
        struct Regions(Vec<(i64, DefRegionKind)>, DefRegionKind);
        #[dispatch(map)]
        impl Regions {
            fn map_integer(&mut self, x: i64, kind: DefRegionKind) -> i64 {
                self.0.push((x, kind));
                x
            }
            fn map_array(&mut self, value: Array<i64>, kind: DefRegionKind) -> Any {
                self.0.push((200, kind));
                Any::new(value)
            }
        }
        struct Redirect(DefRegionKind);
        impl MutContextPolicy<Regions> for Redirect {
            fn default_mutate(
                &self,
                value: MutateValue<'_>,
                ctx: &mut MutateContext<'_, Regions>,
            ) -> Result<UnchangedOr<Any>> {
                if value.cast::<bool>() == Some(false) {
                    // Bypass this container's callback, but enter the next policy and
                    // redispatch its children.
                    return ctx.with_def_region_kind(Pattern, |ctx| {
                        ctx.default_mutate_value(array(vec![1_i64]))
                            .map(UnchangedOr::changed)
                    });
                }
                if value.cast::<i64>() == Some(2) {
                    assert_eq!(ctx.def_region_kind(), Pattern);
                    ctx.mutate_with(99_i64, self.0)?;
                    let error: Result<()> = ctx.with_def_region_kind(Use, |ctx| {
                        assert_eq!(ctx.def_region_kind(), Pattern);
                        Err(runtime_error("scoped error"))
                    });
                    assert_eq!(error.unwrap_err().message(), "scoped error");
                    assert_eq!(ctx.def_region_kind(), Pattern);
                }
                ctx.default_maybe_inplace_mutate_result(value)
            }
        }
        struct Observe;
        impl MutContextPolicy<Regions> for Observe {
            fn default_mutate(
                &self,
                value: MutateValue<'_>,
                ctx: &mut MutateContext<'_, Regions>,
            ) -> Result<UnchangedOr<Any>> {
                if value.as_node::<ArrayObj>().is_some() {
                    assert_eq!(ctx.def_region_kind(), Pattern);
                    let kind = ctx.def_region_kind();
                    ctx.state_mut().0.push((100, kind));
                }
                ctx.default_maybe_inplace_mutate_result(value)
            }
        }
        #[dispatch(mutate, policy = (Redirect(self.1), Observe))]
        impl Regions {
            fn mutate_any(
                &mut self,
                value: MutateValue<'_>,
                kind: DefRegionKind,
            ) -> Result<UnchangedOr<Any>> {
                if let Some(x) = value.cast::<i64>() {
                    self.map_integer(x, kind);
                }
                if value.as_node::<ArrayObj>().is_some() {
                    self.0.push((200, kind));
                }
                self.default_maybe_inplace_mutate_result(value, kind)
            }
        }
        let first = |output: &Any| array_item(output, 0).cast::<i64>().unwrap();
        for requested in [Use, Simple] {
            for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
                let mut mapper =
                    MapWithContextPolicy::new(Regions::default(), (Redirect(requested), Observe));
                let output = structural::map(false, &mut mapper, order).unwrap();
                assert_eq!(first(&output), 1);
                let mut expected = vec![(100, Pattern), (1, Pattern)];
                if order == WalkOrder::PostOrder {
                    expected.push((200, Use)); // The root callback sees the result after descent.
                }
                assert_eq!(mapper.state().0, expected);
                mapper.state_mut().0.clear();
                structural::map(visit_region_graph(), &mut mapper, order).unwrap();
                let expected = if order == WalkOrder::PreOrder {
                    vec![(1, Simple), (2, Pattern), (99, Pattern), (3, Use)]
                } else {
                    vec![(1, Simple), (99, Pattern), (2, Pattern), (3, Use)]
                };
                assert_eq!(mapper.state().0, expected);
            }
            let mut mutator = MutateCallbacks::new(
                Regions::default(),
                |value: MutateValue<'_>, ctx: &mut MutateContext<'_, Regions>| {
                    if let Some(x) = value.cast::<i64>() {
                        let kind = ctx.def_region_kind();
                        ctx.state_mut().0.push((x, kind));
                    }
                    if value.as_node::<ArrayObj>().is_some() {
                        let kind = ctx.def_region_kind();
                        ctx.state_mut().0.push((200, kind));
                    }
                    ctx.default_maybe_inplace_mutate_result(value)
                },
            )
            .with_policy((Redirect(requested), Observe));
            let output = structural::mutate(false, &mut mutator).unwrap();
            assert_eq!(first(&output), 1);
            assert_eq!(mutator.state().0, vec![(100, Pattern), (1, Pattern)]);
            mutator.state_mut().0.clear();
            structural::mutate(visit_region_graph(), &mut mutator).unwrap();
            assert_eq!(
                mutator.state().0,
                vec![(1, Simple), (2, Pattern), (99, Pattern), (3, Use)]
            );
            let mut dispatch = Regions(vec![], requested);
            let output = structural::mutate(false, &mut dispatch).unwrap();
            assert_eq!(first(&output), 1);
            assert_eq!(dispatch.0, vec![(100, Pattern), (1, Pattern)]);
            dispatch.0.clear();
            structural::mutate(visit_region_graph(), &mut dispatch).unwrap();
            assert_eq!(
                dispatch.0,
                vec![(1, Simple), (2, Pattern), (99, Pattern), (3, Use)]
            );
        }
    }

    #[test]
    fn mutation_policy_halts_restore_state_and_skip_later_policies() {
        struct Halt(bool);
        impl MutContextPolicy<PolicyState> for Halt {
            fn default_mutate(
                &self,
                _: MutateValue<'_>,
                _: &mut MutateContext<'_, PolicyState>,
            ) -> Result<UnchangedOr<Any>> {
                if self.0 {
                    Err(runtime_error("stop descent"))
                } else {
                    Ok(UnchangedOr::unchanged())
                }
            }
        }
        for fail in [false, true] {
            for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
                let mut mapper = MapWithContextPolicy::new(
                    PolicyState::default(),
                    (ArrayPolicy, (Halt(fail), RecordPolicy)),
                );
                let result = structural::map(array(vec![1_i64]), &mut mapper, order);
                assert_eq!(result.is_err(), fail);
                assert_eq!(mapper.state().depth, 0);
                assert!(!mapper
                    .state()
                    .events
                    .iter()
                    .any(|(tag, _)| matches!(*tag, "integer" | "next")));
                if let Err(error) = result {
                    assert!(error.message().contains("stop descent"));
                }
            }
            let mut mutator = MutateCallbacks::new(
                PolicyState::default(),
                |x: i64, _: &mut MutateContext<'_, PolicyState>| x + 1,
            )
            .with_policy((ArrayPolicy, (Halt(fail), RecordPolicy)));
            assert_eq!(
                structural::mutate(array(vec![1_i64]), &mut mutator).is_err(),
                fail
            );
            assert_eq!(mutator.state().events, vec![("enter", 1), ("exit", 0)]);
            assert_eq!(mutator.state().depth, 0);
        }
    }
}
