use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Shape")]
#[repr(C)]
pub enum Shape {
    Circle,
    Square,
}

fn main() {}
