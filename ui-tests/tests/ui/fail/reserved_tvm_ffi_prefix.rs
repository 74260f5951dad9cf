use tvm_ffi::{ffi_func, Object};

// Generated items are named `__tvm_ffi_*`: a user item of such a name would be shadowed by them.
#[ffi_func(name = "my_ext.f")]
fn __tvm_ffi_make(x: i64) -> i64 {
    x
}

#[allow(non_camel_case_types)]
type __tvm_ffi_Slot = i64;

fn __tvm_ffi_default() -> i64 {
    1
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: __tvm_ffi_Slot,
    #[ffi(default_factory = __tvm_ffi_default)]
    pub y: i64,
}

fn main() {}
