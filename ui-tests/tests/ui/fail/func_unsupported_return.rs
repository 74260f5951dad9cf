use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.home")]
fn home(user: &str) -> std::path::PathBuf {
    std::path::PathBuf::from("/home").join(user)
}

fn main() {}
