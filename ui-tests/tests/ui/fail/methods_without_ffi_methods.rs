use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Counter")]
#[repr(C)]
pub struct Counter {
    pub n: i64,
}

// `#[ffi(..)]` on a method is read by `#[ffi_methods]` on its impl block: without it, the
// method would be silently absent from Python and C++, so it is an error at the attribute.
impl Counter {
    #[ffi(init)]
    pub fn new(n: i64) -> Self {
        Counter { n }
    }
}

fn main() {}
