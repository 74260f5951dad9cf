//! Lets the benchmark binary (and the cdylib, when loaded outside Python) find libtvm_ffi without
//! `LD_LIBRARY_PATH`: the `tvm-ffi-sdk-sys` crate (`links = "tvm_ffi_sdk"`) exports the directory it linked
//! against as `DEP_TVM_FFI_SDK_LIBDIR`. The cdylib is never unloaded (`-z nodelete`): the runtime
//! keeps pointers to its functions.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TVM_FFI_SDK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
