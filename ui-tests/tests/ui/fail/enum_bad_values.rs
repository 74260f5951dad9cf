use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Level", int)]
pub enum Level {
    #[ffi(value = "low")]
    Low,
}

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Op", str)]
pub enum Op {
    #[ffi(value = 1)]
    Add,
}

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Color")]
pub enum Color {
    // A plain enum's entries have no values: the ordinal and the name index them.
    #[ffi(value = 3)]
    Red,
}

fn main() {}
