//! A user crate that forbids `unsafe` can still define objects, methods and functions: the
//! generated code contains no `unsafe` of its own (the unsafe parts live in the runtime).
#![forbid(unsafe_code)]

use tvm_ffi::{ffi_func, ffi_methods, Object, ObjectRef, Rw};

#[derive(Object, Clone)]
#[ffi_type(key = "ui_pass.Safe")]
#[repr(C)]
pub struct Safe {
    #[ffi(rw)]
    pub value: Rw<i64>,
}

#[ffi_methods]
impl Safe {
    pub fn double(&self) -> i64 {
        2 * self.value.get()
    }
}

#[ffi_func(name = "ui_pass.safe_add", export = "safe_add")]
fn safe_add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let s = ObjectRef::new(Safe { value: 21.into() });
    assert_eq!(s.double(), 42);
    assert_eq!(safe_add(1, 2), 3);
    assert!(tvm_ffi::registry::load_errors().is_empty());
}
