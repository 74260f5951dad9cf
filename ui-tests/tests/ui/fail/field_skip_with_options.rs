use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    #[ffi(skip, rw)]
    pub cache: Vec<u8>,
}

fn main() {}
