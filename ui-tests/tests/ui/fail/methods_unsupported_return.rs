use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    pub fn cell(&self) -> std::cell::Cell<i64> {
        std::cell::Cell::new(self.x)
    }
}

fn main() {}
