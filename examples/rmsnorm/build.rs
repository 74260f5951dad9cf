//! The cdylib never unloads (`-z nodelete`: the runtime keeps pointers into it). It carries no
//! rpath: Python (`import tvm_ffi`) loads libtvm_ffi before it, and the dynamic linker matches
//! its `DT_NEEDED` by soname.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
