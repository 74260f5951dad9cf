// Loading a library runs its initialisers and trusts its exports: `Module::load_from_file` is
// an `unsafe fn`.
fn main() {
    let _ = tvm_ffi::Module::load_from_file("libanything.so");
}
