use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.later")]
async fn later(a: i64) -> i64 {
    a
}

fn main() {}
