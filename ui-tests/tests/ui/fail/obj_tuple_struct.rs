use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Pair")]
#[repr(C)]
pub struct Pair(pub i64, pub i64);

fn main() {}
