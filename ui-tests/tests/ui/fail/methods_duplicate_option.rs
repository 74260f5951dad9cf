use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods(crate = "tvm_ffi", crate = "tvm_ffi")]
impl Point {
    #[ffi(name = "get_x", name = "read_x")]
    pub fn x_value(&self) -> i64 {
        self.x
    }
    #[ffi(init, init)]
    pub fn new(x: i64) -> Self {
        Point { x }
    }
}

fn main() {}
