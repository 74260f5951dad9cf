use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Shape")]
pub enum Shape {
    Circle(f64),
    Square { side: f64 },
}

fn main() {}
