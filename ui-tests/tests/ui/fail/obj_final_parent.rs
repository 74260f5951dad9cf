use tvm_ffi::Object;

#[derive(Object)]
#[ffi_type(key = "my_ext.Leaf", final)]
#[repr(C)]
pub struct Leaf {
    pub a: i64,
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Child")]
#[repr(C)]
pub struct Child {
    #[ffi(base)]
    pub base: Leaf,
    pub b: i64,
}

fn main() {}
