//! Test binaries and the C/C++ peers run without LD_LIBRARY_PATH: rpath to libtvm_ffi.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
