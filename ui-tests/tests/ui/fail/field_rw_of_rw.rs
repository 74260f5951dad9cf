use tvm_ffi::{Object, Rw};

// Reading `Rw<Rw<T>>` would take the same lock stripe twice and never return.
#[derive(Object)]
#[ffi_type(key = "my_ext.Counter")]
#[repr(C)]
pub struct Counter {
    #[ffi(rw)]
    pub count: Rw<Rw<i64>>,
}

fn main() {}
