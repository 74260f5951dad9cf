use tvm_ffi::{ffi_methods, Object, ObjectRef};

#[derive(Object)]
#[ffi_type(key = "my_ext.Point")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[ffi_methods]
impl Point {
    // A fake creator: the runtime's constructor would write the fields past its end.
    #[ffi(type_attr = "__ffi_new__")]
    pub fn fake_new() -> ObjectRef<Point> {
        ObjectRef::new(Point { x: 0 })
    }
    #[ffi(type_attr = "__ffi_init__")]
    pub fn fake_init(x: i64) -> ObjectRef<Point> {
        ObjectRef::new(Point { x })
    }
    #[ffi(type_attr = "__ffi_shallow_copy__")]
    pub fn fake_copy(&self) -> i64 {
        self.x
    }
    #[ffi(type_attr = "__ffi_convert__")]
    pub fn fake_convert(x: i64) -> i64 {
        x
    }
    #[ffi(type_attr = "__tvm_ffi_rs_layout__")]
    pub fn fake_layout() -> i64 {
        0
    }
    #[ffi(type_attr = "__s_equal__")]
    pub fn hook_by_name(&self) -> bool {
        true
    }
}

fn main() {}
