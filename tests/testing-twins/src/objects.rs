//! Plain object fixtures: `TestIntPair`, the `TestObject*` and `TestCxxClass*` hierarchies,
//! the layout fixtures, `TestDeepCopyEdges`, `TestNonCopyable` and the "unregistered" pair
//! (C++ `testing.cc:50-95, 199-280, 393-428`).
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{ffi_func, ffi_methods, Any, Array, Map, Object, ObjectRef, Rw};

// Twin of `testing.TestIntPair`: read-only fields, an explicit constructor, `__ffi_convert__`.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestIntPair", final, convert)]
#[repr(C)]
pub struct TestIntPair {
    /// Field `a`
    pub a: i64,
    /// Field `b`
    pub b: i64,
}

#[ffi_methods]
impl TestIntPair {
    #[ffi(init)]
    fn new(a: i64, b: i64) -> Self {
        TestIntPair { a, b }
    }

    /// Method to compute sum of a and b
    fn sum(&self) -> i64 {
        self.a + self.b
    }
}

/// Get sum of the pair
#[ffi_func(name = "testing.rs.TestIntPairSum")]
fn test_int_pair_sum(pair: ObjectRef<TestIntPair>) -> i64 {
    pair.sum()
}

// Twin of `testing.TestObjectBase`: defaults, a read-only field with a default, a method.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestObjectBase")]
#[repr(C)]
pub struct TestObjectBase {
    /// i64 field
    #[ffi(rw, default = 10)]
    pub v_i64: Rw<i64>,
    #[ffi(default = 10.0)]
    pub v_f64: f64,
    #[ffi(rw, default = "hello")]
    pub v_str: Rw<tvm_ffi::String>,
}

#[ffi_methods]
impl TestObjectBase {
    /// add_i64 method
    fn add_i64(&self, other: i64) -> i64 {
        self.v_i64.get() + other
    }
}

// Twin of `testing.TestObjectDerived`: its creator makes an empty map and array.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestObjectDerived", final)]
#[repr(C)]
pub struct TestObjectDerived {
    #[ffi(base)]
    pub base: TestObjectBase,
    #[ffi(rw)]
    pub v_map: Rw<Map<Any, Any>>,
    #[ffi(rw)]
    pub v_array: Rw<Array<Any>>,
}

// Twin of `testing.TestObjectPtrHolder`: a required reference (C++ `Arc<T>`, null from the
// creator) and an optional one (C++ `ObjectPtr<T>`).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestObjectPtrHolder")]
#[repr(C)]
pub struct TestObjectPtrHolder {
    #[ffi(rw)]
    pub value: Rw<ObjectRef<TestObjectBase>>,
    #[ffi(rw, default = None)]
    pub optional_value: Rw<Option<ObjectRef<TestObjectBase>>>,
}

// Twin of `testing.TestCxxClassBase`: fields left out of `repr`.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxClassBase")]
#[repr(C)]
pub struct TestCxxClassBase {
    #[ffi(rw, repr = false)]
    pub v_i64: Rw<i64>,
    #[ffi(rw, repr = false)]
    pub v_i32: Rw<i32>,
}

// Twin of `testing.TestCxxClassDerived`: its fields start after the parent's padding.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxClassDerived")]
#[repr(C)]
pub struct TestCxxClassDerived {
    #[ffi(base)]
    pub base: TestCxxClassBase,
    #[ffi(rw)]
    pub v_f64: Rw<f64>,
    #[ffi(rw, default = 8.0)]
    pub v_f32: Rw<f32>,
}

// Twin of `testing.TestCxxClassDerivedDerived`.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxClassDerivedDerived")]
#[repr(C)]
pub struct TestCxxClassDerivedDerived {
    #[ffi(base)]
    pub base: TestCxxClassDerived,
    #[ffi(rw, default = "default")]
    pub v_str: Rw<tvm_ffi::String>,
    #[ffi(rw)]
    pub v_bool: Rw<bool>,
}

// Twin of `testing.TestCxxClassHiddenField`: an unreflected `int64_t` between the fields.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxClassHiddenField", final)]
#[repr(C)]
pub struct TestCxxClassHiddenField {
    #[ffi(rw)]
    pub v_i64: Rw<i64>,
    #[ffi(skip)]
    pub hidden_i64: i64,
    #[ffi(rw)]
    pub v_i32: Rw<i32>,
}

// Twin of `testing.TestCxxClassPolymorphic`: C++ keeps a vtable pointer in the allocation,
// 8 bytes the reflection does not explain (`total_size` 40 for one `int64_t`).
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxClassPolymorphic", final)]
#[repr(C)]
pub struct TestCxxClassPolymorphic {
    #[ffi(rw)]
    pub v_i64: Rw<i64>,
    #[ffi(skip)]
    pub vtable_slot: u64,
}

// Twin of `testing.TestDeepCopyEdges`: an `Any` field and a nullable object field.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestDeepCopyEdges")]
#[repr(C)]
pub struct TestDeepCopyEdges {
    #[ffi(rw)]
    pub v_any: Rw<Any>,
    #[ffi(rw)]
    pub v_obj: Rw<Option<ObjectRef<AnyObject>>>,
}

// Twin of `testing.TestNonCopyable`: no creator (C++ has no default constructor) and no
// shallow copy (not `Clone`, as the C++ copy constructor is deleted).
#[derive(Object)]
#[ffi_type(key = "testing.rs.TestNonCopyable", creator = false)]
#[repr(C)]
pub struct TestNonCopyable {
    pub value: i64,
}

#[ffi_methods]
impl TestNonCopyable {
    #[ffi(init)]
    fn new(value: i64) -> Self {
        TestNonCopyable { value }
    }
}

// Twin of `testing.TestUnregisteredBaseObject` (no Python class is declared for it).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestUnregisteredBaseObject", creator = false)]
#[repr(C)]
pub struct TestUnregisteredBaseObject {
    pub v1: i64,
}

#[ffi_methods]
impl TestUnregisteredBaseObject {
    /// Constructor of TestUnregisteredBaseObject
    #[ffi(init)]
    fn new(v1: i64) -> Self {
        TestUnregisteredBaseObject { v1 }
    }

    /// Get (v1 + 1) from TestUnregisteredBaseObject
    fn get_v1_plus_one(&self) -> i64 {
        self.v1 + 1
    }
}

// Twin of `testing.TestUnregisteredObject`.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestUnregisteredObject", creator = false)]
#[repr(C)]
pub struct TestUnregisteredObject {
    #[ffi(base)]
    pub base: TestUnregisteredBaseObject,
    pub v2: i64,
}

#[ffi_methods]
impl TestUnregisteredObject {
    /// Constructor of TestUnregisteredObject
    #[ffi(init)]
    fn new(v1: i64, v2: i64) -> Self {
        TestUnregisteredObject {
            base: TestUnregisteredBaseObject { v1 },
            v2,
        }
    }

    /// Get (v2 + 2) from TestUnregisteredObject
    fn get_v2_plus_two(&self) -> i64 {
        self.v2 + 2
    }
}

// Twin of `testing.make_unregistered_object`.
#[ffi_func(name = "testing.rs.make_unregistered_object")]
fn make_unregistered_object() -> ObjectRef<AnyObject> {
    ObjectRef::new(TestUnregisteredObject::new(41, 42)).upcast()
}
