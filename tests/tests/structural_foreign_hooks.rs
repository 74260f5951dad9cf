//! Structural walk and visit through foreign `__s_visit__` hooks, called as C++'s
//! `StructuralVisitor` calls them: C++'s `testing.TestVisitHook` (a Function-valued hook of the
//! wheel's `libtvm_ffi_testing`: its child in a simple region, then the integer 4 in its own
//! region), and hooks this file registers through the raw C API on types of its own (an
//! opaque-pointer hook, Function hooks that raise, return a wrong value, or keep their visitor;
//! a `#[ffi(type_attr = "__s_visit__")]` hook that drives the visitor through the runtime's
//! globals `ffi.StructuralVisitorVisit` and `ffi.StructuralVisitorWithDefRegionKind`).
//! Children come back to the Rust traversal in the hook's region; errors keep their message and
//! path, interrupts their payload; a panic while a child is visited becomes an error; a visitor
//! kept past its hook's call refuses to visit.
//!
//! Then map and mutate through foreign `__s_mutate__` / `__s_maybe_inplace_mutate__` hooks
//! registered the same way (opaque pointers driving a mutator laid out as C++'s
//! `StructuralMutatorObj` through its vtable, Function hooks that raise or keep their mutator):
//! children come back to the Rust traversal in the hook's region, copy-on-write (or in place
//! for a node only the traversal holds), `Unchanged` keeps the node, a hook's variable
//! remapping reaches the variable's uses, errors keep their message and path.
use std::ffi::c_void;
use std::sync::{Mutex, Once};

use tvm_ffi::structural::{
    self, DefRegionKind, VisitInterrupt, VisitValue, Visitor, WalkOrder, WalkResult,
};
use tvm_ffi::{sys, Any, AnyView, Array, Error, ErrorKind, Function, ObjectRef, Result};

use DefRegionKind::{None as Use, Pattern, Simple};

/// C++'s `testing.make_visit_region_graph(true)`: `testing.TestVisitHook` over a
/// `testing.TestVisitRegions` (fields `simple = 1`, `pattern = 2`, `ordinary = 3`).
fn cpp_hooked_graph() -> Any {
    tvm_ffi_tests::load_cpp_testing_library();
    Function::get_global("testing.make_visit_region_graph")
        .unwrap()
        .call((true,))
        .unwrap()
}

/// An integer as its value, anything else as its type key.
fn describe(value: &VisitValue) -> String {
    match value.cast::<i64>() {
        Some(int) => int.to_string(),
        None => value.type_key().to_string(),
    }
}

fn owned(seen: &[(&str, DefRegionKind)]) -> Vec<(String, DefRegionKind)> {
    seen.iter().map(|(s, k)| (s.to_string(), *k)).collect()
}

const HOOK: &str = "testing.TestVisitHook";
const FIELDS: &str = "testing.TestVisitRegions";

