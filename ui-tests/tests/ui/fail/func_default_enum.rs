use tvm_ffi::{ffi_func, Enum};

#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "my_ext.DType", str)]
pub enum DType {
    #[ffi(value = "int32")]
    Int32,
}

#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "my_ext.Kind")]
pub enum Kind {
    Leaf,
}

// A string that is not one of the enum's values.
#[ffi_func(name = "my_ext.cast")]
pub fn cast(#[ffi(default = "int8")] dtype: DType) -> i64 {
    let _ = dtype;
    0
}

// A variant of another enum.
#[ffi_func(name = "my_ext.cast2")]
pub fn cast2(#[ffi(default = Kind::Leaf)] dtype: DType) -> i64 {
    let _ = dtype;
    0
}

// A plain enum has no values to default to.
#[ffi_func(name = "my_ext.kind")]
pub fn kind(#[ffi(default = Kind::Leaf)] kind: Kind) -> i64 {
    let _ = kind;
    0
}

fn main() {}
