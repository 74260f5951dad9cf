use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    #[ffi(default = 1, default_factory = one)]
    pub count: i64,
}

fn one() -> i64 {
    1
}

fn main() {}
