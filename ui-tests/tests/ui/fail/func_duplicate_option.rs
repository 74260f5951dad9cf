use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.add", crate = "tvm_ffi", crate = "tvm_ffi", export = "add", export = "plus")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
