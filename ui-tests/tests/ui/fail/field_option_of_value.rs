use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Settings")]
#[repr(C)]
pub struct Settings {
    // `Option<T>` is a nullable pointer: only object references can be optional that way.
    pub limit: Option<i64>,
}

fn main() {}
