//! A string field of a type defined in C++, written by C++ with bytes that are not UTF-8 (C++
//! strings need not be): Rust reads it through an `external` declaration and must get a valid
//! `&str` (invalid sequences replaced), never a `&str` over the raw bytes. The test
//! `foreign_strings_are_valid_utf8_in_rust` (tests/tests/objects.rs) runs this binary and
//! checks what it prints.
use tvm_ffi::{reflection, Any, Function, ObjectRef, ObjectType, Rw};

/// `testing.TestObjectBase` of libtvm_ffi_testing, which this binary links.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestObjectBase", external)]
#[repr(C)]
pub struct CxxObjectBase {
    pub v_i64: Rw<i64>,
    pub v_f64: Rw<f64>,
    pub v_str: Rw<tvm_ffi::String>,
}

// SAFETY: mirrors C++ `testing::TestObjectBase` (an integer, a float and a string).
unsafe impl tvm_ffi::ExternalType for CxxObjectBase {}

/// A string object holding `bytes` as they are (the C API does not check them).
fn raw_string(bytes: &[u8]) -> Any {
    let input = tvm_ffi::sys::TVMFFIByteArray::from_bytes(bytes);
    let mut out = tvm_ffi::sys::TVMFFIAny::NONE;
    // SAFETY: valid input bytes and output slot; on success `out` owns the new string.
    let rc = unsafe { tvm_ffi::sys::TVMFFIStringFromByteArray(&input, &mut out) };
    assert_eq!(rc, 0, "TVMFFIStringFromByteArray failed");
    // SAFETY: `out` holds one owned value.
    unsafe { Any::from_raw(out) }
}

fn main() {
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    let index = CxxObjectBase::type_index();
    let init: Function = reflection::type_attr(index, "__ffi_init__")
        .expect("C++ registers a constructor")
        .cast()
        .unwrap();
    let obj: ObjectRef<CxxObjectBase> = init.call((1_i64,)).unwrap().cast().unwrap();
    println!("before={:?}", obj.v_str.get().as_str());
    // What a C++ setter may store: 0xff is never valid in UTF-8.
    let field = reflection::fields(index)
        .into_iter()
        // SAFETY: the runtime's field names are valid byte arrays for its lifetime.
        .find(|f| unsafe { f.name.as_bytes() } == b"v_str")
        .expect("the field v_str");
    let setter: tvm_ffi::sys::TVMFFIFieldSetter =
        // SAFETY: C++ fields register plain setter function pointers (no FunctionObj flag).
        unsafe { std::mem::transmute(field.setter) };
    let value = raw_string(b"ok \xff\xfe end");
    // SAFETY: the field's own setter, the field's address in a live object, a valid value.
    let rc = unsafe {
        let base = obj.as_raw().as_ptr() as *mut u8;
        setter(
            base.add(field.offset as usize) as *mut std::ffi::c_void,
            value.as_raw(),
        )
    };
    assert_eq!(rc, 0, "the C++ setter failed");
    let read = obj.v_str.get();
    println!("after={:?}", read.as_str());
    println!("valid={}", std::str::from_utf8(read.as_bytes()).is_ok());
}
