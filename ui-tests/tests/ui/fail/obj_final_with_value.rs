use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Point", final = true)]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
