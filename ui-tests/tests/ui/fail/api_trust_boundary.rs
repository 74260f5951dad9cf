// What unsafe code trusts is out of safe reach: the registry's descriptors and slots, enum
// payloads under a chosen type index, and the DLPack allocator the tensor constructors write
// through.
use tvm_ffi::object::RuntimeType;
use tvm_ffi::ObjectType;

struct NotSync(std::cell::Cell<i64>);

// A payload is shared with every thread: `ObjectType` requires `Send + Sync`.
unsafe impl ObjectType for NotSync {
    const TYPE_KEY: &'static str = "ui.NotSync";
    fn runtime_type() -> RuntimeType {
        unimplemented!()
    }
}

fn main() {
    let _ = tvm_ffi::registry::TYPES.len();
    let _ = tvm_ffi::enums::new_enum_object(71, 0, tvm_ffi::String::from("x"));
    let _ = tvm_ffi::env::set_dlpack_allocator(None, true);
    let _ = tvm_ffi::reflection::type_info(64);
}
