use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.first")]
fn first<T: Copy>(a: T) -> T {
    a
}

fn main() {}
