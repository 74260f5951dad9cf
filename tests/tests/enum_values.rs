//! `int` enums register the values Rust gives their variants, whatever expression (or implicit
//! increment) gives them; valid Rust with out-of-order discriminants compiles.
use tvm_ffi::enums::EnumType;
use tvm_ffi::Enum;

#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.Sparse", int)]
pub enum Sparse {
    A = 200,
    B = 3,
    // Implicitly 4.
    C,
}

#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.Access", int)]
pub enum Access {
    Read = 1 << 2,
    Write = 1 << 1,
    Exec = 1,
}

// Valid Rust: C is 1. (Registered as 2, 0, 2 before, and refused as a duplicate.)
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.Reordered", int)]
pub enum Reordered {
    A = 2,
    B = 0,
    C,
}

// `value` still overrides the discriminant.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.Mixed", int)]
pub enum Mixed {
    #[ffi(value = 10)]
    A = 1,
    B = 2,
}

fn registered<E: EnumType + Copy + PartialEq + std::fmt::Debug>(variants: &[E]) -> Vec<i64> {
    variants
        .iter()
        .map(|&v| {
            let index = v.singleton().int_index;
            assert_eq!(E::from_int_index(index), Some(v));
            index
        })
        .collect()
}

#[test]
fn int_enums_register_the_rust_discriminants() {
    assert!(
        tvm_ffi::registry::load_errors().is_empty(),
        "{:?}",
        tvm_ffi::registry::load_errors()
    );
    assert_eq!(registered(&[Sparse::A, Sparse::B, Sparse::C]), [200, 3, 4]);
    assert_eq!(Sparse::C as i64, 4);
    assert_eq!(
        registered(&[Access::Read, Access::Write, Access::Exec]),
        [4, 2, 1]
    );
    assert_eq!(
        registered(&[Reordered::A, Reordered::B, Reordered::C]),
        [2, 0, 1]
    );
    assert_eq!(registered(&[Mixed::A, Mixed::B]), [10, 2]);
}
