use tvm_ffi::{ffi_methods, Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    #[ffi(init)]
    pub fn again(&self) -> ObjectRef<Self> {
        ObjectRef::new(Point { x: self.x })
    }
}

fn main() {}
