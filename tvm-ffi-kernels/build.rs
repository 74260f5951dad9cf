//! This crate's test binaries and doctests find libtvm_ffi without `LD_LIBRARY_PATH`: an rpath
//! to the directory `tvm-ffi-sys` linked against (link arguments do not propagate).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TVM_FFI_SDK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
