use tvm_ffi::Variant;

#[derive(Variant, Clone)]
pub enum Value {
    Int(i64),
    Pair(i64, i64),
    Named { x: i64 },
    Nothing,
}

fn main() {}
