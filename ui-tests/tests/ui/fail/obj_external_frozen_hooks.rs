use tvm_ffi::{Object, Rw};

// An `external` declaration registers nothing of its own: no hooks, no `frozen`.
#[derive(Object, PartialEq)]
#[ffi_type(key = "testing.TestCxxClassBase", external, frozen, eq)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: Rw<i64>,
    pub v_i32: Rw<i32>,
}

fn main() {}
