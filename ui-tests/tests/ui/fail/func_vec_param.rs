use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.total")]
fn total(values: Vec<i64>) -> i64 {
    values.iter().sum()
}

fn main() {}
