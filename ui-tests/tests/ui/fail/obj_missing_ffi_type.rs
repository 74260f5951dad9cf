use tvm_ffi::Object;

#[derive(Object)]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
