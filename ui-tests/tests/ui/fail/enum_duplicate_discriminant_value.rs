use tvm_ffi::Enum;

// The value of `B` is its discriminant, which the compiler computes: `A`'s `value` takes it.
#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "my_ext.Flags", int)]
pub enum Flags {
    #[ffi(value = 4)]
    A,
    B = 1 << 2,
}

fn main() {}
