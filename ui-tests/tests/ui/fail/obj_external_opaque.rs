use tvm_ffi::{Object, Rw};

// `opaque` without `external`.
#[derive(Object)]
#[ffi_type(key = "my_ext.Handle", opaque)]
#[repr(C)]
pub struct Handle {}

// An `opaque` declaration with a field of its own.
#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external, opaque)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: Rw<i64>,
}

fn main() {}
