use tvm_ffi::{Object, Rw};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    #[ffi(rw, rw)]
    pub x: Rw<i64>,
    #[ffi(name = "why", name = "wye")]
    pub y: i64,
    #[ffi(kw_only)]
    #[ffi(kw_only)]
    pub z: i64,
    #[ffi(metadata(unit = "m", unit = "cm"))]
    pub w: i64,
}

fn main() {}
