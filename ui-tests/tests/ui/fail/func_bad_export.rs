use tvm_ffi::ffi_func;

#[ffi_func(export = "my_ext.add_one")]
fn add_one(x: i64) -> i64 {
    x + 1
}

#[ffi_func(name = "my_ext.sub_one", export = "_metadata_sub_one")]
fn sub_one(x: i64) -> i64 {
    x - 1
}

#[ffi_func(export = add_two)]
fn add_two(x: i64) -> i64 {
    x + 2
}

fn main() {}
