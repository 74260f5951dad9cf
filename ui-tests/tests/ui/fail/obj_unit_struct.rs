use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Unit")]
#[repr(C)]
pub struct Unit;

fn main() {}
