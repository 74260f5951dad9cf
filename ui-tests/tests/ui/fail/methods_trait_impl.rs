use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

pub trait Norm {
    fn norm(&self) -> i64;
}

#[ffi_methods]
impl Norm for Point {
    fn norm(&self) -> i64 {
        self.x
    }
}

fn main() {}
