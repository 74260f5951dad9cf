use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.apply")]
fn apply(f: impl Fn(i64) -> i64, x: i64) -> i64 {
    f(x)
}

#[ffi_func(name = "my_ext.apply_boxed")]
fn apply_boxed(f: Box<dyn Fn(i64) -> i64 + Send + Sync>, x: i64) -> i64 {
    f(x)
}

#[ffi_func(name = "my_ext.apply_pointer")]
fn apply_pointer(f: fn(i64) -> i64, x: i64) -> i64 {
    f(x)
}

fn main() {}
