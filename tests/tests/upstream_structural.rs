//! Upstream's Rust tests of structural walk, visit, map and mutate (apache/tvm-ffi
//! `rust/tvm-ffi/tests/`, its structural mutator branch, `rust/tvm-ffi` 0.1.0-alpha.0), translated
//! to this SDK's API with the upstream test names kept: only the tests that the published crate
//! (`tvm-ffi` 0.1.15, translated in `upstream_structural_0115.rs`) no longer has under the same
//! name, and this SDK's own tests of the same features (`sdk_*`: field regions, reflected
//! copy-on-write, the `Unchanged` marker, nested chains). Where the two upstream versions
//! disagree this SDK follows 0.1.15: a walk does not visit map keys
//! (`dense_map_layout_is_traversed_completely` below is updated, with a comment), `None` values
//! reach map callbacks and mutators, and walk and visit call a foreign `__s_visit__` hook instead
//! of refusing it (`foreign_structural_visit_requires_explicit_rust_override` is updated, with a
//! comment).
//!
//! Spelling of the translations:
//! - upstream's root functions `structural_walk`, `structural_visit`, `structural_map`,
//!   `structural_mutate` are `structural::{walk, visit, map, mutate}`; `StructuralVisitor` is
//!   `structural::Visitor`, `StructuralMutator` `structural::Mutator`, `StructuralVarRemap`
//!   `structural::VarRemap`; `#[dispatch(..)]` is `tvm_ffi::dispatch`;
//! - the def-region kinds are the pinned runtime's (`TVMFFIDefRegionKind` of 0.1.15.post2):
//!   upstream's `Recursive` is `Pattern`, its `NonRecursive` is `Simple`;
//! - upstream's `&Object` (any object's payload) is `&AnyObject`; `Array::new(vec)` returns a
//!   `Result` here; runtime globals (`ffi.List`, `ffi.ListAppend`, `ffi.DictSetItem`, ...) are
//!   called through this SDK's `List` and `Dict`, which call the same globals;
//! - the reflected test types are `#[derive(Object)]` types (upstream registers them through the
//!   raw C API), their def-region and ignore flags `#[ffi(structural = ..)]`, their shallow copy
//!   their `Clone`.
//!
//! Deliberate differences, kept in the translations:
//! - an unchanged reflected object is returned without calling its shallow copy (upstream copies
//!   it, then drops the copy): `reflected_no_change_still_validates_copy_and_returns_original`
//!   asserts that no copy was made; the copy is still validated (a type with structural fields
//!   but no `__ffi_shallow_copy__` is refused, changed or not);
//! - an object without structural fields is a leaf, returned as is: the type of
//!   `reflected_object_without_shallow_copy_is_rejected_even_when_unchanged` has a field here
//!   (upstream's has none);
//! - shared maps are rebuilt from their entries (`ffi.Map`) at the first changed value
//!   (upstream calls a shallow-copy helper that the pinned runtime does not have).
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tvm_ffi::builtin::{AnyObject, ListObj};
use tvm_ffi::structural::{
    self, DefRegionKind, InplaceValue, MapDispatch, MapValue, Mutator, Unchanged, VarRemap,
    VisitInterrupt, VisitValue, Visitor, WalkOrder, WalkResult,
};
use tvm_ffi::{
    dispatch, Any, Array, Dict, Error, ErrorKind, List, Map, Object, ObjectRef, ObjectType, Result,
    Shape, String as FfiString,
};

fn array<T: tvm_ffi::TryIntoAny>(items: impl IntoIterator<Item = T>) -> Array<T> {
    Array::new(items).unwrap()
}

// ---------------------------------------------------------------------------------------------
// test_structural_visit.rs
// ---------------------------------------------------------------------------------------------

