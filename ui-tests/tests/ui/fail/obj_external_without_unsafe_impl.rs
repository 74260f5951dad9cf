use tvm_ffi::{Object, Rw};

/// An `external` declaration is a trust statement: what the load-time checks cannot see is
/// promised by `unsafe impl tvm_ffi::ExternalType`, which is missing here.
#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: Rw<i64>,
    pub v_i32: Rw<i32>,
}

fn main() {}
