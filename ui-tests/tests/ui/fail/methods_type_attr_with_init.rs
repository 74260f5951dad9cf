use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    // A type attribute is named by its option; it is not a constructor or a renamed method.
    #[ffi(type_attr = "__my_attr__", name = "other")]
    pub fn attr() -> i64 {
        1
    }

    #[ffi(repr, init)]
    pub fn new() -> Self {
        Point { x: 0 }
    }
}

fn main() {}
