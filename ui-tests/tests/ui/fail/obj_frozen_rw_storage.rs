use tvm_ffi::{Object, Rw};

// Without `#[ffi(rw)]`, an `Rw<T>` field could still be written from Rust.
#[derive(Object)]
#[ffi_type(key = "my_ext.FrozenCounter", frozen)]
#[repr(C)]
pub struct FrozenCounter {
    pub count: Rw<i64>,
}

fn main() {}
