//! The cdylib never unloads (`-z nodelete`: the runtime keeps pointers into it) and finds
//! libtvm_ffi through rpath when loaded outside Python.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
