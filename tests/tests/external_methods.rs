//! Methods cannot be added to a type declared `external` (its method table belongs to the
//! library that defines it): a load error naming the method, the rest still registers.
use tvm_ffi::{ffi_methods, Object};

/// The runtime's own `ffi.Shape`, declared (no fields are needed to refer to it).
#[derive(Object)]
#[ffi_type(key = "ffi.Shape", external)]
#[repr(C)]
pub struct ShapeDeclaration {}

#[ffi_methods]
impl ShapeDeclaration {
    pub fn rank(&self) -> i64 {
        0
    }
}

#[test]
fn methods_on_external_types_are_load_errors() {
    let errors = tvm_ffi::registry::load_errors();
    assert_eq!(
        errors,
        vec!["cannot register method `ffi.Shape.rank`: the type is declared `external` (defined elsewhere); add methods to a Rust subtype or register a global function instead".to_string()]
    );
    // The declaration itself resolved to the runtime's type.
    assert_eq!(
        ShapeDeclaration::type_index(),
        tvm_ffi::sys::type_index::kTVMFFIShape
    );
}
