use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(final)]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
