use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    #[ffi(metadata(unit = 1.5, type_schema = "int"))]
    pub count: i64,
}

fn main() {}
