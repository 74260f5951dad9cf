use tvm_ffi::ffi_func;

#[ffi_func(name = "bad name", colour = 1)]
async fn both<T>(a: T) -> i64 {
    0
}

fn main() {}
