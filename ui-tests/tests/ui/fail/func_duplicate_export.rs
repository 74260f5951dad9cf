use tvm_ffi::ffi_func;

#[ffi_func(export = "add_one")]
fn add_one(x: i64) -> i64 {
    x + 1
}

#[ffi_func(export = "add_one")]
fn add_one_again(x: i64) -> i64 {
    x + 1
}

fn main() {}
