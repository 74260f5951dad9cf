//! Generated code calls the user's items, not its own helpers, whatever they are named, and
//! reaches `core` (field offsets and sizes, pointer projections) through `tvm_ffi::__private`:
//! this crate re-points its own `::core` at itself, where nothing of the kind exists.
extern crate self as core;

use tvm_ffi::{ffi_func, ffi_methods, Function, Object, ObjectRef};

// Functions named like the helpers generated next to them: registration must call these.
#[ffi_func(name = "ui_pass.hygiene.__make")]
fn __make(x: i64) -> i64 {
    x + 1
}

#[ffi_func(name = "ui_pass.hygiene.__metadata")]
fn __metadata() -> String {
    "the user's __metadata".into()
}

#[ffi_func(name = "ui_pass.hygiene.__invoke")]
fn __invoke(args: &[tvm_ffi::AnyView]) -> i64 {
    args.len() as i64
}

// A default factory and a field type named like helpers of the derive.
fn __layout() -> i64 {
    7
}
#[allow(non_camel_case_types)]
type __FieldSlot0 = bool;

#[derive(Object)]
#[ffi_type(key = "ui_pass.hygiene.Point")]
#[repr(C)]
pub struct Point {
    pub flag: __FieldSlot0,
    #[ffi(default_factory = __layout)]
    pub x: i64,
}

#[ffi_methods]
impl Point {
    pub fn __shallow_copy(&self) -> i64 {
        self.x
    }
}

fn main() {
    let call = |name: &str| Function::get_global_required(name).unwrap();
    assert_eq!(call("ui_pass.hygiene.__make").call((1,)).unwrap().cast::<i64>().unwrap(), 2);
    let text: String = call("ui_pass.hygiene.__metadata").call(()).unwrap().cast::<tvm_ffi::String>().unwrap().to_string();
    assert_eq!(text, "the user's __metadata");
    assert_eq!(call("ui_pass.hygiene.__invoke").call((1, 2, 3)).unwrap().cast::<i64>().unwrap(), 3);
    let made: ObjectRef<Point> = call("ffi.MakeObjectFromPackedArgs")
        .call(("ui_pass.hygiene.Point", "flag", true))
        .unwrap()
        .cast()
        .unwrap();
    assert_eq!((made.flag, made.x), (true, 7));
}