#[test]
fn walk_reaches_the_children_of_a_cpp_hook_in_its_regions() {
    let root = cpp_hooked_graph();
    for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
        let mut seen = Vec::new();
        let done = structural::walk(
            &root,
            |value: &VisitValue, kind: DefRegionKind| {
                seen.push((describe(value), kind));
                WalkResult::Advance
            },
            order,
        )
        .unwrap();
        assert!(done.is_none());
        let expected = match order {
            WalkOrder::PreOrder => owned(&[
                (HOOK, Use),
                (FIELDS, Simple),
                ("1", Simple),
                ("2", Pattern),
                ("3", Simple),
                ("4", Use),
            ]),
            WalkOrder::PostOrder => owned(&[
                ("1", Simple),
                ("2", Pattern),
                ("3", Simple),
                (FIELDS, Simple),
                ("4", Use),
                (HOOK, Use),
            ]),
        };
        assert_eq!(seen, expected, "{order:?}");
    }
    // A pre-order `Skip` of the hooked object does not call its hook.
    let mut ints = Vec::new();
    let done = structural::walk(
        &root,
        (
            |value: &VisitValue| {
                if value.type_key() == HOOK {
                    WalkResult::Skip
                } else {
                    WalkResult::Advance
                }
            },
            |value: i64| {
                ints.push(value);
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert!(done.is_none());
    assert!(ints.is_empty());
}

/// Records every value and its region, then visits its default children.
#[derive(Default)]
struct Trace(Vec<(String, DefRegionKind)>);

impl Visitor for Trace {
    fn visit(&mut self, value: &VisitValue, kind: DefRegionKind) -> Result<Option<VisitInterrupt>> {
        self.0.push((describe(value), kind));
        self.default_visit_children(value, kind)
    }
}

#[test]
fn visit_reaches_the_children_of_a_cpp_hook_in_its_regions() {
    let root = cpp_hooked_graph();
    let mut trace = Trace::default();
    assert!(structural::visit(&root, &mut trace).unwrap().is_none());
    let expected = owned(&[
        (HOOK, Use),
        (FIELDS, Simple),
        ("1", Simple),
        ("2", Pattern),
        ("3", Simple),
        ("4", Use),
    ]);
    assert_eq!(trace.0, expected);

    // The hook starts from the region its object is reached in: a pattern stays a pattern.
    let mut trace = Trace::default();
    assert!(trace.visit_child(&root, Pattern).unwrap().is_none());
    assert!(
        trace.0.iter().all(|(_, kind)| *kind == Pattern),
        "{:?}",
        trace.0
    );
    assert_eq!(trace.0.len(), 6);
}

#[test]
fn an_interrupt_of_a_child_comes_back_through_a_cpp_hook_with_its_payload() {
    let root = cpp_hooked_graph();
    for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
        let mut ints = Vec::new();
        let stop = structural::walk(
            &root,
            |value: i64| {
                ints.push(value);
                if value == 2 {
                    WalkResult::interrupt_with("stopped at 2")
                } else {
                    WalkResult::Advance
                }
            },
            order,
        )
        .unwrap()
        .expect("the walk was interrupted");
        assert_eq!(stop.value.cast::<String>().unwrap(), "stopped at 2");
        // The hook returns the interrupt at once: neither `ordinary` nor its own 4 is visited.
        assert_eq!(ints, [1, 2], "{order:?}");
    }

    struct StopAtFour(Vec<i64>);
    impl Visitor for StopAtFour {
        fn visit(
            &mut self,
            value: &VisitValue,
            kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            if let Some(int) = value.cast::<i64>() {
                self.0.push(int);
                if int == 4 {
                    return Ok(Some(VisitInterrupt::with(Array::new([4i64, 40]).unwrap())));
                }
            }
            self.default_visit_children(value, kind)
        }
    }
    let mut visitor = StopAtFour(Vec::new());
    let stop = structural::visit(&root, &mut visitor).unwrap().unwrap();
    assert_eq!(stop.value.cast::<Array<i64>>().unwrap().to_vec(), [4, 40]);
    assert_eq!(visitor.0, [1, 2, 3, 4]);
}

/// The position of each of `frames` in `text`, which must hold them in this order.
fn assert_in_order(text: &str, frames: &[&str]) {
    let mut from = 0;
    for frame in frames {
        let at = text[from..]
            .find(frame)
            .unwrap_or_else(|| panic!("no `{frame}` after byte {from} of:\n{text}"));
        from += at + frame.len();
    }
}

#[test]
fn an_error_of_a_child_keeps_its_message_and_path_through_a_cpp_hook() {
    let root = cpp_hooked_graph();
    let error = structural::walk(
        &root,
        |value: i64| -> Result<WalkResult> {
            if value == 3 {
                Err(Error::value_error("no threes"))
            } else {
                Ok(WalkResult::Advance)
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Value);
    assert_eq!(error.message(), "no threes");
    assert_in_order(
        &error.backtrace(),
        &[
            "[structural traversal] field `ordinary`",
            "[structural traversal] object `testing.TestVisitRegions`",
            "[structural traversal] child [0] visited by `__s_visit__`",
            "[structural traversal] object `testing.TestVisitHook`",
        ],
    );

    // The same through a visitor, from the hook's second child (the integer 4).
    struct FailAtFour;
    impl Visitor for FailAtFour {
        fn visit(
            &mut self,
            value: &VisitValue,
            kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            if value.cast::<i64>() == Some(4) {
                return Err(Error::key_error("four"));
            }
            self.default_visit_children(value, kind)
        }
    }
    let error = structural::visit(&root, &mut FailAtFour).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Key);
    assert_eq!(error.message(), "four");
    assert_in_order(
        &error.backtrace(),
        &[
            "[structural traversal] child [1] visited by `__s_visit__`",
            "[structural traversal] object `testing.TestVisitHook`",
        ],
    );
}

#[test]
fn a_panic_of_a_child_reached_through_a_cpp_hook_is_an_error() {
    let root = cpp_hooked_graph();
    for round in 0..3 {
        let error = structural::walk(
            &root,
            |value: i64| {
                if value == 2 {
                    panic!("boom at 2 (round {round})");
                }
                WalkResult::Advance
            },
            WalkOrder::PreOrder,
        )
        .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Runtime);
        let message = error.message();
        assert!(
            message.starts_with("Rust panic in `testing.TestVisitHook.__s_visit__`"),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(": boom at 2 (round {round})")),
            "{message}"
        );
        assert!(error
            .backtrace()
            .contains("[structural traversal] object `testing.TestVisitHook`"));
    }
    // The process and the traversal go on.
    let mut ints = Vec::new();
    structural::walk(
        &root,
        |value: i64| {
            ints.push(value);
            WalkResult::Advance
        },
        WalkOrder::PostOrder,
    )
    .unwrap();
    assert_eq!(ints, [1, 2, 3, 4]);

    struct PanicAtOne;
    impl Visitor for PanicAtOne {
        fn visit(
            &mut self,
            value: &VisitValue,
            kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            assert_ne!(value.cast::<i64>(), Some(1), "a visitor refuses 1");
            self.default_visit_children(value, kind)
        }
    }
    let error = structural::visit(&root, &mut PanicAtOne).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Runtime);
    assert!(
        error.message().contains("a visitor refuses 1"),
        "{}",
        error.message()
    );
}

// Hooks registered from Rust through the raw C API: to the SDK they are foreign as C++'s.

/// This file's mirror of C++ `StructuralVisitorObj` (`tvm/ffi/extra/structural_visit.h`), to
/// drive a visitor as a C++ hook does.
#[repr(C)]
struct CxxVisitor {
    header: sys::TVMFFIObject,
    vtable: *const CxxVTable,
    def_region_mode: i32,
}

#[repr(C)]
struct CxxVTable {
    visit: unsafe extern "C" fn(*mut CxxVisitor, sys::TVMFFIAny) -> sys::TVMFFIAny,
}

