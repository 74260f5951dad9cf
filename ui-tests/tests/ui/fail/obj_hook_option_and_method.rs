use tvm_ffi::{ffi_methods, Function, Object, ObjectRef};

// `eq` registers `__ffi_eq__` from `PartialEq`; a method registering it as well conflicts.
#[derive(Object, PartialEq)]
#[ffi_type(key = "my_ext.Twice", eq)]
#[repr(C)]
pub struct Twice {
    pub v: i64,
}

#[ffi_methods]
impl Twice {
    #[ffi(eq)]
    fn eq_hook(&self, other: ObjectRef<Self>, _fn_eq: Function) -> bool {
        self.v == other.v
    }
}

fn main() {}
