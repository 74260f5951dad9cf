//! The benchmark runs without LD_LIBRARY_PATH: rpath to the libtvm_ffi the SDK found.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
