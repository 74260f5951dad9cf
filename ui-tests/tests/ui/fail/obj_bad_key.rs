use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my ext.Point!")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
