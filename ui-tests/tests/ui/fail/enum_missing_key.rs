use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy)]
pub enum Level {
    Low,
}

#[derive(Enum, Clone, Copy)]
#[ffi_type(int)]
pub enum Other {
    High,
}

fn main() {}
