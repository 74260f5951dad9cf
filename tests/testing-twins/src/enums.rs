//! Enum fixtures (C++ `testing.cc:97-153, 282-291`): a plain enum with attributes, an integer
//! and a string enum, and an object holding the latter two.
use tvm_ffi::enums::{EnumObj, EnumType};
use tvm_ffi::{ffi_func, Enum, EnumRef, Object, ObjectRef, Result, Rw};

// Twin of `testing.TestEnumVariant` (`refl::EnumDef` entries with the attribute `code`).
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "testing.rs.TestEnumVariant")]
pub enum TestEnumVariant {
    #[ffi(attr(code = 10))]
    Alpha,
    #[ffi(attr(code = 20))]
    Beta,
}

// Twin of `testing.TestCxxIntEnum` (C++ leaves the entries to Python's `entry(value=..)`;
// the Python class binds these).
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "testing.rs.TestCxxIntEnum", int)]
pub enum TestCxxIntEnum {
    #[ffi(name = "low", value = 10)]
    Low,
    #[ffi(name = "high", value = 20)]
    High,
}

// Twin of `testing.TestCxxStrEnum`.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "testing.rs.TestCxxStrEnum", str)]
pub enum TestCxxStrEnum {
    #[ffi(name = "add", value = "+")]
    Add,
    #[ffi(name = "mul", value = "*")]
    Mul,
}

// Twin of `testing.TestCxxEnumHolder`: required enum fields (unset in the creator's object).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCxxEnumHolder")]
#[repr(C)]
pub struct TestCxxEnumHolder {
    #[ffi(rw)]
    pub priority: Rw<EnumRef<TestCxxIntEnum>>,
    #[ffi(rw)]
    pub opcode: Rw<EnumRef<TestCxxStrEnum>>,
}

// Twin of `testing.enum_variant_get`: the entry at a string index, as the base `ffi.Enum`.
#[ffi_func(name = "testing.rs.enum_variant_get")]
fn enum_variant_get(index: &str) -> Result<ObjectRef<EnumObj>> {
    match TestEnumVariant::from_str_index(index) {
        Some(variant) => Ok(variant.singleton().clone()),
        None => tvm_ffi::bail!(
            ValueError,
            "Enum `{}` has no instance with index {index}",
            TestEnumVariant::TYPE_KEY
        ),
    }
}
