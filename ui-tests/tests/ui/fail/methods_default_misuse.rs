// Method parameters take defaults as function parameters do; the receiver `this` takes none.
use tvm_ffi::{ffi_methods, Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "my_ext.Counter")]
#[repr(C)]
pub struct Counter {
    pub count: i64,
}

#[ffi_methods]
impl Counter {
    #[ffi(init)]
    pub fn new(#[ffi(default = 0)] count: i64, step: i64) -> Self {
        Counter { count: count + step }
    }

    pub fn same(#[ffi(default = None)] this: &ObjectRef<Self>, other: ObjectRef<Self>) -> bool {
        this == &other
    }
}

fn main() {}
