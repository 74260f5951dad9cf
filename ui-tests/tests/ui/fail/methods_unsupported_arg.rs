use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    pub fn shift(&self, by: std::rc::Rc<i64>) -> i64 {
        self.x + *by
    }
}

fn main() {}
