use tvm_ffi::ffi_methods;

pub struct Plain {
    pub x: i64,
}

#[ffi_methods]
impl Plain {
    pub fn get(&self) -> i64 {
        self.x
    }
}

fn main() {}
