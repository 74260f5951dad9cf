use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    #[ffi(rename = "y")]
    pub fn get_x(&self) -> i64 {
        self.x
    }
}

fn main() {}
