use tvm_ffi::{ffi_methods, Object};

#[derive(Object)]
#[ffi_type(key = "my_ext.Counter")]
#[repr(C)]
pub struct Counter {
    pub count: i64,
}

#[ffi_methods]
impl Counter {
    pub fn each(&self, visit: &dyn Fn(i64)) {
        visit(self.count)
    }
}

fn main() {}
