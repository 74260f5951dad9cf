use tvm_ffi::Object;

/// A C++ type declared for Rust: C++ setters may write its fields at any time.
#[derive(Object)]
#[ffi_type(key = "testing.TestCxxClassBase", external)]
#[repr(C)]
pub struct TestCxxClassBase {
    pub v_i64: i64,
    pub v_i32: tvm_ffi::Rw<i32>,
}

// SAFETY: mirrors the C++ type.
unsafe impl tvm_ffi::ExternalType for TestCxxClassBase {}

fn main() {}
