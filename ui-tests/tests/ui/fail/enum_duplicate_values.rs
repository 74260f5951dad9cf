use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Level", int)]
pub enum Level {
    #[ffi(value = 10)]
    Low,
    #[ffi(value = 10)]
    AlsoLow,
    #[ffi(name = "Low", value = 20)]
    High,
}

fn main() {}
