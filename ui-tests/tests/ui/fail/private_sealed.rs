// The traits of `tvm_ffi::__private` that unsafe code trusts cannot be implemented from safe
// code: the probe that writes a new payload is an `unsafe trait`, and what an `#[ffi(init)]`
// constructor may return is sealed (Python makes it the new instance of the type's class, so an
// object of another type would be read with the type's field offsets). The version check,
// which only tests used, is no longer in `__private` at all.
use tvm_ffi::__private as p;
use tvm_ffi::{Enum, Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "ui.PrivateSealed")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "ui.PrivateSealedColor")]
pub enum Color {
    Red,
}

// A constructor result that is an object of another type.
impl p::InitResult<Point> for ObjectRef<tvm_ffi::builtin::AnyObject> {
    fn into_object(self) -> tvm_ffi::Result<ObjectRef<tvm_ffi::builtin::AnyObject>> {
        Ok(self)
    }
}

// A payload "initialiser" that writes nothing.
impl p::InitByDefault<Color> for &p::InitProbe<Color> {
    unsafe fn init(&self, _payload: *mut Color) {}
}

fn main() {
    let _ = p::check_version(tvm_ffi::runtime_version());
}
