use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Bits")]
#[repr(C)]
pub union Bits {
    i: i64,
    f: f64,
}

fn main() {}
