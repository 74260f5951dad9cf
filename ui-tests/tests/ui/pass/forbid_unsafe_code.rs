//! A user crate that forbids `unsafe` can still define objects, methods and functions: the
//! generated code's own `unsafe` blocks (its calls of the `unsafe fn`s of `tvm_ffi::__private`:
//! defaults, constructors, hooks, enum conversions, function objects) are spanned at the
//! macro's call site, which `unsafe_code` does not report, and hold none of the user's code.
#![forbid(unsafe_code)]

use tvm_ffi::{ffi_func, ffi_methods, Any, AnyView, Enum, Function, Object, ObjectRef, Rw};

fn default_label() -> tvm_ffi::String {
    "made".into()
}

#[derive(Object, Clone, PartialEq)]
#[ffi_type(key = "ui_pass.Safe", convert, eq, str)]
#[repr(C)]
pub struct Safe {
    #[ffi(rw)]
    pub value: Rw<i64>,
    #[ffi(default = 2)]
    pub step: i64,
    #[ffi(default_factory = default_label)]
    pub label: tvm_ffi::String,
}

impl std::fmt::Display for Safe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Safe({})", self.value.get())
    }
}

#[ffi_methods]
impl Safe {
    #[ffi(init)]
    pub fn create(value: i64) -> ObjectRef<Self> {
        ObjectRef::new(Safe {
            value: value.into(),
            step: 3,
            label: default_label(),
        })
    }
    pub fn double(&self) -> i64 {
        2 * self.value.get()
    }
}

#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "ui_pass.SafeColor")]
pub enum SafeColor {
    Red,
    Green,
}

#[ffi_func(name = "ui_pass.safe_add", export = "safe_add")]
fn safe_add(a: i64, b: i64) -> i64 {
    a + b
}

#[ffi_func(name = "ui_pass.safe_count")]
fn safe_count(args: &[AnyView]) -> i64 {
    args.len() as i64
}

fn main() {
    let s = ObjectRef::new(Safe {
        value: 21.into(),
        step: 1,
        label: "x".into(),
    });
    assert_eq!(s.double(), 42);
    assert_eq!(safe_add(1, 2), 3);
    assert!(tvm_ffi::registry::load_errors().is_empty());
    let call = |name: &str| Function::get_global_required(name).unwrap();
    assert_eq!(call("ui_pass.safe_count").call((1, 2)).unwrap().cast::<i64>().unwrap(), 2);
    // The constructor, and the defaults the runtime's reflection constructor fills in.
    let made: ObjectRef<Safe> = call("ffi.MakeObjectFromPackedArgs")
        .call(("ui_pass.Safe", "value", 5i64))
        .unwrap()
        .cast()
        .unwrap();
    assert_eq!((made.value.get(), made.step, made.label.as_str()), (5, 2, "made"));
    assert_eq!(made.to_string(), "Safe(5)");
    let green = Any::new(SafeColor::Green);
    assert_eq!(green.cast::<SafeColor>().unwrap(), SafeColor::Green);
}
