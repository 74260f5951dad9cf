use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Wide")]
#[repr(C)]
pub struct Wide {
    pub x: i64,
    #[ffi(skip)]
    pub wide: u128,
}

fn main() {}
