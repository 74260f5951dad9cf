use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.add")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

mod other {
    use tvm_ffi::ffi_func;

    #[ffi_func(name = "my_ext.add")]
    fn add_again(a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
