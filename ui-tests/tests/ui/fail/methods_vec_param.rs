use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    pub fn sum(&self, values: Vec<i64>) -> i64 {
        self.x + values.iter().sum::<i64>()
    }
}

fn main() {}
