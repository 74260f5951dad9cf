#![no_implicit_prelude]

/// Items named like the macro's helpers do not clash with the generated code.
#[allow(dead_code)]
struct __SIGNATURE;
#[allow(dead_code)]
fn __make() {}

#[::tvm_ffi::ffi_func(name = "ui_pass.add")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}
