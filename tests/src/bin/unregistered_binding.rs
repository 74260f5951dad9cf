//! A declaration (`external`) of a type key that nothing registers, in a process of its own:
//! it does not register the key, its load error is printed to stderr, and using the type
//! panics with the message naming it. The test `test_object_registration::
//! test_binding_does_not_register` (tests/tests/upstream_values.rs) runs this binary and
//! asserts on its output (upstream's `test_binding_does_not_register`).
use tvm_ffi::{reflection, ObjectType};

/// A binding of a key no library registers.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "testing.rust.NeverRegistered", external)]
#[repr(C)]
pub struct UnregisteredBinding {}
// SAFETY: no type is registered under the key, so there are no fields to mirror.
unsafe impl tvm_ffi::ExternalType for UnregisteredBinding {}

fn main() {
    for error in tvm_ffi::registry::load_errors() {
        println!("load error: {error}");
    }
    println!(
        "registered: {}",
        reflection::lookup_type("testing.rust.NeverRegistered").is_some()
    );
    // The panic is the answer: no hook prints it.
    std::panic::set_hook(Box::new(|_| {}));
    let panic = std::panic::catch_unwind(UnregisteredBinding::type_index).unwrap_err();
    println!("panic: {}", tvm_ffi_tests::panic_message(&*panic));
}
