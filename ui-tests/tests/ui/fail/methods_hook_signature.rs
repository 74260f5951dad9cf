use tvm_ffi::{ffi_methods, Function, Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "my_ext.Key")]
#[repr(C)]
pub struct Key {
    pub key: i64,
}

#[ffi_methods]
impl Key {
    // The runtime calls `__ffi_hash__(self, fn_hash)`.
    #[ffi(hash)]
    pub fn hash_key(&self) -> i64 {
        self.key
    }

    // ... and `__ffi_eq__(self, other, fn_eq)` with a receiver.
    #[ffi(eq)]
    pub fn eq_key(a: ObjectRef<Key>, b: ObjectRef<Key>, fn_eq: Function) -> bool {
        let _ = fn_eq;
        a.key == b.key
    }
}

fn main() {}
