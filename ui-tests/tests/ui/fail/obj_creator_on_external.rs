use tvm_ffi::{Object, Rw};

#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external, creator = false)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: Rw<i64>,
    pub v_i32: Rw<i32>,
}

fn main() {}
