//! This crate's own test binaries and doctests find libtvm_ffi without `LD_LIBRARY_PATH`: an
//! rpath to the directory `tvm-ffi-sdk-sys` linked against (`DEP_TVM_FFI_SDK_LIBDIR`, set because
//! `tvm-ffi-sdk-sys` declares `links = "tvm_ffi_sdk"`). Link arguments do not propagate to dependents;
//! crates with their own test binaries or executables add the same line.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TVM_FFI_SDK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
