// An integer default must be in the parameter type's range.
use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.narrow")]
fn narrow(#[ffi(default = 300)] x: u8) -> u8 {
    x
}

fn main() {}
