use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(
    key = "my_ext.Point",
    type_attr(__ffi_new__ = 1, __ffi_type_final__ = false, __tvm_ffi_rs_layout__ = "size=8;", my_attr = 3)
)]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

fn main() {}
