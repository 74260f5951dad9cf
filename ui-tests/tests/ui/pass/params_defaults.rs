// Every default form, on functions, methods, static methods and constructors.
use tvm_ffi::{ffi_func, ffi_methods, Any, Object, ObjectRef};

#[ffi_func(name = "ui_pass.defaults")]
fn defaults(
    x: f64,
    #[ffi(default = -2)] count: i32,
    #[ffi(default = 0.5)] scale: f32,
    #[ffi(default = 1)] whole: f64,
    #[ffi(default = false)] enabled: bool,
    #[ffi(default = "x")] label: &str,
    #[ffi(default = "y")] owned: String,
    #[ffi(default = "z")] ffi_string: tvm_ffi::String,
    #[ffi(default = None)] maybe: Option<i64>,
    #[ffi(default = 3)] maybe_int: Option<i64>,
    #[ffi(default = None)] anything: Any,
) -> f64 {
    let _ = (enabled, label, owned, ffi_string, maybe, maybe_int, anything);
    x * scale as f64 + count as f64 + whole
}

#[derive(Object)]
#[ffi_type(key = "ui_pass.Counter")]
#[repr(C)]
pub struct Counter {
    pub count: i64,
}

#[ffi_methods]
impl Counter {
    #[ffi(init)]
    pub fn new(#[ffi(default = 0)] count: i64) -> Self {
        Counter { count }
    }

    pub fn add(&self, #[ffi(default = 1)] by: i64) -> i64 {
        self.count + by
    }

    pub fn same(this: &ObjectRef<Self>, #[ffi(default = None)] other: Option<ObjectRef<Self>>) -> bool {
        other.is_some_and(|o| &o == this)
    }

    pub fn zero(#[ffi(default = 0)] base: i64) -> ObjectRef<Self> {
        ObjectRef::new(Counter { count: base })
    }
}

fn main() {
    let _ = defaults;
}
