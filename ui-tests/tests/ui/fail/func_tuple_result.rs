use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.pair")]
fn pair(a: i64) -> (i64, i64) {
    (a, a)
}

fn main() {}
