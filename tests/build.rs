//! Test binaries and the C/C++ peers run without LD_LIBRARY_PATH: rpath to libtvm_ffi.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TVM_FFI_SDK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // `foreign_strings` declares a C++ type of libtvm_ffi_testing: linked (not dlopen'ed),
        // the library registers its types before the binary's own registration runs.
        // `builtin_parents` declares the C++ final type `testing.TestIntPair` likewise, and
        // `external_field_types` declares C++ types with mismatched field types.
        for bin in ["foreign_strings", "builtin_parents", "external_field_types"] {
            println!(
                "cargo:rustc-link-arg-bin={bin}=-Wl,--no-as-needed,-L{dir},-ltvm_ffi_testing,--as-needed"
            );
        }
    }
}
