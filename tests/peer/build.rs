//! The cdylib never unloads (`-z nodelete`: the runtime keeps pointers into it). It carries no
//! rpath: Python (`import tvm_ffi`) and the C++ example load libtvm_ffi before it, and the
//! dynamic linker matches its `DT_NEEDED` by soname; a shipped library must not name the
//! build machine's directories.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
