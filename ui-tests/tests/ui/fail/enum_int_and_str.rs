use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Level", int, str)]
pub enum Level {
    Low,
}

fn main() {}
