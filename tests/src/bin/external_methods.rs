//! Methods on a type declared `external`, in a process of their own: the test
//! `methods_on_external_types_are_load_errors` (tests/tests/external_methods.rs) runs this binary
//! and asserts on what it prints, so the load error it provokes is checked instead of printed
//! into the test suite's output.
use tvm_ffi::{ffi_methods, Object, ObjectType};

/// The runtime's own `ffi.Shape`, declared (no fields are needed to refer to it).
#[derive(Object)]
#[ffi_type(key = "ffi.Shape", external)]
#[repr(C)]
pub struct ShapeDeclaration {}

// SAFETY: no fields are declared: nothing of the C++ layout is read in place.
unsafe impl tvm_ffi::ExternalType for ShapeDeclaration {}

#[ffi_methods]
impl ShapeDeclaration {
    pub fn rank(&self) -> i64 {
        0
    }
}

fn main() {
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    // The declaration itself resolved to the runtime's type.
    println!(
        "ShapeDeclaration is ffi.Shape: {}",
        ShapeDeclaration::type_index() == tvm_ffi::sys::type_index::kTVMFFIShape
    );
}
