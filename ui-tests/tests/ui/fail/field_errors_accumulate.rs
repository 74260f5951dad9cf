use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "bad key", color = "red")]
pub struct Holder {
    #[ffi(readonly)]
    pub a: i64,
    #[ffi(structural = "sometimes")]
    pub b: i64,
    #[ffi(name = "a")]
    pub c: i64,
}

fn main() {}
