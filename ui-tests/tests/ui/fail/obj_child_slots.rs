use tvm_ffi::Object;

// A `final` type has no subtypes to reserve indices for.
#[derive(Object)]
#[ffi_type(key = "ui.FinalSlots", final, child_slots = 2)]
#[repr(C)]
pub struct FinalSlots {
    pub value: i64,
}

// The runtime grows its type table by the count: it is bounded.
#[derive(Object)]
#[ffi_type(key = "ui.ManySlots", child_slots = 100000)]
#[repr(C)]
pub struct ManySlots {
    pub value: i64,
}

// A count, not a negative number or a string.
#[derive(Object)]
#[ffi_type(key = "ui.NegativeSlots", child_slots = -1)]
#[repr(C)]
pub struct NegativeSlots {
    pub value: i64,
}

// An `external` declaration takes the slots its definition reserved.
#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external, child_slots = 2)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: tvm_ffi::Rw<i64>,
    pub v_i32: tvm_ffi::Rw<i32>,
}

fn main() {}
