// Misuses of `#[ffi(default = ..)]`, all reported at once: a parameter without a default after
// one with a default, a value that is not a literal, a missing value, an unknown parameter
// option, a default on a packed function, and metadata keys the SDK writes itself.
use tvm_ffi::{ffi_func, AnyView};

#[ffi_func(name = "my_ext.order", metadata(arg_names = "a,b"))]
fn order(#[ffi(default = 1)] a: i64, b: i64, #[ffi(default = 1 + 1)] c: i64) -> i64 {
    a + b + c
}

#[ffi_func(name = "my_ext.options")]
fn options(#[ffi(default)] a: i64, #[ffi(rename = "b")] b: i64) -> i64 {
    a + b
}

#[ffi_func(name = "my_ext.packed")]
fn packed(#[ffi(default = 1)] args: &[AnyView]) -> i64 {
    args.len() as i64
}

fn main() {}
