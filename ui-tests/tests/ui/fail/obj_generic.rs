use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Boxed")]
#[repr(C)]
pub struct Boxed<T> {
    pub value: T,
}

fn main() {}
