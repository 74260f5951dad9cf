use tvm_ffi::{Object, Rw};

#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: Rw<i64>,
    #[ffi(skip)]
    pub v_i32: i32,
}

fn main() {}
