use tvm_ffi::{Object, Rw};

// A frozen type's fields are not writable from any language.
#[derive(Object)]
#[ffi_type(key = "my_ext.FrozenPoint", frozen)]
#[repr(C)]
pub struct FrozenPoint {
    #[ffi(rw)]
    pub x: Rw<i64>,
    pub y: i64,
}

fn main() {}
