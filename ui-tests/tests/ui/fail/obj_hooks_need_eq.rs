use tvm_ffi::Object;

// `hash` and `ord` without `eq`; `str` given a value.
#[derive(Object, PartialEq, PartialOrd, Hash)]
#[ffi_type(key = "my_ext.Loose", hash, ord, str = true)]
#[repr(C)]
pub struct Loose {
    pub v: i64,
}

fn main() {}
