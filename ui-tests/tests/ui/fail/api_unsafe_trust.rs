// Installing a DLPack allocator, stating that a registry descriptor is true and registering a
// type (the runtime's type table has no lock) are trust statements: all need `unsafe`.
use tvm_ffi::ObjectType;

fn main() {
    let _ = tvm_ffi::env::set_dlpack_allocator(None, true);
    let _trusted = tvm_ffi::__private::Trusted::new();
    let object = tvm_ffi::builtin::AnyObject::runtime_type();
    let _ = tvm_ffi::__private::allocate_type_index("ui.Made", object, 0);
}
