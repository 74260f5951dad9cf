use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Point", key = "my_ext.Other", structural = "tree", structural = "dag")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
