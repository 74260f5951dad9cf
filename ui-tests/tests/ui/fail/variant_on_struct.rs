use tvm_ffi::Variant;

#[derive(Variant, Clone)]
pub struct NotAnEnum {
    pub x: i64,
}

fn main() {}
