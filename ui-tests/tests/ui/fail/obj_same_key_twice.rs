use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

mod again {
    // The same key in the same crate: two layouts would fight over one registry entry.
    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "my_ext.Point")]
    #[repr(C)]
    pub struct Point {
        pub x: f64,
    }
}

fn main() {}

mod enums {
    // An enum and an object type with one key.
    #[derive(tvm_ffi::Enum, Clone, Copy)]
    #[ffi_type(key = "my_ext.Point")]
    pub enum Point {
        A,
    }
}
