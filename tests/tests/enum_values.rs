//! `int` enums register the values Rust gives their variants, whatever expression (or implicit
//! increment) gives them; valid Rust with out-of-order discriminants compiles.
use tvm_ffi::enums::EnumType;
use tvm_ffi::Enum;
use tvm_ffi_tests::global;

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

/// A `str` enum, as IR nodes carry their data type.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.DType", str)]
pub enum DType {
    #[ffi(value = "int32")]
    Int32,
    #[ffi(value = "int64")]
    Int64,
}

/// A plain enum: only its singletons convert.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.Plain")]
pub enum Plain {
    One,
}

/// Enum parameters with defaults given as a value and as a variant.
#[tvm_ffi::ffi_func(name = "rust_tests.enum_values.describe")]
pub fn describe(
    #[ffi(default = "int64")] dtype: DType,
    #[ffi(default = Sparse::B)] sparse: Sparse,
    #[ffi(default = DType::Int32)] other: Option<DType>,
    #[ffi(default = 200)] by_value: Sparse,
) -> std::string::String {
    format!("{dtype:?} {sparse:?} {other:?} {by_value:?}")
}

/// Enum fields with defaults given as a value and as a variant.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.enum_values.Imm")]
#[repr(C)]
pub struct Imm {
    pub value: i64,
    #[ffi(default = "int64")]
    pub dtype: tvm_ffi::EnumRef<DType>,
    #[ffi(default = Sparse::C)]
    pub sparse: tvm_ffi::EnumRef<Sparse>,
}

#[test]
fn int_and_str_enums_convert_from_their_values() {
    use tvm_ffi::Any;
    assert_eq!(Any::new("int32").cast::<DType>().unwrap(), DType::Int32);
    assert_eq!(Any::new(3).cast::<Sparse>().unwrap(), Sparse::B);
    assert!(Any::new("int8").cast::<DType>().is_err());
    assert!(Any::new(5).cast::<Sparse>().is_err());
    // A plain enum has no values: its name does not convert.
    assert!(Any::new("One").cast::<Plain>().is_err());
    assert!(Any::new(0).cast::<Plain>().is_err());
    // An argument of a value the enum lacks is a type error naming the function and argument.
    let err = global("rust_tests.enum_values.describe")
        .call(("int8",))
        .unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert!(
        err.message().contains("rust_tests.enum_values.describe")
            && err.message().contains("dtype")
            && err.message().contains("rust_tests.enum_values.DType"),
        "{}",
        err.message()
    );
}

#[test]
fn enum_defaults_are_values_or_variants() {
    let f = global("rust_tests.enum_values.describe");
    let text: std::string::String = f.call_as(()).unwrap();
    assert_eq!(text, "Int64 B Some(Int32) A");
    let text: std::string::String = f.call_as(("int32", 4)).unwrap();
    assert_eq!(text, "Int32 C Some(Int32) A");
    // The registered defaults are the values Python and C++ see.
    let meta: std::string::String = global("ffi.GetGlobalFuncMetadata")
        .call_as(("rust_tests.enum_values.describe",))
        .unwrap();
    assert!(
        meta.contains(
            r#""arg_defaults":{"dtype":"int64","sparse":3,"other":"int32","by_value":200}"#
        ),
        "{meta}"
    );
    // Field defaults: `__ffi_init__` fills them.
    let init: tvm_ffi::Function =
        tvm_ffi::reflection::type_attr(<Imm as tvm_ffi::ObjectType>::type_index(), "__ffi_init__")
            .unwrap()
            .cast()
            .unwrap();
    let imm: tvm_ffi::ObjectRef<Imm> = init.call_as((7,)).unwrap();
    assert_eq!(
        (imm.value, imm.dtype.get(), imm.sparse.get()),
        (7, DType::Int64, Sparse::C)
    );
    let imm: tvm_ffi::ObjectRef<Imm> = init.call_as((7, "int32")).unwrap();
    assert_eq!(imm.dtype.get(), DType::Int32);
}

/// A `str` enum whose values are not identifiers: the names Python binds are registered.
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "rust_tests.enum_values.OpKind", str)]
pub enum OpKind {
    #[ffi(name = "add", value = "+")]
    Add,
    #[ffi(value = "-")]
    Sub,
}

#[test]
fn a_str_enum_keeps_an_explicit_name_beside_its_value() {
    let add = &OpKind::VARIANTS[0];
    assert_eq!(add.str_index, "+");
    let attrs: Vec<_> = add
        .attrs
        .iter()
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect();
    assert_eq!(attrs, [r#"name=Str("add")"#]);
    assert!(OpKind::VARIANTS[1].attrs.is_empty());
    assert_eq!(OpKind::from_str_index("+"), Some(OpKind::Add));
}
