use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    pub count: i64,
    #[ffi(skip)]
    pub cache: std::cell::Cell<i64>,
}

fn main() {}
