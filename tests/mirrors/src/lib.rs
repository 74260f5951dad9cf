//! Rust declarations of the wheel's C++ `ffi.*` and `testing.*` types, generated from the
//! runtime's reflection by `python -m tvm_ffi_build.rust_mirror` (`generated.rs`, kept
//! current by `tests/python/test_rust_mirror.py`), and functions that use them as a compiler
//! pass would: typed field reads of C++ objects, their methods, their constructors. Loaded from
//! Python after `import tvm_ffi` (which loads `libtvm_ffi_testing`, where the types live): the
//! SDK checks every declaration against the runtime's reflection when this library loads.
#![deny(unsafe_code)]
// The generated declarations carry the one `unsafe impl` each that an `external` type needs.
#[allow(unsafe_code)]
pub mod generated;

use generated::{
    TestCxxClassDerivedDerived, TestIntPair, TestObjectBase, TestObjectDerived, TestObjectPtrHolder,
};
use tvm_ffi::{ffi_func, Any, Array, ObjectRef, Result, String};

/// The load errors of this library (none when every generated declaration matched).
#[ffi_func(name = "mirrors.load_errors")]
pub fn load_errors() -> Array<String> {
    Array::new(
        tvm_ffi::registry::load_errors()
            .into_iter()
            .map(|e| String::from(e.as_str())),
    )
    .expect("a small array")
}

/// `[v_i64, v_f64, v_str, add_i64(1)]` of a C++ `testing.TestObjectBase`, read through the
/// generated declaration (a `testing.TestObjectDerived` too: its parent's fields).
#[ffi_func(name = "mirrors.object_base")]
pub fn object_base(obj: ObjectRef<TestObjectBase>) -> Result<Array<Any>> {
    Array::new([
        Any::new(obj.v_i64.get()),
        Any::new(obj.v_f64.get()),
        Any::new(obj.v_str.get()),
        Any::new(TestObjectBase::add_i64(&obj, 1)?),
    ])
}

/// `[v_i64, len(v_map), len(v_array)]` of a `testing.TestObjectDerived`.
#[ffi_func(name = "mirrors.object_derived")]
pub fn object_derived(obj: ObjectRef<TestObjectDerived>) -> Result<Array<i64>> {
    Array::new([
        obj.base.v_i64.get(),
        obj.v_map.get().len() as i64,
        obj.v_array.get().len() as i64,
    ])
}

/// `[v_i64, v_i32, v_f64, v_f32, v_str, v_bool]` of a `testing.TestCxxClassDerivedDerived`
/// (three levels of C++ parents).
#[ffi_func(name = "mirrors.derived_derived")]
pub fn derived_derived(obj: ObjectRef<TestCxxClassDerivedDerived>) -> Result<Array<Any>> {
    let derived = &obj.base;
    Array::new([
        Any::new(derived.base.v_i64.get()),
        Any::new(i64::from(derived.base.v_i32.get())),
        Any::new(derived.v_f64.get()),
        Any::new(f64::from(derived.v_f32.get())),
        Any::new(obj.v_str.get()),
        Any::new(obj.v_bool.get()),
    ])
}

/// The holder's `value.v_i64` and `optional_value.v_i64`, each `None` when the reference is
/// null (C++ may leave either null: both are declared `Option`).
#[ffi_func(name = "mirrors.ptr_holder")]
pub fn ptr_holder(obj: ObjectRef<TestObjectPtrHolder>) -> Result<Array<Any>> {
    let value = obj.value.get().map(|o| o.v_i64.get());
    let optional = obj.optional_value.get().map(|o| o.v_i64.get());
    Array::new([Any::new(value), Any::new(optional)])
}

/// A C++ `testing.TestIntPair` made from Rust through its generated constructor, and its
/// `sum` method.
#[ffi_func(name = "mirrors.int_pair")]
pub fn int_pair(a: i64, b: i64) -> Result<Array<Any>> {
    let pair = TestIntPair::new(a, b)?;
    let sum = TestIntPair::sum(&pair)?;
    Array::new([Any::new(pair), Any::new(sum)])
}
