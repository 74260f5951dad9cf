//! A child type and more `Point` methods, in another module: registration does not depend on
//! where (or in which order) types and method blocks are defined.
use tvm_ffi::{ffi_methods, Object, ObjectRef};

use crate::Point;

/// A point in space: a `Point` plus `z`.
#[derive(Object, Clone)]
#[ffi_type(key = "my_ext.Point3", final, structural = "tree")]
#[repr(C)]
pub struct Point3 {
    /// The parent's payload comes first.
    #[ffi(base)]
    pub base: Point,
    /// The z coordinate.
    pub z: i64,
}

#[ffi_methods]
impl Point3 {
    /// Squared distance from the origin in space. (Not named `norm2`: Python installs a
    /// reflected method only where the class has no attribute of that name, so a subtype's
    /// method would be hidden by the parent's, as for C++ types.)
    pub fn norm2_3d(&self) -> i64 {
        self.base.norm2() + self.z * self.z
    }

    /// Drops `z`.
    pub fn project(&self) -> ObjectRef<Point> {
        ObjectRef::new(self.base.clone())
    }
}

#[ffi_methods]
impl Point {
    /// Lifts to 3-D at height `z` (a `Point` method defined in another module).
    pub fn lift(&self, z: i64) -> ObjectRef<Point3> {
        ObjectRef::new(Point3 {
            base: self.clone(),
            z,
        })
    }
}
