use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    #[ffi(init)]
    pub fn new(x: i64) -> Self {
        Point { x }
    }
    #[ffi(init)]
    pub fn zero() -> Self {
        Point { x: 0 }
    }
}

fn main() {}
