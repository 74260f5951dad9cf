//! `external` declarations of C++ types of libtvm_ffi_testing (which this binary links) whose
//! field types do not match what C++ registered, in a process of their own: the test
//! `external_field_types_are_checked_against_the_registered_schema` (tests/tests/objects.rs)
//! runs this binary and asserts on what it prints. The static type index cannot tell these
//! apart (every object reference reports 64, every 16-byte value -1); read in place, a
//! `Function` over a C++ `ObjectRef` jumps to whatever the object holds, a `BigInt` over a C++
//! `Any` holding a string frees it twice, a non-null reference over a null one is a null
//! `ObjectRef`.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{reflection, BigInt, Function, ObjectRef, ObjectType, Rw};

/// `testing.TestObjectBase`, declared correctly.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestObjectBase", external)]
#[repr(C)]
pub struct CxxObjectBase {
    pub v_i64: Rw<i64>,
    pub v_f64: Rw<f64>,
    pub v_str: Rw<tvm_ffi::String>,
}
// SAFETY: mirrors C++ `testing::TestObjectBase`.
unsafe impl tvm_ffi::ExternalType for CxxObjectBase {}

/// `testing.TestVisitHook { ObjectRef child; }` with the reference declared a `Function`.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestVisitHook", external)]
#[repr(C)]
pub struct ChildAsFunction {
    pub child: Rw<Function>,
}
// SAFETY: deliberately wrong; the load-time check refuses it before any use.
unsafe impl tvm_ffi::ExternalType for ChildAsFunction {}

/// `testing.TestDeepCopyEdges { Any v_any; ObjectRef v_obj; }` with the `Any` declared a
/// `BigInt` (the reference is declared correctly).
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestDeepCopyEdges", external)]
#[repr(C)]
pub struct AnyAsBigInt {
    pub v_any: Rw<BigInt>,
    pub v_obj: Rw<Option<ObjectRef<AnyObject>>>,
}
// SAFETY: deliberately wrong; the load-time check refuses it before any use.
unsafe impl tvm_ffi::ExternalType for AnyAsBigInt {}

/// `testing.TestObjectPtrHolder { TestObjectBase value; Optional<TestObjectBase>
/// optional_value; }` with the nullable reference `value` declared non-null.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestObjectPtrHolder", external)]
#[repr(C)]
pub struct NullableAsNonNull {
    pub value: Rw<ObjectRef<CxxObjectBase>>,
    pub optional_value: Rw<Option<ObjectRef<CxxObjectBase>>>,
}
// SAFETY: deliberately wrong; the load-time check refuses it before any use.
unsafe impl tvm_ffi::ExternalType for NullableAsNonNull {}

/// `testing.TestCxxInitSubset`, declared correctly.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestCxxInitSubset", external)]
#[repr(C)]
pub struct CxxInitSubset {
    pub required_field: Rw<i64>,
    pub optional_field: Rw<i64>,
    pub note: Rw<tvm_ffi::String>,
}
// SAFETY: mirrors C++ `testing::TestCxxInitSubsetObj` (two integers and a string).
unsafe impl tvm_ffi::ExternalType for CxxInitSubset {}

/// `testing.TestVisitHook`, declared correctly: the nullable C++ `ObjectRef` as an `Option`.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestVisitHook", external)]
#[repr(C)]
pub struct VisitHook {
    pub child: Rw<Option<ObjectRef<AnyObject>>>,
}
// SAFETY: mirrors C++ `testing::TestVisitHookObj`, whose reference may be null.
unsafe impl tvm_ffi::ExternalType for VisitHook {}

/// `testing.TestObjectPtrHolder`, declared correctly (C++ `Optional<TestObjectBase>` is the
/// same nullable pointer).
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestObjectPtrHolder", external)]
#[repr(C)]
pub struct ObjectPtrHolder {
    pub value: Rw<Option<ObjectRef<CxxObjectBase>>>,
    pub optional_value: Rw<Option<ObjectRef<CxxObjectBase>>>,
}
// SAFETY: mirrors C++ `testing::TestObjectPtrHolder`; both references may be null.
unsafe impl tvm_ffi::ExternalType for ObjectPtrHolder {}

fn main() {
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    let registered = |f: fn() -> i32| std::panic::catch_unwind(f).is_ok();
    std::panic::set_hook(Box::new(|_| {}));
    println!(
        "CxxObjectBase usable: {}",
        registered(CxxObjectBase::type_index)
    );
    println!(
        "CxxInitSubset usable: {}",
        registered(CxxInitSubset::type_index)
    );
    println!("VisitHook usable: {}", registered(VisitHook::type_index));
    println!(
        "ObjectPtrHolder usable: {}",
        registered(ObjectPtrHolder::type_index)
    );
    println!(
        "ChildAsFunction usable: {}",
        registered(ChildAsFunction::type_index)
    );
    println!(
        "AnyAsBigInt usable: {}",
        registered(AnyAsBigInt::type_index)
    );
    println!(
        "NullableAsNonNull usable: {}",
        registered(NullableAsNonNull::type_index)
    );
    // The correct declaration reads the C++ object in place.
    let init: Function = reflection::type_attr(CxxObjectBase::type_index(), "__ffi_init__")
        .expect("C++ registers a constructor")
        .cast()
        .unwrap();
    let obj: ObjectRef<CxxObjectBase> = init.call((7_i64,)).unwrap().cast().unwrap();
    println!("v_i64={}", obj.v_i64.get());
}
