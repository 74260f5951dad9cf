use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Child")]
#[repr(C)]
pub struct Child {
    #[ffi(base)]
    pub base: i64,
    pub b: i64,
}

fn main() {}
