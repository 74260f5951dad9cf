use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    #[ffi(repr = "no")]
    pub count: i64,
}

fn main() {}