/// `visitor->VisitExpected(child)`: the raw result (None, an error, an interrupt).
///
/// # Safety
/// `visitor` is a live visitor object.
unsafe fn cxx_visit(visitor: *mut CxxVisitor, child: &Any) -> Any {
    // SAFETY: the caller's contract; `child` lives through the call; the result is owned.
    unsafe { Any::from_raw(((*(*visitor).vtable).visit)(visitor, *child.as_raw())) }
}

fn register_visit_hook(type_index: i32, hook: &Any) {
    let name = sys::TVMFFIByteArray::from_bytes(b"__s_visit__");
    // SAFETY: a valid name and value; the runtime keeps its own reference.
    let rc = unsafe { sys::TVMFFITypeRegisterAttr(type_index, &name, hook.as_raw()) };
    assert_eq!(rc, 0);
}

macro_rules! hooked_type {
    ($name:ident, $key:literal) => {
        #[derive(tvm_ffi::Object)]
        #[ffi_type(key = $key, final)]
        #[repr(C)]
        pub struct $name {
            pub child: Any,
        }
    };
}

hooked_type!(NativeHooked, "structural_foreign_hooks.NativeHooked");
hooked_type!(RaisingHooked, "structural_foreign_hooks.RaisingHooked");
hooked_type!(BadResultHooked, "structural_foreign_hooks.BadResultHooked");
hooked_type!(KeepingHooked, "structural_foreign_hooks.KeepingHooked");

/// An opaque-pointer hook, as C++'s `testing.TestVisitHook`'s: the child in a pattern region,
/// then the integer 7 in the hook's own region.
unsafe extern "C" fn native_hook(
    visitor: *mut CxxVisitor,
    value: sys::TVMFFIAny,
) -> sys::TVMFFIAny {
    // SAFETY: the runtime's hook contract: a live visitor and a live view of the value.
    unsafe {
        let Ok(node) = AnyView::from_raw(value).cast::<ObjectRef<NativeHooked>>() else {
            return Any::new(Error::type_error("native_hook: not a NativeHooked")).into_raw();
        };
        let saved = (*visitor).def_region_mode;
        if saved != Pattern as i32 {
            (*visitor).def_region_mode = Pattern as i32;
        }
        let result = cxx_visit(visitor, &node.child);
        (*visitor).def_region_mode = saved;
        if !result.is_none() {
            return result.into_raw();
        }
        cxx_visit(visitor, &Any::new(7i64)).into_raw()
    }
}

/// The visitors `keeping_hook` kept.
static KEPT: Mutex<Vec<Any>> = Mutex::new(Vec::new());

fn register_rust_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use tvm_ffi::ObjectType;
        // SAFETY: the function has the `FStructuralVisitABI` signature the attribute requires.
        let native = unsafe { Any::from_opaque_ptr(native_hook as *mut c_void) };
        register_visit_hook(NativeHooked::type_index(), &native);
        let raising = Function::from_packed(|args| {
            assert_eq!(args.len(), 2);
            assert_eq!(args[0].type_key(), "ffi.StructuralVisitor");
            Err(Error::value_error("RaisingHooked refuses to be visited"))
        });
        register_visit_hook(RaisingHooked::type_index(), &Any::new(raising));
        let bad = Function::from_packed(|_| Ok(Any::new(5i64)));
        register_visit_hook(BadResultHooked::type_index(), &Any::new(bad));
        // Keeps its visitor, then visits the child through it.
        let keeping = Function::from_packed(|args| {
            let visitor = args[0].to_owned()?;
            KEPT.lock().unwrap().push(visitor);
            let node = args[1].cast::<ObjectRef<KeepingHooked>>()?;
            let visitor = args[0].as_raw();
            // SAFETY: the visitor object the traversal lent this hook, alive through the call.
            Ok(unsafe { cxx_visit(visitor.value.v_obj as *mut CxxVisitor, &node.child) })
        });
        register_visit_hook(KeepingHooked::type_index(), &Any::new(keeping));
    });
}

