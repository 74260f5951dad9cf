//! Lets the benchmark binary find libtvm_ffi without `LD_LIBRARY_PATH`: the `tvm-ffi` crate
//! (`links = "tvm_ffi"`) exports the directory it linked against as `DEP_TVM_FFI_LIBDIR`.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TVM_FFI_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
