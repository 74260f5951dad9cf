use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    pub x: i64,
    #[ffi(name = "x")]
    pub other: i64,
}

fn main() {}