#[test]
fn plain_walk_uses_native_sequence_fallback() {
    let root = array([1i64, 2, 3]);
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
fn plain_walk_uses_native_map_fallback() {
    let root = Map::<FfiString, i64>::new([("a".into(), 1i64), ("b".into(), 2i64)]).unwrap();
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
    assert_eq!(integers, 2);
}

#[derive(Default)]
struct SkipForeignShape {}

#[dispatch(walk)]
impl SkipForeignShape {
    fn walk_shape(&mut self, _shape: Shape) -> WalkResult {
        WalkResult::Skip
    }
}

/// Visitor-layer handling of the foreign type: `visit` enumerates the children itself (none,
/// for a shape) instead of the default recursion.
#[derive(Default)]
struct ForeignShapeVisitor {
    shapes: usize,
}

impl Visitor for ForeignShapeVisitor {
    fn visit(
        &mut self,
        value: &VisitValue,
        def_region_kind: DefRegionKind,
    ) -> Result<Option<VisitInterrupt>> {
        if value.cast::<Shape>().is_some() {
            self.shapes += 1;
            return Ok(None);
        }
        self.default_visit_children(value, def_region_kind)
    }
}

/// Registers `value` as the type attribute `name` of `type_index` (as upstream's test does,
/// through the raw C API: a hook no Rust type declares).
fn register_type_attr(type_index: i32, name: &str, value: Any) {
    let name = tvm_ffi::sys::TVMFFIByteArray::from_bytes(name.as_bytes());
    // SAFETY: a valid name and value; the runtime copies the value.
    let rc = unsafe { tvm_ffi::sys::TVMFFITypeRegisterAttr(type_index, &name, value.as_raw()) };
    assert_eq!(rc, 0);
}

#[test]
fn foreign_structural_visit_requires_explicit_rust_override() {
    let hook = tvm_ffi::Function::get_global("ffi.ArraySize").unwrap();
    register_type_attr(
        tvm_ffi::sys::type_index::kTVMFFIShape,
        "__s_visit__",
        Any::new(hook),
    );

    let root = Shape::new(&[2, 3]);
    // Upstream's git main refused the foreign hook here; its 0.1.15 crate calls it, as C++'s
    // `StructuralVisitor` does, and so does this SDK: `ffi.ArraySize` is called with the visitor
    // and the shape, and refuses the visitor as its array.
    let error = match structural::walk(
        &root,
        |_value: &VisitValue| WalkResult::Advance,
        WalkOrder::PreOrder,
    ) {
        Err(error) => error,
        Ok(_) => panic!("the foreign structural visit hook was not called"),
    };
    assert_eq!(error.kind(), ErrorKind::Type);
    assert_eq!(
        error.message(),
        "Mismatched number of arguments when calling: `ffi.ArraySize(0: ffi.Array) -> int`. \
         Expected 1 but got 2 arguments"
    );
    assert!(error
        .backtrace()
        .contains("[structural traversal] object `ffi.Shape`"));

    // Walk layer: a pre-order handler skips the foreign type.
    assert!(
        structural::walk(&root, &mut SkipForeignShape::default(), WalkOrder::PreOrder)
            .unwrap()
            .is_none()
    );

    // Visitor layer: take over the type's children explicitly instead.
    let mut takeover = ForeignShapeVisitor::default();
    assert!(structural::visit(&root, &mut takeover).unwrap().is_none());
    assert_eq!(takeover.shapes, 1);
}

#[test]
fn mutable_list_is_snapshotted_before_callbacks() {
    let root = List::<i64>::new([1, 2]).unwrap();
    let captured = root.clone();
    let mut appended = false;
    let mut integers = Vec::new();

    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            if let Some(integer) = value.cast::<i64>() {
                integers.push(integer);
                if !appended {
                    captured.push(3).unwrap();
                    appended = true;
                }
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());

    assert_eq!(integers, vec![1, 2]);
    assert_eq!(root.len(), 3);
}

#[test]
fn mutable_dict_is_snapshotted_before_callbacks() {
    let root = Dict::<FfiString, i64>::new([("a".into(), 1), ("b".into(), 2)]).unwrap();
    let captured = root.clone();
    let mut inserted = false;
    let mut integers = Vec::new();

    assert!(structural::walk(
        &root,
        |value: &VisitValue| {
            if let Some(integer) = value.cast::<i64>() {
                integers.push(integer);
                if !inserted {
                    captured.insert("c".into(), 3).unwrap();
                    inserted = true;
                }
            }
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap()
    .is_none());

    integers.sort_unstable();
    assert_eq!(integers, vec![1, 2]);
    assert_eq!(root.len(), 3);
}

#[test]
fn dense_map_layout_is_traversed_completely() {
    // More than 4 entries forces the dense (block + iteration list) layout.
    let root =
        Map::<FfiString, i64>::new((0..9).map(|i| (FfiString::from(format!("k{i}")), i as i64)))
            .unwrap();
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
    // The repository's version counted the 9 keys; upstream 0.1.15 (followed here, see
    // `registered_map_hook_visits_all_values_without_visiting_keys` in
    // upstream_structural_0115.rs) walks map values only: keys are anchors.
    assert_eq!(strings, 0);
}

// Tuple walkers: structural::walk(root, (link1, link2, ...), order): links are tried in order
// and the first whose argument type matches the value runs, the Rust analog of the variadic
// C++ StructuralWalk callback chain.

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
fn chain_splices_dispatch_visitors_between_closures() {
    // A `&mut` typed visitor participates in the chain like any other link, keeping its own
    // no-match fall-through semantics.
    let root = array([1i64, 2]);
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

// ---------------------------------------------------------------------------------------------
// test_structural_visitor_alignment.rs: the Rust mirror of the C++ visitor example.
//
// `RecordingVisitor` lines up member-for-member with the C++ `TestVisitorObj`
// (tests/cpp/extra/test_structural_visit.cc): its `visit` plays the role of the C++ vtable
// `VisitImpl`, and the array arm plays the role of the C++ `TFuncObj::StructuralVisit` hook:
// the first element is visited as a pattern definition region, the rest inherit the
// surrounding state.
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// test_structural_mutate.rs
// ---------------------------------------------------------------------------------------------

/// An object of identity by structure (`"dag"`): mapped once per map.
#[derive(Object)]
#[ffi_type(key = "testing.RustStructuralDagNode", structural = "dag", final)]
#[repr(C)]
struct RustDagNodeObj {}

type RustDagNode = ObjectRef<RustDagNodeObj>;

/// A free variable: mapped once per map, and remapped by a mutator's `VarRemap`.
#[derive(Object)]
#[ffi_type(key = "testing.RustStructuralFreeVar", structural = "free-var", final)]
#[repr(C)]
struct RustFreeVarObj {}

type RustFreeVar = ObjectRef<RustFreeVarObj>;

static SHALLOW_COPY_CALLS: AtomicUsize = AtomicUsize::new(0);
static REFLECTED_TEST_LOCK: Mutex<()> = Mutex::new(());

/// A pair whose `first` opens a pattern definition region and whose `ignored` is left out.
#[derive(Object)]
#[ffi_type(key = "testing.RustStructuralPair", structural = "tree", final)]
#[repr(C)]
struct RustPairObj {
    #[ffi(structural = "def-pattern")]
    first: Any,
    #[ffi(structural = "ignore")]
    ignored: Any,
}

/// The shallow copy (`__ffi_shallow_copy__`), counting its calls.
impl Clone for RustPairObj {
    fn clone(&self) -> Self {
        SHALLOW_COPY_CALLS.fetch_add(1, Ordering::Relaxed);
        RustPairObj {
            first: self.first.clone(),
            ignored: self.ignored.clone(),
        }
    }
}

type RustPair = ObjectRef<RustPairObj>;

/// A type with a structural field but no shallow copy (not `Clone`).
#[derive(Object)]
#[ffi_type(key = "testing.RustStructuralNoCopy", structural = "tree", final)]
#[repr(C)]
struct RustNoCopyObj {
    value: i64,
}

fn rust_dag_node() -> RustDagNode {
    ObjectRef::new(RustDagNodeObj {})
}

/// A free variable of a type with a foreign `__s_mutate__` hook (registered once, as upstream
/// registers it with its test types; the hook keeps the value): the native map calls it, and a
/// `Mutator` may take the type over explicitly.
fn rust_free_var() -> RustFreeVar {
    static FOREIGN_MUTATE: std::sync::Once = std::sync::Once::new();
    FOREIGN_MUTATE.call_once(|| {
        let hook = tvm_ffi::Function::from_packed(|args| args[1].to_owned());
        register_type_attr(RustFreeVarObj::type_index(), "__s_mutate__", Any::new(hook));
    });
    ObjectRef::new(RustFreeVarObj {})
}

fn rust_pair(first: impl tvm_ffi::IntoAny, ignored: impl tvm_ffi::IntoAny) -> RustPair {
    ObjectRef::new(RustPairObj {
        first: Any::new(first),
        ignored: Any::new(ignored),
    })
}

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

struct PreserveIntegers;

impl MapDispatch for PreserveIntegers {
    fn dispatch_map(
        &mut self,
        value: &MapValue,
        _def_region_kind: DefRegionKind,
    ) -> Option<Result<Any>> {
        value.cast::<i64>().map(|integer| Ok(Any::new(integer)))
    }
}

struct ChangeNthInteger {
    target: usize,
    seen: usize,
    changed_value: Option<i64>,
}

impl MapDispatch for ChangeNthInteger {
    fn dispatch_map(
        &mut self,
        value: &MapValue,
        _def_region_kind: DefRegionKind,
    ) -> Option<Result<Any>> {
        value.cast::<i64>().map(|integer| {
            let mapped = if self.seen == self.target {
                self.changed_value = Some(integer);
                integer + 1
            } else {
                integer
            };
            self.seen += 1;
            Ok(Any::new(mapped))
        })
    }
}

struct ClearSourceDictAndIncrement {
    source: Dict<i64, i64>,
    cleared: bool,
}

impl MapDispatch for ClearSourceDictAndIncrement {
    fn dispatch_map(
        &mut self,
        value: &MapValue,
        _def_region_kind: DefRegionKind,
    ) -> Option<Result<Any>> {
        value.cast::<i64>().map(|integer| {
            if !self.cleared {
                self.source.clear()?;
                self.cleared = true;
            }
            Ok(Any::new(integer + 1))
        })
    }
}

struct RemappingFreeVar {
    remap: VarRemap,
    type_index: i32,
    calls: usize,
}

impl Mutator for RemappingFreeVar {
    fn mutate(&mut self, value: &MapValue, def_region_kind: DefRegionKind) -> Result<Any> {
        if value.type_index() == self.type_index {
            if let Some(mapped) = self.remap.get(value)? {
                return Ok(mapped);
            }
            self.calls += 1;
            let mapped = Any::new(41i64);
            self.remap.set(value, &mapped)?;
            Ok(mapped)
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

fn to_map(value: Any) -> Result<Map<i64, i64>> {
    value.cast::<Map<i64, i64>>()
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

fn dict_size(dict: &Dict<i64, i64>) -> usize {
    dict.len()
}

#[test]
fn user_mutator_can_store_a_changed_free_var_result() {
    let var = rust_free_var();
    let type_index = RustFreeVarObj::type_index();
    let root = array([var.clone(), var]);
    let mut mutator = RemappingFreeVar {
        remap: VarRemap::default(),
        type_index,
        calls: 0,
    };

    let mapped = structural::mutate(root, &mut mutator).unwrap();
    assert_eq!(mutator.calls, 1);
    assert_eq!(array_item(&mapped, 0).cast::<i64>().unwrap(), 41);
    assert_eq!(array_item(&mapped, 1).cast::<i64>().unwrap(), 41);
}

#[test]
fn dag_identity_caches_the_final_pre_order_replacement() {
    let node = rust_dag_node();
    let root = array([node.clone(), node]);
    let mut identity_calls = 0;
    let mapped = structural::map(
        root,
        (
            |_node: &RustDagNodeObj| {
                identity_calls += 1;
                Any::new(array([1i64]))
            },
            |integer: i64| Any::new(integer + 1),
        ),
        WalkOrder::PreOrder,
    )
    .unwrap();

    let first = array_item(&mapped, 0);
    let second = array_item(&mapped, 1);
    assert_eq!(identity_calls, 1);
    assert_eq!(any_object_pointer(&first), any_object_pointer(&second));
    assert_eq!(array_item(&first, 0).cast::<i64>().unwrap(), 2);
    assert_eq!(array_item(&second, 0).cast::<i64>().unwrap(), 2);
}

#[test]
fn free_var_identity_caches_the_final_pre_order_replacement() {
    let node = rust_free_var();
    let type_index = RustFreeVarObj::type_index();
    let root = array([node.clone(), node]);
    let mut identity_calls = 0;
    let mapped = structural::map(
        root,
        |value: &MapValue| {
            if value.type_index() == type_index {
                identity_calls += 1;
                Any::new(array([1i64]))
            } else if let Some(integer) = value.cast::<i64>() {
                Any::new(integer + 1)
            } else {
                value.to_owned()
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap();

    let first = array_item(&mapped, 0);
    let second = array_item(&mapped, 1);
    assert_eq!(identity_calls, 1);
    assert_eq!(any_object_pointer(&first), any_object_pointer(&second));
    assert_eq!(array_item(&first, 0).cast::<i64>().unwrap(), 2);
    assert_eq!(array_item(&second, 0).cast::<i64>().unwrap(), 2);
}

#[test]
fn reflected_fields_use_shallow_copy_setters_and_field_flags() {
    let _guard = REFLECTED_TEST_LOCK.lock().unwrap();
    let source = rust_pair(1i64, 9i64);
    let mut regions = Vec::new();
    let mapped = structural::map(
        source.clone(),
        |integer: i64, kind: DefRegionKind| {
            regions.push(kind);
            Any::new(integer + 1)
        },
        WalkOrder::PostOrder,
    )
    .and_then(|value| value.cast::<RustPair>())
    .unwrap();

    assert!(!mapped.ptr_eq(&source));
    assert_eq!(source.first.cast::<i64>().unwrap(), 1);
    assert_eq!(mapped.first.cast::<i64>().unwrap(), 2);
    assert_eq!(mapped.ignored.cast::<i64>().unwrap(), 9);
    assert_eq!(regions, vec![DefRegionKind::Pattern]);
}

#[test]
fn reflected_no_change_still_validates_copy_and_returns_original() {
    let _guard = REFLECTED_TEST_LOCK.lock().unwrap();
    let source = rust_pair(1i64, 9i64);
    let calls_before = SHALLOW_COPY_CALLS.load(Ordering::Relaxed);
    let mapped = structural::map(
        source.clone(),
        |string: FfiString| Any::new(string),
        WalkOrder::PostOrder,
    )
    .and_then(|value| value.cast::<RustPair>())
    .unwrap();

    assert!(mapped.ptr_eq(&source));
    // Deliberate difference: nothing changed, so nothing was copied (upstream: one copy,
    // dropped).
    assert_eq!(SHALLOW_COPY_CALLS.load(Ordering::Relaxed), calls_before);
}

#[test]
fn callback_errors_preserve_message_and_add_structural_path() {
    let error = match structural::map(
        array([1i64]),
        |_integer: i64| -> Result<Any> {
            Err(Error::with_backtrace(
                "RuntimeError",
                "mapper failed",
                "origin",
            ))
        },
        WalkOrder::PostOrder,
    ) {
        Ok(_) => panic!("fallible structural mapper unexpectedly succeeded"),
        Err(error) => error,
    };

    assert_eq!(error.message(), "mapper failed");
    assert!(error.backtrace().contains("origin"));
    assert!(error.backtrace().contains("sequence item [0]"));
    assert!(error.backtrace().contains("object `ffi.Array`"));
}

#[test]
fn foreign_mutation_hook_is_called_by_the_native_map() {
    // Upstream refuses the type (its native map cannot call a foreign hook); this SDK calls the
    // hook as C++'s `StructuralMutator` does, and the hook's result is the image: here the
    // value itself, so nothing changes.
    let var = rust_free_var();
    let root = array([var.clone()]);
    let mapped = structural::map(
        root.clone(),
        |_integer: i64| Any::new(0i64),
        WalkOrder::PostOrder,
    )
    .unwrap();
    assert_eq!(
        any_object_pointer(&mapped),
        any_object_pointer(&Any::new(root))
    );
}

#[test]
fn unique_list_map_and_dict_reuse_storage() {
    let list = Any::new(List::<i64>::new([1, 2]).unwrap());
    let list_pointer = any_object_pointer(&list);
    let mapped_list = structural::map(list, &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
    assert_eq!(any_object_pointer(&mapped_list), list_pointer);
    assert_eq!(
        (list_item(&mapped_list, 0), list_item(&mapped_list, 1)),
        (2, 3)
    );

    let small = Map::<i64, i64>::new([(1, 10), (2, 20)]).unwrap();
    let small_pointer = map_pointer(&small);
    let mapped_small = structural::map(small, &mut IncrementIntegers, WalkOrder::PostOrder)
        .and_then(to_map)
        .unwrap();
    assert_eq!(map_pointer(&mapped_small), small_pointer);
    assert_eq!(mapped_small.get(1), Some(11));
    assert_eq!(mapped_small.get(2), Some(21));

    // More than four entries selects the dense map layout.
    let dense = Map::<i64, i64>::new((0..9).map(|value| (value, value * 10))).unwrap();
    let dense_pointer = map_pointer(&dense);
    let mapped_dense = structural::map(dense, &mut IncrementIntegers, WalkOrder::PostOrder)
        .and_then(to_map)
        .unwrap();
    assert_eq!(map_pointer(&mapped_dense), dense_pointer);
    for value in 0..9 {
        assert_eq!(mapped_dense.get(value), Some(value * 10 + 1));
    }

    let dict = Any::new(Dict::<i64, i64>::new([(1, 10), (2, 20)]).unwrap());
    let dict_pointer = any_object_pointer(&dict);
    let mapped_dict = structural::map(dict, &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
    assert_eq!(any_object_pointer(&mapped_dict), dict_pointer);
    assert_eq!(
        (dict_item(&mapped_dict, 1), dict_item(&mapped_dict, 2)),
        (11, 21)
    );

    let dense_dict =
        Any::new(Dict::<i64, i64>::new((0..9i64).map(|value| (value, value * 10))).unwrap());
    let dense_dict_pointer = any_object_pointer(&dense_dict);
    let mapped_dense_dict =
        structural::map(dense_dict, &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
    assert_eq!(any_object_pointer(&mapped_dense_dict), dense_dict_pointer);
    for value in 0..9i64 {
        assert_eq!(dict_item(&mapped_dense_dict, value), value * 10 + 1);
    }
}

#[test]
fn shared_dense_map_and_dict_preserve_source_and_no_change_identity() {
    let source = Map::<i64, i64>::new((0..64).map(|value| (value, value * 10))).unwrap();
    let source_pointer = map_pointer(&source);

    let unchanged = structural::map(source.clone(), &mut PreserveIntegers, WalkOrder::PostOrder)
        .and_then(to_map)
        .unwrap();
    assert_eq!(map_pointer(&unchanged), source_pointer);

    let mapped = structural::map(source.clone(), &mut IncrementIntegers, WalkOrder::PostOrder)
        .and_then(to_map)
        .unwrap();
    assert_ne!(map_pointer(&mapped), source_pointer);
    for value in 0..64 {
        assert_eq!(source.get(value), Some(value * 10));
        assert_eq!(mapped.get(value), Some(value * 10 + 1));
    }

    let dict =
        Any::new(Dict::<i64, i64>::new((0..64i64).map(|value| (value, value * 10))).unwrap());
    let dict_pointer = any_object_pointer(&dict);
    let unchanged_dict =
        structural::map(dict.clone(), &mut PreserveIntegers, WalkOrder::PostOrder).unwrap();
    assert_eq!(any_object_pointer(&unchanged_dict), dict_pointer);

    let mapped_dict =
        structural::map(dict.clone(), &mut IncrementIntegers, WalkOrder::PostOrder).unwrap();
    assert_ne!(any_object_pointer(&mapped_dict), dict_pointer);
    for value in 0..64 {
        assert_eq!(dict_item(&dict, value), value * 10);
        assert_eq!(dict_item(&mapped_dict, value), value * 10 + 1);
    }
}

#[test]
fn shared_dense_map_aligns_a_lazily_copied_cursor() {
    let source = Map::<i64, i64>::new((0..64).map(|value| (value, value * 10))).unwrap();
    let source_pointer = map_pointer(&source);
    let mut mapper = ChangeNthInteger {
        target: 31,
        seen: 0,
        changed_value: None,
    };

    let mapped = structural::map(source.clone(), &mut mapper, WalkOrder::PostOrder)
        .and_then(to_map)
        .unwrap();

    assert_eq!(mapper.seen, 64);
    assert_ne!(map_pointer(&mapped), source_pointer);
    let changed_value = mapper.changed_value.unwrap();
    for key in 0..64 {
        let original = key * 10;
        assert_eq!(source.get(key), Some(original));
        assert_eq!(
            mapped.get(key),
            Some(original + i64::from(original == changed_value))
        );
    }
}

#[test]
fn shared_dict_shallow_copy_is_a_stable_reentrant_snapshot() {
    let source = Dict::<i64, i64>::new((0..16i64).map(|value| (value, value * 10))).unwrap();
    let mut mapper = ClearSourceDictAndIncrement {
        source: source.clone(),
        cleared: false,
    };

    let mapped = structural::map(source.clone(), &mut mapper, WalkOrder::PostOrder).unwrap();

    assert!(mapper.cleared);
    assert_eq!(dict_size(&source), 0);
    assert_eq!(dict_size(&mapped.cast::<Dict<i64, i64>>().unwrap()), 16);
    for value in 0..16 {
        assert_eq!(dict_item(&mapped, value), value * 10 + 1);
    }
}

#[test]
fn shared_list_uses_snapshot_and_copy_on_write() {
    let source = List::<i64>::new([1, 2]).unwrap();
    let source_pointer = source.as_object_ref().as_raw().as_ptr() as usize;
    let captured = source.clone();
    let mut appended = false;

    let mapped = structural::map(
        source,
        |value: &MapValue| {
            if let Some(integer) = value.cast::<i64>() {
                if !appended {
                    captured.push(3).unwrap();
                    appended = true;
                }
                Any::new(integer + 1)
            } else {
                value.to_owned()
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap();

    assert_ne!(any_object_pointer(&mapped), source_pointer);
    assert_eq!((list_item(&mapped, 0), list_item(&mapped, 1)), (2, 3));
    assert_eq!(captured.to_vec().unwrap(), vec![1, 2, 3]);
}

#[test]
fn pre_order_retained_alias_disables_in_place_mutation() {
    let root = Any::new(List::<i64>::new([1]).unwrap());
    let root_pointer = any_object_pointer(&root);
    let mut retained = None;
    let mapped = structural::map(
        root,
        |value: &MapValue| {
            if value.type_index() == ListObj::type_index() {
                retained = Some(value.to_owned());
                value.to_owned()
            } else if let Some(integer) = value.cast::<i64>() {
                Any::new(integer + 1)
            } else {
                value.to_owned()
            }
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    let retained = retained.unwrap();

    assert_eq!(any_object_pointer(&retained), root_pointer);
    assert_ne!(any_object_pointer(&mapped), root_pointer);
    assert_eq!(list_item(&retained, 0), 1);
    assert_eq!(list_item(&mapped, 0), 2);
}

// ---------------------------------------------------------------------------------------------
// test_big_int.rs: test_big_int_structural_traversal
// ---------------------------------------------------------------------------------------------

/// (1 << 255) | (0x0123456789ABCDEF << 128) | 0xFEDCBA9876543210, as upstream's test builds it.
fn wide() -> tvm_ffi::BigInt {
    tvm_ffi::BigInt::from_words(&[
        0xFEDCBA9876543210_u64 as i64,
        0,
        0x0123456789ABCDEF,
        i64::MIN,
        0,
    ])
}

#[test]
fn test_big_int_structural_traversal() {
    use tvm_ffi::BigInt;
    let root = array([Any::new(1i64), Any::new(wide())]);
    let wide_pointer = root
        .get(1)
        .unwrap()
        .cast::<BigInt>()
        .unwrap()
        .words()
        .as_ptr();

    // A BigInt callback also accepts inline integers, mirroring the C++ cast rule. Upstream's
    // callback visit (the callback owns recursion, unmatched values descend by default) is a
    // `Visitor` here.
    struct CollectBigInts(Vec<BigInt>);
    impl Visitor for CollectBigInts {
        fn visit(
            &mut self,
            value: &VisitValue,
            kind: DefRegionKind,
        ) -> Result<Option<VisitInterrupt>> {
            match value.cast::<BigInt>() {
                Some(integer) => {
                    self.0.push(integer);
                    Ok(None)
                }
                None => self.default_visit_children(value, kind),
            }
        }
    }
    let mut seen = CollectBigInts(Vec::new());
    assert!(structural::visit(&root, &mut seen).unwrap().is_none());
    assert_eq!(seen.0, vec![BigInt::from(1i64), wide()]);

    // The heap integer is a leaf: mapping the inline integer leaves it untouched.
    let mapped = structural::map(
        root.clone(),
        |integer: i64| Any::new(integer + 1),
        WalkOrder::PostOrder,
    )
    .and_then(|value| value.cast::<Array<Any>>())
    .unwrap();
    assert_eq!(mapped.get(0).unwrap().as_exact::<i64>(), Some(2));
    let leaf = mapped.get(1).unwrap().cast::<BigInt>().unwrap();
    assert_eq!(leaf, wide());
    assert_eq!(leaf.words().as_ptr(), wide_pointer);
}

// ---------------------------------------------------------------------------------------------
// This SDK's own tests of the same features.
// ---------------------------------------------------------------------------------------------

/// A free variable with a type annotation (a use, even where the variable is defined).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.sdk_structural.Var", structural = "free-var", final)]
#[repr(C)]
struct SdkVarObj {
    ty: Any,
    #[ffi(structural = "ignore")]
    name: FfiString,
}

/// `let var = value in body`, whose `var` is a simple definition and `pattern` a pattern one.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.sdk_structural.Let", structural = "tree", final)]
#[repr(C)]
struct SdkLetObj {
    #[ffi(structural = "def-simple")]
    var: ObjectRef<SdkVarObj>,
    #[ffi(structural = "def-pattern")]
    pattern: Any,
    body: Any,
}

fn sdk_var(ty: i64, name: &str) -> ObjectRef<SdkVarObj> {
    ObjectRef::new(SdkVarObj {
        ty: Any::new(ty),
        name: name.into(),
    })
}

#[test]
fn sdk_field_flags_open_regions_and_free_var_fields_are_uses() {
    // The pattern holds a variable whose field, inside a pattern, stays in the pattern.
    let node = ObjectRef::new(SdkLetObj {
        var: sdk_var(1, "x"),
        pattern: Any::new(array([Any::new(2i64), Any::new(sdk_var(3, "y"))])),
        body: Any::new(4i64),
    });
    let mut seen = Vec::new();
    let mut vars = Vec::new();
    structural::walk(
        &node,
        (
            |value: i64, kind: DefRegionKind| {
                seen.push((value, kind));
                WalkResult::Advance
            },
            |_: &SdkVarObj, kind: DefRegionKind| {
                vars.push(kind);
                WalkResult::Advance
            },
        ),
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert_eq!(
        seen,
        [
            (1, DefRegionKind::None), // the defined variable's type: a use
            (2, DefRegionKind::Pattern),
            (3, DefRegionKind::Pattern), // a pattern propagates into a variable's fields
            (4, DefRegionKind::None),
        ]
    );
    assert_eq!(vars, [DefRegionKind::Simple, DefRegionKind::Pattern]);
    // The ignored `name` field is neither walked nor mapped.
    let mut strings = 0;
    structural::walk(
        &node,
        |_: FfiString| {
            strings += 1;
            WalkResult::Advance
        },
        WalkOrder::PreOrder,
    )
    .unwrap();
    assert_eq!(strings, 0);
}

#[test]
fn sdk_map_rewrites_reflected_fields_copy_on_write() {
    let var = sdk_var(1, "x");
    let node = ObjectRef::new(SdkLetObj {
        var: var.clone(),
        pattern: Any::new(array([7i64])),
        body: Any::new(array([Any::new(2i64), Any::new(var.clone())])),
    });
    // Only `body`'s integer changes: a new Let whose `var` and `pattern` are the same objects.
    let out = structural::map(
        node.clone(),
        |value: i64| Any::new(if value == 2 { 20 } else { value }),
        WalkOrder::PostOrder,
    )
    .unwrap()
    .cast::<ObjectRef<SdkLetObj>>()
    .unwrap();
    assert!(!out.ptr_eq(&node));
    assert!(out.var.ptr_eq(&var));
    assert_eq!(
        out.pattern.cast::<ObjectRef<AnyObject>>().unwrap(),
        node.pattern.cast::<ObjectRef<AnyObject>>().unwrap()
    );
    let body = out.body.cast::<Array<Any>>().unwrap();
    assert_eq!(body[0].cast::<i64>().unwrap(), 20);
    assert!(body[1].cast::<ObjectRef<SdkVarObj>>().unwrap().ptr_eq(&var));
    // The source is untouched.
    assert_eq!(
        node.body.cast::<Array<Any>>().unwrap()[0]
            .cast::<i64>()
            .unwrap(),
        2
    );
}

#[test]
fn sdk_unchanged_marker_keeps_values_without_a_new_reference() {
    let inner = array([1i64, 2]);
    let root = array([
        Any::new(inner.clone()),
        Any::new("a string longer than seven"),
    ]);
    // Post-order: nothing changes, the same root back.
    let same = structural::map(
        root.clone(),
        |_: &MapValue| structural::Unchanged,
        WalkOrder::PostOrder,
    )
    .unwrap();
    assert_eq!(any_object_pointer(&same), array_pointer(&root));
    // Pre-order: `Unchanged` keeps the array and still maps its children.
    let out = structural::map(
        root.clone(),
        (
            |value: i64| Any::new(value * 10),
            |_: &MapValue| Any::new(structural::Unchanged),
        ),
        WalkOrder::PreOrder,
    )
    .unwrap();
    let out = out.cast::<Array<Any>>().unwrap();
    assert_eq!(out[0].cast::<Array<i64>>().unwrap().to_vec(), [10, 20]);
    assert_eq!(inner.to_vec(), [1, 2]);
    // A mutator may return it too; the marker never reaches the caller.
    struct KeepStrings;
    impl Mutator for KeepStrings {
        fn mutate(&mut self, value: &MapValue, kind: DefRegionKind) -> Result<Any> {
            if value.cast::<FfiString>().is_some() {
                return Ok(Any::new(structural::Unchanged));
            }
            self.default_mutate(value, kind)
        }
    }
    let kept =
        structural::mutate(Any::new("a string longer than seven"), &mut KeepStrings).unwrap();
    assert_eq!(kept.cast::<String>().unwrap(), "a string longer than seven");
}

#[test]
fn sdk_nested_tuple_chains_exceed_eight_links() {
    let root = array([Any::new(1i64), Any::new(2.5), Any::new(true), Any::new("s")]);
    let skip = |_: Shape| WalkResult::Advance;
    let hits = std::cell::RefCell::new(Vec::new());
    let record = |name: &'static str| hits.borrow_mut().push(name);
    structural::walk(
        &root,
        (
            skip,
            skip,
            skip,
            skip,
            skip,
            skip,
            // The seventh link is itself a chain of five.
            (
                |_: i64| {
                    record("int");
                    WalkResult::Advance
                },
                |_: f64| {
                    record("float");
                    WalkResult::Advance
                },
                |_: bool| {
                    record("bool");
                    WalkResult::Advance
                },
                |_: FfiString| {
                    record("str");
                    WalkResult::Advance
                },
                |_: &VisitValue| {
                    record("other");
                    WalkResult::Advance
                },
            ),
            |_: &VisitValue| -> WalkResult { unreachable!("the nested chain takes every value") },
        ),
        WalkOrder::PostOrder,
    )
    .unwrap();
    assert_eq!(hits.into_inner(), ["int", "float", "bool", "str", "other"]);

    let mapped = structural::map(
        array([1i64, 2]),
        (
            (|v: i64| Any::new(v + 1), |_: f64| Any::new(0i64)),
            |_: &MapValue| Unchanged,
        ),
        WalkOrder::PostOrder,
    )
    .and_then(to_array)
    .unwrap();
    assert_eq!(mapped.to_vec(), [2, 3]);
}

#[test]
fn sdk_unchanged_tree_map_is_the_same_object_at_every_level() {
    let inner: Vec<Array<i64>> = (0..3).map(|i| array([i, i + 1])).collect();
    let root = array(inner.clone());
    let out = structural::map(root.clone(), |v: i64| Any::new(v), WalkOrder::PostOrder)
        .unwrap()
        .cast::<Array<Array<i64>>>()
        .unwrap();
    assert_eq!(array_pointer(&out), array_pointer(&root));
    for (index, child) in inner.iter().enumerate() {
        assert_eq!(
            array_pointer(&out.get(index).unwrap()),
            array_pointer(child)
        );
    }
    // One change copies its path only: the root and that child; the siblings are shared.
    let out = structural::map(
        root.clone(),
        |v: i64| Any::new(if v == 2 { 200 } else { v }),
        WalkOrder::PostOrder,
    )
    .unwrap()
    .cast::<Array<Array<i64>>>()
    .unwrap();
    assert_ne!(array_pointer(&out), array_pointer(&root));
    assert_eq!(
        array_pointer(&out.get(0).unwrap()),
        array_pointer(&inner[0])
    );
    assert_ne!(
        array_pointer(&out.get(1).unwrap()),
        array_pointer(&inner[1])
    );
    assert_ne!(
        array_pointer(&out.get(2).unwrap()),
        array_pointer(&inner[2])
    );
    assert_eq!(out.get(2).unwrap().to_vec(), [200, 3]);
}
