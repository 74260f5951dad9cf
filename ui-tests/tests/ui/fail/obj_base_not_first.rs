use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Base")]
#[repr(C)]
pub struct Base {
    pub a: i64,
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Child")]
#[repr(C)]
pub struct Child {
    pub b: i64,
    #[ffi(base)]
    pub base: Base,
}

fn main() {}