#[test]
fn an_opaque_pointer_hook_visits_its_children_in_the_regions_it_sets() {
    register_rust_hooks();
    let root = ObjectRef::new(NativeHooked {
        child: Any::new(Array::new([1i64, 2]).unwrap()),
    });
    let mut seen = Vec::new();
    let done = structural::walk(
        &root,
        |value: &VisitValue, kind: DefRegionKind| {
            seen.push((describe(value), kind));
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert!(done.is_none());
    assert_eq!(
        seen,
        owned(&[
            ("structural_foreign_hooks.NativeHooked", Use),
            ("ffi.Array", Pattern),
            ("1", Pattern),
            ("2", Pattern),
            ("7", Use),
        ])
    );
    // In a simple region, the hook's own sibling is visited in it.
    let mut trace = Trace::default();
    assert!(trace.visit_child(&root, Simple).unwrap().is_none());
    assert_eq!(trace.0.last().unwrap(), &("7".to_string(), Simple));

    // An interrupt of a child comes back through the native hook.
    let stop = structural::walk(
        &root,
        |value: i64| {
            if value == 1 {
                WalkResult::interrupt_with(11i64)
            } else {
                WalkResult::Advance
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .unwrap();
    assert_eq!(stop.value.cast::<i64>().unwrap(), 11);
}

#[test]
fn a_hook_that_raises_fails_the_traversal_with_its_error() {
    register_rust_hooks();
    let hooked = ObjectRef::new(RaisingHooked {
        child: Any::new(1i64),
    });
    let root = Array::new([Any::new(0i64), Any::new(hooked)]).unwrap();
    let mut ints = Vec::new();
    let error = structural::walk(
        &root,
        |value: i64| {
            ints.push(value);
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Value);
    assert_eq!(error.message(), "RaisingHooked refuses to be visited");
    assert_in_order(
        &error.backtrace(),
        &[
            "[structural traversal] object `structural_foreign_hooks.RaisingHooked`",
            "[structural traversal] sequence item [1]",
            "[structural traversal] object `ffi.Array`",
        ],
    );
    assert_eq!(ints, [0]);
    let error = structural::visit(&root, &mut Trace::default()).unwrap_err();
    assert_eq!(error.message(), "RaisingHooked refuses to be visited");

    // A hook returning something else than None, an error or an interrupt.
    let bad = ObjectRef::new(BadResultHooked { child: Any::none() });
    let error = structural::walk(
        &bad,
        |_: &VisitValue| WalkResult::Advance,
        WalkOrder::PreOrder,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Type);
    assert_eq!(
        error.message(),
        "`__s_visit__` of `structural_foreign_hooks.BadResultHooked` returned `int`; expected \
         None, an `ffi.Error` or an `ffi.VisitInterrupt`"
    );
}

#[test]
fn a_visitor_kept_past_its_hook_refuses_to_visit() {
    register_rust_hooks();
    let root = ObjectRef::new(KeepingHooked {
        child: Any::new(5i64),
    });
    let mut ints = Vec::new();
    structural::walk(
        &root,
        |value: i64| {
            ints.push(value);
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    // The hook visited its child through the visitor it kept.
    assert_eq!(ints, [5]);
    let kept = KEPT
        .lock()
        .unwrap()
        .pop()
        .expect("the hook kept its visitor");
    assert_eq!(kept.type_key(), "ffi.StructuralVisitor");
    let object = kept
        .cast::<ObjectRef<tvm_ffi::builtin::AnyObject>>()
        .unwrap();
    // The traversal let go of it: the hook's reference is the last.
    assert_eq!(object.strong_count(), 2); // `kept` and `object`
    drop(object);
    let visitor = kept.as_raw().value;
    // SAFETY: `kept` holds the visitor.
    let result = unsafe { cxx_visit(visitor.v_obj as *mut CxxVisitor, &Any::new(6i64)) };
    let error = result.cast::<Error>().unwrap();
    assert_eq!(error.kind(), ErrorKind::Runtime);
    assert_eq!(
        error.message(),
        "the `ffi.StructuralVisitor` lent to `__s_visit__` of \
         `structural_foreign_hooks.KeepingHooked` was kept past the hook's return; its \
         traversal has ended"
    );
    // From another thread, it refuses before looking at the traversal.
    // SAFETY: an object value's payload is its object pointer.
    let address = unsafe { visitor.v_obj } as usize;
    let message = std::thread::spawn(move || {
        // SAFETY: `kept` (on the spawning thread, joined below) holds the visitor.
        let result = unsafe { cxx_visit(address as *mut CxxVisitor, &Any::new(6i64)) };
        result.cast::<Error>().unwrap().message().to_string()
    })
    .join()
    .unwrap();
    assert_eq!(
        message,
        "the `ffi.StructuralVisitor` lent to `__s_visit__` of \
         `structural_foreign_hooks.KeepingHooked` was called from another thread than its \
         traversal's"
    );
    assert!(ints == [5]);
    drop(kept);
}

/// A pair whose `__s_visit__` (declared with `#[ffi(type_attr)]`, as `docs/hooks.md` shows)
/// visits `second` in a pattern region, then `first` in its own, and skips `cache`, through
/// the runtime's globals `ffi.StructuralVisitorWithDefRegionKind` and
/// `ffi.StructuralVisitorVisit` (C++ code that drives the visitor it is given).
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "structural_foreign_hooks.Pair", final)]
#[repr(C)]
pub struct Pair {
    pub first: Any,
    pub second: Any,
    pub cache: Any,
}

#[tvm_ffi::ffi_methods]
impl Pair {
    #[ffi(type_attr = "__s_visit__")]
    fn s_visit(
        visitor: ObjectRef<tvm_ffi::builtin::AnyObject>,
        value: ObjectRef<Pair>,
    ) -> Result<Any> {
        let visit = Function::get_global_required("ffi.StructuralVisitorVisit")?;
        let with_kind = Function::get_global_required("ffi.StructuralVisitorWithDefRegionKind")?;
        let second = {
            let (visit, visitor, second) = (visit.clone(), visitor.clone(), value.second.clone());
            Function::from_typed(move || -> Result<Any> { visit.call((&visitor, &second)) })
        };
        let interrupt = with_kind.call((&visitor, Pattern as i32, second))?;
        if !interrupt.is_none() {
            return Ok(interrupt);
        }
        visit.call((&visitor, &value.first))
    }
}

fn pair(first: Any, second: Any, cache: i64) -> ObjectRef<Pair> {
    ObjectRef::new(Pair {
        first,
        second,
        cache: Any::new(cache),
    })
}

#[test]
fn a_hook_of_a_rust_type_drives_the_visitor_through_the_runtimes_globals() {
    let inner = pair(Any::new(3i64), Any::new(4i64), 99);
    let outer = pair(Any::new(inner), Any::new(5i64), 100);
    let mut seen = Vec::new();
    let done = structural::walk(
        &outer,
        |value: i64, kind: DefRegionKind| {
            seen.push((value, kind));
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert!(done.is_none());
    // `second` before `first`, in a pattern region; no `cache`: the hook decided.
    assert_eq!(seen, [(5, Pattern), (4, Pattern), (3, Use)]);

    let mut trace = Trace::default();
    assert!(structural::visit(&outer, &mut trace).unwrap().is_none());
    let ints: Vec<_> = trace
        .0
        .iter()
        .filter(|(s, _)| s.parse::<i64>().is_ok())
        .collect();
    assert_eq!(
        ints,
        [
            &("5".to_string(), Pattern),
            &("4".to_string(), Pattern),
            &("3".to_string(), Use)
        ]
    );

    // An interrupt of the first child visited comes back through both runtime globals.
    let stop = structural::walk(
        &outer,
        |value: i64| {
            if value == 5 {
                WalkResult::interrupt_with("five")
            } else {
                WalkResult::Advance
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .unwrap();
    assert_eq!(stop.value.cast::<String>().unwrap(), "five");
}

// Foreign mutation hooks (`__s_mutate__`, `__s_maybe_inplace_mutate__`), called by map and
// mutate as C++'s `StructuralMutator` calls them.

/// This file's mirror of C++ `StructuralMutatorObj` (`tvm/ffi/extra/structural_mutate.h`), to
/// drive a mutator as a C++ hook does.
#[repr(C)]
struct CxxMutator {
    header: sys::TVMFFIObject,
    vtable: *const CxxMutatorVTable,
    def_region_mode: i32,
}

type CxxMutateFn = unsafe extern "C" fn(*mut CxxMutator, sys::TVMFFIAny) -> sys::TVMFFIAny;

/// C++ `StructuralMutatorVTable`.
#[repr(C)]
struct CxxMutatorVTable {
    mutate: CxxMutateFn,
    maybe_inplace_mutate: CxxMutateFn,
    var_remap_get: CxxMutateFn,
    var_remap_set:
        unsafe extern "C" fn(*mut CxxMutator, sys::TVMFFIAny, sys::TVMFFIAny) -> sys::TVMFFIAny,
}

/// `(*mutator->vtable_->mutate)(mutator, child)` (or `maybe_inplace_mutate`): the raw result
/// (a replacement, the `Unchanged` marker or an error).
///
/// # Safety
/// `mutator` is a live mutator object.
unsafe fn cxx_mutate(mutator: *mut CxxMutator, child: &Any, inplace: bool) -> Any {
    // SAFETY: the caller's contract; `child` lives through the call; the result is owned.
    unsafe {
        let vtable = &*(*mutator).vtable;
        let entry = if inplace {
            vtable.maybe_inplace_mutate
        } else {
            vtable.mutate
        };
        Any::from_raw(entry(mutator, *child.as_raw()))
    }
}

fn register_attr(type_index: i32, name: &str, hook: &Any) {
    let name = sys::TVMFFIByteArray::from_bytes(name.as_bytes());
    // SAFETY: a valid name and value; the runtime keeps its own reference.
    let rc = unsafe { sys::TVMFFITypeRegisterAttr(type_index, &name, hook.as_raw()) };
    assert_eq!(rc, 0);
}

hooked_type!(MutHooked, "structural_foreign_hooks.MutHooked");
hooked_type!(InplaceHooked, "structural_foreign_hooks.InplaceHooked");
hooked_type!(
    RaisingMutHooked,
    "structural_foreign_hooks.RaisingMutHooked"
);
hooked_type!(
    KeepingMutHooked,
    "structural_foreign_hooks.KeepingMutHooked"
);

/// A binder: its `var` is a definition, its `body` a use; its hook renames the variable itself
/// (`var_remap_set`), as TVM's binding statements do.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "structural_foreign_hooks.Let", final)]
#[repr(C)]
pub struct Let {
    pub var: Any,
    pub body: Any,
}

/// A free variable (identity matters): mapped once per map.
#[derive(tvm_ffi::Object, Clone)]
#[ffi_type(
    key = "structural_foreign_hooks.FreeVar",
    structural = "free-var",
    final
)]
#[repr(C)]
pub struct FreeVar {
    pub name: tvm_ffi::String,
}

/// An opaque-pointer `__s_mutate__`, as C++ hooks are: the child in a pattern region; a new
/// node when it changed, `Unchanged` when not.
unsafe extern "C" fn mut_hook(mutator: *mut CxxMutator, value: sys::TVMFFIAny) -> sys::TVMFFIAny {
    // SAFETY: the runtime's hook contract: a live mutator and a live view of the value.
    unsafe {
        let Ok(node) = AnyView::from_raw(value).cast::<ObjectRef<MutHooked>>() else {
            return Any::new(Error::type_error("mut_hook: not a MutHooked")).into_raw();
        };
        let saved = (*mutator).def_region_mode;
        (*mutator).def_region_mode = Pattern as i32;
        let mapped = cxx_mutate(mutator, &node.child, false);
        (*mutator).def_region_mode = saved;
        match mapped.type_index() {
            sys::type_index::kTVMFFIError | sys::type_index::kTVMFFIUnchanged => mapped.into_raw(),
            _ => Any::new(ObjectRef::new(MutHooked { child: mapped })).into_raw(),
        }
    }
}

/// Which hook of `InplaceHooked` ran: 1 `__s_mutate__`, 2 `__s_maybe_inplace_mutate__`.
static INPLACE_LAST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `__s_mutate__` of `InplaceHooked`: its child copy-on-write, into a new node.
unsafe extern "C" fn copy_hook(mutator: *mut CxxMutator, value: sys::TVMFFIAny) -> sys::TVMFFIAny {
    INPLACE_LAST.store(1, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: as for `mut_hook`.
    unsafe {
        let node = AnyView::from_raw(value)
            .cast::<ObjectRef<InplaceHooked>>()
            .unwrap();
        let mapped = cxx_mutate(mutator, &node.child, false);
        match mapped.type_index() {
            sys::type_index::kTVMFFIError | sys::type_index::kTVMFFIUnchanged => mapped.into_raw(),
            _ => Any::new(ObjectRef::new(InplaceHooked { child: mapped })).into_raw(),
        }
    }
}

/// `__s_maybe_inplace_mutate__` of `InplaceHooked` (called only for a node the traversal alone
/// holds): its child through `maybe_inplace_mutate`, which updates it in place.
unsafe extern "C" fn inplace_hook(
    mutator: *mut CxxMutator,
    value: sys::TVMFFIAny,
) -> sys::TVMFFIAny {
    INPLACE_LAST.store(2, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: as for `mut_hook`; the child view is the node's own field.
    unsafe {
        let object = value.value.v_obj as *const u8;
        let child = &*object
            .add(std::mem::size_of::<sys::TVMFFIObject>())
            .cast::<Any>();
        let mapped = cxx_mutate(mutator, child, true);
        match mapped.type_index() {
            sys::type_index::kTVMFFIError | sys::type_index::kTVMFFIUnchanged => mapped.into_raw(),
            _ => Any::new(Error::runtime_error("inplace_hook: the child was replaced")).into_raw(),
        }
    }
}

/// `__s_mutate__` of `Let`: the variable in a simple region; when it comes back unchanged, the
/// hook renames it itself (`<name>'`) and records that (`var_remap_set`); then the body.
unsafe extern "C" fn let_hook(mutator: *mut CxxMutator, value: sys::TVMFFIAny) -> sys::TVMFFIAny {
    // SAFETY: as for `mut_hook`.
    unsafe {
        let node = AnyView::from_raw(value).cast::<ObjectRef<Let>>().unwrap();
        let vtable = &*(*mutator).vtable;
        let saved = (*mutator).def_region_mode;
        (*mutator).def_region_mode = Simple as i32;
        let mapped = cxx_mutate(mutator, &node.var, false);
        (*mutator).def_region_mode = saved;
        let var = match mapped.type_index() {
            sys::type_index::kTVMFFIError => return mapped.into_raw(),
            sys::type_index::kTVMFFIUnchanged => {
                let old = node.var.cast::<ObjectRef<FreeVar>>().unwrap();
                let renamed = Any::new(ObjectRef::new(FreeVar {
                    name: format!("{}'", &*old.name).into(),
                }));
                let set = Any::from_raw((vtable.var_remap_set)(
                    mutator,
                    *node.var.as_raw(),
                    *renamed.as_raw(),
                ));
                assert!(set.is_none());
                // Read back through the engine.
                let got = Any::from_raw((vtable.var_remap_get)(mutator, *node.var.as_raw()));
                assert!(got
                    .cast::<ObjectRef<FreeVar>>()
                    .unwrap()
                    .ptr_eq(&renamed.cast::<ObjectRef<FreeVar>>().unwrap()));
                renamed
            }
            _ => mapped,
        };
        let body = cxx_mutate(mutator, &node.body, false);
        let body = match body.type_index() {
            sys::type_index::kTVMFFIError => return body.into_raw(),
            sys::type_index::kTVMFFIUnchanged => node.body.clone(),
            _ => body,
        };
        Any::new(ObjectRef::new(Let { var, body })).into_raw()
    }
}

/// The mutators `KeepingMutHooked`'s hook kept.
static KEPT_MUTATORS: Mutex<Vec<Any>> = Mutex::new(Vec::new());

fn register_mutate_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use tvm_ffi::ObjectType;
        let native = |hook: CxxMutateFn| {
            // SAFETY: the function has the `FStructuralMutateABI` signature the attributes
            // require.
            unsafe { Any::from_opaque_ptr(hook as *mut c_void) }
        };
        register_attr(MutHooked::type_index(), "__s_mutate__", &native(mut_hook));
        register_attr(
            InplaceHooked::type_index(),
            "__s_mutate__",
            &native(copy_hook),
        );
        register_attr(
            InplaceHooked::type_index(),
            "__s_maybe_inplace_mutate__",
            &native(inplace_hook),
        );
        register_attr(Let::type_index(), "__s_mutate__", &native(let_hook));
        let raising = Function::from_packed(|args| {
            assert_eq!(args.len(), 2);
            assert_eq!(args[0].type_key(), "ffi.StructuralMutator");
            Err(Error::value_error("RaisingMutHooked refuses to be mapped"))
        });
        register_attr(
            RaisingMutHooked::type_index(),
            "__s_mutate__",
            &Any::new(raising),
        );
        // Keeps its mutator, then maps the child through the runtime's global.
        let keeping = Function::from_packed(|args| {
            KEPT_MUTATORS.lock().unwrap().push(args[0].to_owned()?);
            let node = args[1].cast::<ObjectRef<KeepingMutHooked>>()?;
            let child = mutator_mutate().call((args[0], &node.child))?;
            Ok(Any::new(ObjectRef::new(KeepingMutHooked { child })))
        });
        register_attr(
            KeepingMutHooked::type_index(),
            "__s_mutate__",
            &Any::new(keeping),
        );
    });
}

/// The runtime's `ffi.StructuralMutatorMutate(mutator, value)` (not among the builtins safe
/// Rust may look up: it calls through the mutator's vtable).
fn mutator_mutate() -> Function {
    // SAFETY: called here only with mutator objects the traversal lent (checked by the SDK's
    // vtable) and plain values.
    unsafe { Function::get_global_unchecked("ffi.StructuralMutatorMutate") }.unwrap()
}

fn ptr(value: &Any) -> usize {
    value
        .cast::<ObjectRef<tvm_ffi::builtin::AnyObject>>()
        .unwrap()
        .as_raw()
        .as_ptr() as usize
}

#[test]
fn an_opaque_pointer_mutate_hook_maps_its_children_in_the_regions_it_sets() {
    register_mutate_hooks();
    let root = ObjectRef::new(MutHooked {
        child: Any::new(Array::new([1i64, 2]).unwrap()),
    });
    for order in [WalkOrder::PreOrder, WalkOrder::PostOrder] {
        let mut seen = Vec::new();
        let out = structural::map(
            root.clone(),
            |value: i64, kind: DefRegionKind| {
                seen.push((value, kind));
                Any::new(value + 10)
            },
            order,
        )
        .unwrap();
        assert_eq!(seen, [(1, Pattern), (2, Pattern)]);
        let out = out.cast::<ObjectRef<MutHooked>>().unwrap();
        assert!(!out.ptr_eq(&root));
        assert_eq!(out.child.cast::<Array<i64>>().unwrap().to_vec(), [11, 12]);
        // Copy-on-write: the source is as it was.
        assert_eq!(root.child.cast::<Array<i64>>().unwrap().to_vec(), [1, 2]);
    }
    // Nothing changes: the same node back, through `Unchanged`.
    let same = structural::map(
        Array::new([Any::new(root.clone())]).unwrap(),
        |_: i64| structural::Unchanged,
        WalkOrder::PostOrder,
    )
    .unwrap();
    let same = same.cast::<Array<ObjectRef<MutHooked>>>().unwrap();
    assert!(same.get(0).unwrap().ptr_eq(&root));

    // A mutator too: its `mutate` receives the children the hook hands back.
    struct Negate(Vec<DefRegionKind>);
    impl structural::Mutator for Negate {
        fn mutate(&mut self, value: &structural::MapValue, kind: DefRegionKind) -> Result<Any> {
            if let Some(int) = value.cast::<i64>() {
                self.0.push(kind);
                return Ok(Any::new(-int));
            }
            self.default_mutate(value, kind)
        }
    }
    let mut negate = Negate(Vec::new());
    let out = structural::mutate(root.clone(), &mut negate).unwrap();
    let out = out.cast::<ObjectRef<MutHooked>>().unwrap();
    assert_eq!(out.child.cast::<Array<i64>>().unwrap().to_vec(), [-1, -2]);
    assert_eq!(negate.0, [Pattern, Pattern]);
}

#[test]
fn an_inplace_hook_runs_for_a_node_only_the_traversal_holds() {
    register_mutate_hooks();
    let order = std::sync::atomic::Ordering::SeqCst;
    let child = Array::new([1i64, 2]).unwrap();
    let child_ptr = child.as_object_ref().as_raw().as_ptr() as usize;
    let root = Any::new(ObjectRef::new(InplaceHooked {
        child: Any::new(child),
    }));
    let root_ptr = ptr(&root);
    // Moved in: `__s_maybe_inplace_mutate__`, whose child is updated in place.
    let out = structural::map(root, |v: i64| Any::new(v + 1), WalkOrder::PostOrder).unwrap();
    assert_eq!(INPLACE_LAST.load(order), 2);
    assert_eq!(ptr(&out), root_ptr);
    let node = out.cast::<ObjectRef<InplaceHooked>>().unwrap();
    assert_eq!(ptr(&node.child), child_ptr);
    assert_eq!(node.child.cast::<Array<i64>>().unwrap().to_vec(), [2, 3]);
    // Held elsewhere too: `__s_mutate__`, copy-on-write.
    let again =
        structural::map(node.clone(), |v: i64| Any::new(v + 1), WalkOrder::PostOrder).unwrap();
    assert_eq!(INPLACE_LAST.load(order), 1);
    let again = again.cast::<ObjectRef<InplaceHooked>>().unwrap();
    assert!(!again.ptr_eq(&node));
    assert_eq!(again.child.cast::<Array<i64>>().unwrap().to_vec(), [3, 4]);
    assert_eq!(node.child.cast::<Array<i64>>().unwrap().to_vec(), [2, 3]);
}

#[test]
fn a_hooks_variable_remapping_reaches_the_uses_of_the_variable() {
    register_mutate_hooks();
    let x = ObjectRef::new(FreeVar { name: "x".into() });
    let other = ObjectRef::new(FreeVar { name: "y".into() });
    let body = Array::new([Any::new(x.clone()), Any::new(other.clone()), Any::new(1i64)]).unwrap();
    let root = ObjectRef::new(Let {
        var: Any::new(x.clone()),
        body: Any::new(body),
    });
    let out =
        structural::map(root.clone(), |v: i64| Any::new(v + 1), WalkOrder::PostOrder).unwrap();
    let out = out.cast::<ObjectRef<Let>>().unwrap();
    let renamed = out.var.cast::<ObjectRef<FreeVar>>().unwrap();
    assert_eq!(&*renamed.name, "x'");
    let body = out.body.cast::<Array<Any>>().unwrap();
    // The use of `x` is the hook's new variable; `y` and its identity are kept.
    assert!(body[0]
        .cast::<ObjectRef<FreeVar>>()
        .unwrap()
        .ptr_eq(&renamed));
    assert!(body[1].cast::<ObjectRef<FreeVar>>().unwrap().ptr_eq(&other));
    assert_eq!(body[2].cast::<i64>().unwrap(), 2);

    // A mutator keeps the remapping in its own `VarRemap`.
    #[derive(Default)]
    struct Remapping(structural::VarRemap);
    impl structural::Mutator for Remapping {
        fn mutate(&mut self, value: &structural::MapValue, kind: DefRegionKind) -> Result<Any> {
            self.default_mutate(value, kind)
        }
        fn var_remap_get(&mut self, var: &structural::MapValue) -> Result<Option<Any>> {
            self.0.get(var)
        }
        fn var_remap_set(&mut self, var: &structural::MapValue, mapped: &Any) -> Result<()> {
            self.0.set(var, mapped)
        }
    }
    let mut remapping = Remapping::default();
    let out = structural::mutate(root.clone(), &mut remapping).unwrap();
    let out = out.cast::<ObjectRef<Let>>().unwrap();
    let renamed = out.var.cast::<ObjectRef<FreeVar>>().unwrap();
    let body = out.body.cast::<Array<Any>>().unwrap();
    assert!(body[0]
        .cast::<ObjectRef<FreeVar>>()
        .unwrap()
        .ptr_eq(&renamed));
    assert!(body[1].cast::<ObjectRef<FreeVar>>().unwrap().ptr_eq(&other));
    assert_eq!(&*x.name, "x");
}

#[test]
fn a_mutate_hook_that_raises_or_a_failing_child_fails_the_map_with_its_error() {
    register_mutate_hooks();
    let raising = ObjectRef::new(RaisingMutHooked {
        child: Any::new(1i64),
    });
    let error = structural::map(raising, |v: i64| Any::new(v), WalkOrder::PostOrder).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Value);
    assert_eq!(error.message(), "RaisingMutHooked refuses to be mapped");

    let root = ObjectRef::new(MutHooked {
        child: Any::new(Array::new([1i64, 2]).unwrap()),
    });
    let error = structural::map(
        root.clone(),
        |v: i64| -> Result<Any> {
            if v == 2 {
                Err(Error::value_error("two is refused"))
            } else {
                Ok(Any::new(v))
            }
        },
        WalkOrder::PostOrder,
    )
    .unwrap_err();
    assert_eq!(error.message(), "two is refused");
    assert!(
        error
            .backtrace()
            .contains("child [0] mutated by `__s_mutate__`"),
        "{}",
        error.backtrace()
    );

    // A panic of a callback below the hook becomes an error for the hook, then the map's.
    let error = structural::map(
        root,
        |v: i64| -> Any {
            assert_ne!(v, 1, "a mapper refuses 1");
            Any::new(v)
        },
        WalkOrder::PostOrder,
    )
    .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Runtime);
    assert!(
        error.message().contains("a mapper refuses 1"),
        "{}",
        error.message()
    );
}

#[test]
fn a_mutator_kept_past_its_hook_refuses_to_map() {
    register_mutate_hooks();
    let root = ObjectRef::new(KeepingMutHooked {
        child: Any::new(1i64),
    });
    let out = structural::map(root, |v: i64| Any::new(v * 3), WalkOrder::PostOrder).unwrap();
    let out = out.cast::<ObjectRef<KeepingMutHooked>>().unwrap();
    assert_eq!(out.child.cast::<i64>().unwrap(), 3);
    let kept = KEPT_MUTATORS.lock().unwrap().pop().unwrap();
    assert_eq!(kept.type_key(), "ffi.StructuralMutator");
    let error = mutator_mutate().call((&kept, 5i64)).unwrap_err();
    assert!(
        error.message().contains(
            "the `ffi.StructuralMutator` lent to `__s_mutate__` of \
             `structural_foreign_hooks.KeepingMutHooked` was kept past the hook's return"
        ),
        "{}",
        error.message()
    );
    // From another thread, it refuses before looking at the traversal.
    let address = kept
        .cast::<ObjectRef<tvm_ffi::builtin::AnyObject>>()
        .unwrap()
        .as_raw()
        .as_ptr() as usize;
    let message = std::thread::spawn(move || {
        // SAFETY: `kept` (on the spawning thread, joined below) holds the mutator.
        let result = unsafe { cxx_mutate(address as *mut CxxMutator, &Any::new(6i64), false) };
        result.cast::<Error>().unwrap().message().to_string()
    })
    .join()
    .unwrap();
    assert_eq!(
        message,
        "the `ffi.StructuralMutator` lent to `__s_mutate__` of \
         `structural_foreign_hooks.KeepingMutHooked` was called from another thread than its \
         traversal's"
    );
    drop(kept);
}
