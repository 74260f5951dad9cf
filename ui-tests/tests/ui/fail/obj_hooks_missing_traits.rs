use tvm_ffi::Object;

// Each option needs a trait of the payload; none is implemented.
#[derive(Object)]
#[ffi_type(key = "my_ext.Opaque", eq, hash, ord, str)]
#[repr(C)]
pub struct Opaque {
    pub v: i64,
}

fn main() {}
