//! Comparison and hashing fixtures: fields left out of comparison or hashing, and the
//! `__ffi_hash__` / `__ffi_eq__` / `__ffi_compare__` hooks (C++ `testing.cc:430-522, 1023-1060`).
use tvm_ffi::{ffi_methods, Function, Object, ObjectRef, Result};

// Twin of `testing.TestCompare`: `ignored_field` is left out of comparison (and so of hashing).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCompare", final)]
#[repr(C)]
pub struct TestCompare {
    pub key: i64,
    pub name: tvm_ffi::String,
    #[ffi(compare = false)]
    pub ignored_field: i64,
}

#[ffi_methods]
impl TestCompare {
    #[ffi(init)]
    fn new(key: i64, name: tvm_ffi::String, ignored_field: i64) -> Self {
        TestCompare {
            key,
            name,
            ignored_field,
        }
    }
}

// Twin of `testing.TestHash`: `hash_ignored` is left out of hashing only.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestHash", final)]
#[repr(C)]
pub struct TestHash {
    pub key: i64,
    pub name: tvm_ffi::String,
    #[ffi(hash = false)]
    pub hash_ignored: i64,
}

#[ffi_methods]
impl TestHash {
    #[ffi(init)]
    fn new(key: i64, name: tvm_ffi::String, hash_ignored: i64) -> Self {
        TestHash {
            key,
            name,
            hash_ignored,
        }
    }
}

// Twin of `testing.TestCustomHash`: hashes its key only (equality stays field-wise).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCustomHash", final)]
#[repr(C)]
pub struct TestCustomHash {
    pub key: i64,
    pub label: tvm_ffi::String,
}

#[ffi_methods]
impl TestCustomHash {
    #[ffi(init)]
    fn new(key: i64, label: tvm_ffi::String) -> Self {
        TestCustomHash { key, label }
    }

    #[ffi(hash)]
    fn hash_key(&self, fn_hash: Function) -> Result<i64> {
        fn_hash.call_as((self.key,))
    }
}

// Twin of `testing.TestCustomCompare`: equality, ordering and hash by key only.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCustomCompare", final)]
#[repr(C)]
pub struct TestCustomCompare {
    pub key: i64,
    pub label: tvm_ffi::String,
}

#[ffi_methods]
impl TestCustomCompare {
    #[ffi(init)]
    fn new(key: i64, label: tvm_ffi::String) -> Self {
        TestCustomCompare { key, label }
    }

    #[ffi(hash)]
    fn hash_key(&self, fn_hash: Function) -> Result<i64> {
        fn_hash.call_as((self.key,))
    }

    #[ffi(eq)]
    fn eq_key(&self, other: ObjectRef<Self>, fn_eq: Function) -> Result<bool> {
        fn_eq.call_as((self.key, other.key))
    }

    #[ffi(compare)]
    fn compare_key(&self, other: ObjectRef<Self>, fn_cmp: Function) -> Result<i32> {
        fn_cmp.call_as((self.key, other.key))
    }
}

// Twin of `testing.TestEqWithoutHash`: an equality hook without a hash hook, which
// `RecursiveHash` refuses.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestEqWithoutHash", final)]
#[repr(C)]
pub struct TestEqWithoutHash {
    pub key: i64,
    pub label: tvm_ffi::String,
}

#[ffi_methods]
impl TestEqWithoutHash {
    #[ffi(init)]
    fn new(key: i64, label: tvm_ffi::String) -> Self {
        TestEqWithoutHash { key, label }
    }

    #[ffi(eq)]
    fn eq_key(&self, other: ObjectRef<Self>, fn_eq: Function) -> Result<bool> {
        fn_eq.call_as((self.key, other.key))
    }
}
