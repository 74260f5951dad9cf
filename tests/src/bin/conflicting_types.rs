//! Deliberately conflicting registrations, in a process of their own: the test
//! `conflicting_registrations_are_load_errors_naming_the_key` (tests/tests/objects.rs) runs this
//! binary and asserts on everything it prints, so the load errors it provokes are checked
//! instead of printed into the test suite's output.
//!
//! stderr: the runtime's diagnostics, one `tvm-ffi: ...` line per load error. stdout: one line
//! per fact the test checks.
use tvm_ffi::{reflection, ObjectType, Rw};

// A clash with a built-in type: a load error naming the key, while everything else in this
// binary registers. (Two definitions of one key in one crate are a compile error; two libraries
// defining one key with different Rust layouts are tested in tests/python/test_objects.py with
// tests/layout-variants.)
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "ffi.Shape")]
#[repr(C)]
pub struct NotTheBuiltinShape {
    pub x: i64,
}

/// A wrong declaration of a type defined elsewhere (the runtime's `ffi.Shape` has no such
/// field): a load error, and its Rust subtype is refused, instead of a layout guess.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "ffi.Shape", external)]
#[repr(C)]
pub struct WrongShapeDeclaration {
    pub rank: Rw<i64>,
}

// SAFETY: deliberately wrong; the load-time check refuses it before any use.
unsafe impl tvm_ffi::ExternalType for WrongShapeDeclaration {}

#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.OnWrongParent")]
#[repr(C)]
pub struct OnWrongParent {
    #[ffi(base)]
    pub base: WrongShapeDeclaration,
    pub extra: i64,
}

/// Unrelated to the conflicts: it registers.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.Bystander")]
#[repr(C)]
pub struct Bystander {
    pub v: i64,
}

/// The message of the panic `f` raises, if it does.
fn panic_message(f: fn() -> i32) -> Option<String> {
    let payload = std::panic::catch_unwind(f).err()?;
    Some(tvm_ffi_tests::panic_message(&*payload))
}

fn main() {
    // Registration is over; the panics below are expected and asserted, not printed.
    std::panic::set_hook(Box::new(|_| {}));
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    for key in ["rust_tests.OnWrongParent", "rust_tests.Bystander"] {
        println!(
            "{key} registered: {}",
            reflection::lookup_type(key).is_some()
        );
    }
    // `ffi.Shape` exists in the runtime, but `NotTheBuiltinShape` failed its layout check:
    // using it must not silently pick the runtime's type.
    println!(
        "NotTheBuiltinShape::type_index panics: {:?}",
        panic_message(NotTheBuiltinShape::type_index)
    );
    println!(
        "OnWrongParent::type_index panics: {}",
        panic_message(OnWrongParent::type_index).is_some()
    );
}
