use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.evens")]
fn evens(n: i64) -> Vec<i64> {
    (0..n).map(|i| 2 * i).collect()
}

#[ffi_func(name = "my_ext.try_names")]
fn try_names(n: i64) -> tvm_ffi::Result<Vec<String>> {
    Ok((0..n).map(|i| i.to_string()).collect())
}

fn main() {}
