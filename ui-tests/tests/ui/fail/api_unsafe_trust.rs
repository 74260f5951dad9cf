// Installing a DLPack allocator and stating that a registry descriptor is true are trust
// statements: both need `unsafe`.
fn main() {
    let _ = tvm_ffi::env::set_dlpack_allocator(None, true);
    let _trusted = tvm_ffi::__private::Trusted::new();
}
