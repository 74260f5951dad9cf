#![no_implicit_prelude]

/// Items named like the macro's helpers do not clash with the generated code.
#[allow(dead_code)]
struct __SIGNATURE;
#[allow(dead_code)]
fn __make() {}
#[allow(dead_code)]
fn __invoke() {}
#[allow(dead_code)]
struct __EXPORT;

#[::tvm_ffi::ffi_func(name = "ui_pass.add")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A documented export that is also a global.
#[::tvm_ffi::ffi_func(name = "ui_pass.add_one", export = "ui_pass_add_one")]
fn add_one(x: i64) -> i64 {
    x + 1
}

/// A packed (variadic) function.
#[::tvm_ffi::ffi_func(name = "ui_pass.count")]
fn count(args: &[::tvm_ffi::AnyView]) -> usize {
    args.len()
}

fn main() {}
