use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Named")]
#[repr(C)]
pub struct Named<'a> {
    pub name: &'a str,
}

fn main() {}
