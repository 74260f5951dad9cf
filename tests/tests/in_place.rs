//! In-place rewriting needs sole ownership, as `Arc::get_mut` does: a weak reference can be
//! upgraded by a callback into a second owner of the value the engine keeps rewriting, so a
//! value with one is copied instead (arrays, maps, objects' fields).
use std::cell::RefCell;

use tvm_ffi::structural::{self, WalkOrder};
use tvm_ffi::{Any, Array, Map, Object, ObjectRef, WeakRef};

/// Maps every integer to one more, upgrading `weak` at the first call (a second owner).
fn map_upgrading<T: tvm_ffi::ObjectType>(root: Any, weak: &WeakRef<T>) -> (Any, ObjectRef<T>) {
    let upgraded = RefCell::new(None);
    let mapped = structural::map(
        root,
        |v: i64| {
            upgraded
                .borrow_mut()
                .get_or_insert_with(|| weak.upgrade().unwrap());
            Any::new(v + 1)
        },
        WalkOrder::PostOrder,
    )
    .unwrap();
    (mapped, upgraded.into_inner().unwrap())
}

#[test]
fn an_array_with_a_weak_reference_is_copied_not_rewritten() {
    let array = Array::<i64>::new([1, 2, 3]).unwrap();
    let weak = array.as_object_ref().downgrade();
    let (mapped, upgraded) = map_upgrading(Any::new(array), &weak);
    let mapped = mapped.cast::<Array<i64>>().unwrap();
    assert_eq!(mapped.to_vec(), [2, 3, 4]);
    // The owner the callback made still sees the array it upgraded.
    let upgraded = Any::new(upgraded).cast::<Array<i64>>().unwrap();
    assert_eq!(upgraded.to_vec(), [1, 2, 3]);
    assert!(!mapped.as_object_ref().ptr_eq(upgraded.as_object_ref()));
}

#[test]
fn an_array_without_one_is_still_rewritten_in_place() {
    let array = Array::<i64>::new([1, 2, 3]).unwrap();
    let address = array.as_object_ref().as_raw();
    let mapped = structural::map(array, |v: i64| Any::new(v + 1), WalkOrder::PostOrder)
        .unwrap()
        .cast::<Array<i64>>()
        .unwrap();
    assert_eq!(mapped.to_vec(), [2, 3, 4]);
    assert_eq!(mapped.as_object_ref().as_raw(), address);
}

#[test]
fn a_map_with_a_weak_reference_is_copied_not_rewritten() {
    let map = Map::<tvm_ffi::String, i64>::new([("a".into(), 1), ("b".into(), 2)]).unwrap();
    let weak = map.as_object_ref().downgrade();
    let (mapped, upgraded) = map_upgrading(Any::new(map), &weak);
    let mapped = mapped.cast::<Map<tvm_ffi::String, i64>>().unwrap();
    assert_eq!(mapped.get("a"), Some(2));
    let upgraded = Any::new(upgraded)
        .cast::<Map<tvm_ffi::String, i64>>()
        .unwrap();
    assert_eq!((upgraded.get("a"), upgraded.get("b")), (Some(1), Some(2)));
}

/// An object whose fields a mapper rewrites.
#[derive(Object, Clone)]
#[ffi_type(key = "rust_tests.in_place.Pair")]
#[repr(C)]
pub struct Pair {
    pub a: i64,
    pub b: i64,
}

#[test]
fn an_object_with_a_weak_reference_is_copied_not_rewritten() {
    let pair = ObjectRef::new(Pair { a: 1, b: 2 });
    let weak = pair.downgrade();
    let (mapped, upgraded) = map_upgrading(Any::new(pair), &weak);
    let mapped = mapped.cast::<ObjectRef<Pair>>().unwrap();
    assert_eq!((mapped.a, mapped.b), (2, 3));
    assert_eq!((upgraded.a, upgraded.b), (1, 2));
}
