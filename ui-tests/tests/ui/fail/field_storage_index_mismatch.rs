// A field storage that reports the static type index -1 ("any") must be a 16-byte `Any`: the
// runtime and Python subclasses copy and destroy such a field as one. An 8-byte storage that
// claims it is a compile error wherever it is used as a field.
use tvm_ffi::__private::FieldValue;
use tvm_ffi::Object;

#[derive(Clone)]
pub struct Claims8AsAny(i64);

// SAFETY: (deliberately wrong) the storage is 8 bytes, not an `Any`.
unsafe impl FieldValue for Claims8AsAny {
    type Value = i64;
    const STATIC_TYPE_INDEX: i32 = -1;
    fn empty() -> Option<Self> {
        Some(Claims8AsAny(0))
    }
    fn load(&self) -> i64 {
        self.0
    }
    fn wrap(value: i64) -> Self {
        Claims8AsAny(value)
    }
}

#[derive(Object)]
#[ffi_type(key = "my_ext.Holder")]
#[repr(C)]
pub struct Holder {
    pub value: Claims8AsAny,
}

fn main() {}
