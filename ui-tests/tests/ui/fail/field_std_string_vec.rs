use tvm_ffi::Object;

// Rust's own string and vector are not TVM-FFI values: each field is one error that names the
// type to use.
#[derive(Object)]
#[ffi_type(key = "my_ext.Named")]
#[repr(C)]
pub struct Named {
    pub name: std::string::String,
    pub items: Vec<i64>,
}

fn main() {}
