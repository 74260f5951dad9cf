// What `tvm_ffi::__private` makes for the registry (a type's `__ffi_new__`, `__ffi_convert__`,
// `__ffi_init__` result, hooks, field defaults, enum conversions, function objects) is made by
// `unsafe fn`s only generated code calls, and a method descriptor needs a `Trusted` statement:
// none of it is reachable from safe code (see also `private_sealed.rs`).
use tvm_ffi::__private::{self as p, FnSignature, MethodEntry, MethodKind};
use tvm_ffi::{Any, Enum, Object, ObjectRef};

#[derive(Object, Clone, PartialEq)]
#[ffi_type(key = "ui.PrivateNeedsUnsafe")]
#[repr(C)]
pub struct Point {
    pub x: i64,
}

#[derive(Enum, Clone, Copy)]
#[ffi_type(key = "ui.PrivateNeedsUnsafeColor")]
pub enum Color {
    Red,
}

static SIGNATURE: FnSignature = FnSignature {
    owner: "ui.PrivateNeedsUnsafe",
    name: std::borrow::Cow::Borrowed("__ffi_init__"),
    params: std::borrow::Cow::Borrowed(&[]),
    ret: p::TypeDesc::of::<i64>(),
    names: &[],
};

fn invoke(_: &FnSignature, _: &[tvm_ffi::AnyView<'_>]) -> tvm_ffi::Result<Any> {
    Ok(Any::new(1i64))
}

static FORGED: MethodEntry = MethodEntry {
    signature: FnSignature {
        owner: "ui.PrivateNeedsUnsafe",
        name: std::borrow::Cow::Borrowed("__ffi_shallow_copy__"),
        params: std::borrow::Cow::Borrowed(&[]),
        ret: p::TypeDesc::of::<i64>(),
        names: &[],
    },
    doc: "",
    kind: MethodKind::TypeAttr,
    invoke,
    metadata: &[],
    order: ("", 0, 0),
};

fn main() {
    let _ = p::new_function::<Point>();
    let _ = p::convert_function::<Point>();
    let _ = p::eq_hook::<Point>();
    let _ = p::init_into_any::<Point, ObjectRef<Point>>(ObjectRef::new(Point { x: 1 }));
    let _ = p::default_value::<i64>(3i64);
    let _ = p::enum_into_any(Color::Red);
    let _ = p::enum_try_cast::<Color>(&Any::new(1i64).as_view());
    let _ = p::function_from_invoke(&SIGNATURE, |_, _| Ok(Any::new(1i64)));
}
