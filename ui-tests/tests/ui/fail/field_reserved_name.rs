use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    #[ffi(name = "__ffi_init__")]
    pub init: i64,
}

fn main() {}
