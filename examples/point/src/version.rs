//! A value type: `==`, `hash()`, `<` and `repr()` from its Rust traits, the same in Python,
//! C++ and Rust; frozen, so no language can change a version once it is made.
use std::fmt;

use tvm_ffi::{ffi_func, Object, ObjectRef};

/// A release version `major.minor.patch`, ordered by its numbers and printed as `1.2.3`.
#[derive(Object, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[ffi_type(key = "my_ext.Version", frozen, eq, hash, ord, str)]
#[repr(C)]
pub struct Version {
    /// Incompatible changes.
    pub major: i64,
    /// Compatible additions.
    pub minor: i64,
    /// Fixes.
    #[ffi(default = 0)]
    pub patch: i64,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The newest of `versions` (by Rust's `Ord`), or `None` when it is empty.
#[ffi_func(name = "my_ext.newest")]
pub fn newest(versions: tvm_ffi::Array<ObjectRef<Version>>) -> Option<ObjectRef<Version>> {
    versions.iter().max_by(|a, b| (**a).cmp(&**b))
}
