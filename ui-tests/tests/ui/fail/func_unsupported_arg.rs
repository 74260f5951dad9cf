use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.count")]
fn count(values: std::collections::HashMap<String, i64>) -> i64 {
    values.len() as i64
}

fn main() {}
