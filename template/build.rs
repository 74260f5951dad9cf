//! The library is never unloaded (`-z nodelete`: the runtime keeps pointers to its functions).
//! It needs no rpath: `import tvm_ffi` has loaded libtvm_ffi before it, and a shipped library
//! must not name directories of the build machine.
fn main() {
    println!("cargo:rustc-link-arg-cdylib=-Wl,-z,nodelete");
}
