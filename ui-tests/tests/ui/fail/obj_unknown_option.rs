use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Point", parent = "my_ext.Base")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
