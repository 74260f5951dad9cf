use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Let", structural = "tree")]
#[repr(C)]
pub struct Let {
    #[ffi(structural = "binding")]
    pub var: i64,
}

fn main() {}
