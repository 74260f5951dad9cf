use tvm_ffi::{Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "my_ext.Shape")]
#[repr(C)]
pub struct Shape {
    pub id: i64,
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Circle")]
#[repr(C)]
pub struct Circle {
    #[ffi(base)]
    pub base: Shape,
    pub radius: f64,
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Label")]
#[repr(C)]
pub struct Label {
    pub text: tvm_ffi::String,
}

fn as_label(circle: ObjectRef<Circle>) -> ObjectRef<Label> {
    circle.upcast()
}

fn as_circle(shape: ObjectRef<Shape>) -> ObjectRef<Circle> {
    shape.upcast::<Circle, _>()
}

fn main() {
    let _ = (as_label, as_circle);
}
