//! Rust subtypes of the runtime's built-in types (declared `external`), in a process of their
//! own: the runtime reserves those types with no child slots and ends the process when asked
//! for a subtype ("Reach maximum number of sub-classes"). The test
//! `subtypes_of_builtin_types_are_load_errors` (tests/tests/objects.rs) runs this binary and
//! asserts on its output: one load error per such type, naming its key, and the rest
//! registers. Likewise a Rust subtype of a final C++ type (`__ffi_type_final__`), which C++
//! itself refuses at compile time.
use tvm_ffi::{reflection, Rw};

/// The runtime's `ffi.Function`, declared (it has no reflected fields).
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "ffi.Function", external)]
#[repr(C)]
pub struct FunctionDecl {}
// SAFETY: `ffi.Function` has no reflected fields to mirror.
unsafe impl tvm_ffi::ExternalType for FunctionDecl {}

#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.MyFunction")]
#[repr(C)]
pub struct MyFunction {
    #[ffi(base)]
    pub base: FunctionDecl,
    pub extra: i64,
}

/// The runtime's `ffi.Array`, declared.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "ffi.Array", external)]
#[repr(C)]
pub struct ArrayDecl {}
// SAFETY: `ffi.Array` has no reflected fields to mirror.
unsafe impl tvm_ffi::ExternalType for ArrayDecl {}

#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.MyArray")]
#[repr(C)]
pub struct MyArray {
    #[ffi(base)]
    pub base: ArrayDecl,
}

/// `testing.TestIntPair` of libtvm_ffi_testing (which this binary links): final in C++.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.TestIntPair", external)]
#[repr(C)]
pub struct CxxIntPair {
    pub a: Rw<i64>,
    pub b: Rw<i64>,
}
// SAFETY: C++ `TestIntPairObj` holds two `int64_t` fields, `a` and `b`, in this order.
unsafe impl tvm_ffi::ExternalType for CxxIntPair {}

#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.SubIntPair")]
#[repr(C)]
pub struct SubIntPair {
    #[ffi(base)]
    pub base: CxxIntPair,
    pub c: i64,
}

/// Unrelated: it registers.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.BuiltinBystander")]
#[repr(C)]
pub struct Bystander {
    pub v: i64,
}

fn main() {
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    for key in [
        "rust_tests.MyFunction",
        "rust_tests.MyArray",
        "rust_tests.SubIntPair",
        "rust_tests.BuiltinBystander",
    ] {
        println!(
            "{key} registered: {}",
            reflection::lookup_type(key).is_some()
        );
    }
}
