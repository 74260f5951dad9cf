//! `#[ffi_type(eq, hash, ord, str)]` and `frozen`: the runtime's operations (what Python's
//! `==`, `hash()`, `<`, `repr()` and C++ call) answer what the payload's Rust traits answer, and
//! no field of a frozen type can be written once the object is in use.
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use tvm_ffi::{reflection, serialization, Array, Function, Object, ObjectRef, ObjectType};

/// A tagged version: `tag` takes no part in equality, order or hash (hand-written impls, so
/// that the runtime's field-wise defaults would answer differently).
#[derive(Object, Clone)]
#[ffi_type(key = "rust_tests.TaggedVersion", frozen, eq, hash, ord, str)]
#[repr(C)]
pub struct TaggedVersion {
    pub major: i64,
    pub minor: i64,
    pub tag: tvm_ffi::String,
}

impl PartialEq for TaggedVersion {
    fn eq(&self, other: &Self) -> bool {
        (self.major, self.minor) == (other.major, other.minor)
    }
}
impl Eq for TaggedVersion {}
impl PartialOrd for TaggedVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for TaggedVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor).cmp(&(other.major, other.minor))
    }
}
impl Hash for TaggedVersion {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.major, self.minor).hash(state);
    }
}
impl fmt::Display for TaggedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{} ({})", self.major, self.minor, self.tag.as_str())
    }
}

/// `eq` and `ord` from `PartialEq`/`PartialOrd` of a float: NaN is unordered. No `hash`.
#[derive(Object, Clone, PartialEq, PartialOrd)]
#[ffi_type(key = "rust_tests.Measure", eq, ord)]
#[repr(C)]
pub struct Measure {
    pub value: f64,
}

fn v(major: i64, minor: i64, tag: &str) -> ObjectRef<TaggedVersion> {
    ObjectRef::new(TaggedVersion {
        major,
        minor,
        tag: tag.into(),
    })
}

use tvm_ffi_tests::global;

fn call_bool<A: tvm_ffi::IntoArg, B: tvm_ffi::IntoArg>(name: &str, a: A, b: B) -> bool {
    global(name).call_as((a, b)).unwrap()
}

#[test]
fn the_runtime_compares_hashes_and_prints_with_the_rust_traits() {
    let versions = [v(1, 2, "a"), v(1, 2, "b"), v(1, 10, "a"), v(2, 0, "")];
    let hash = global("ffi.RecursiveHash");
    let repr = global("ffi.ReprPrint");
    for a in &versions {
        for b in &versions {
            let ord = (**a).cmp(&**b);
            assert_eq!(call_bool("ffi.RecursiveEq", a, b), **a == **b);
            assert_eq!(call_bool("ffi.RecursiveLt", a, b), ord.is_lt());
            assert_eq!(call_bool("ffi.RecursiveLe", a, b), ord.is_le());
            assert_eq!(call_bool("ffi.RecursiveGt", a, b), ord.is_gt());
            assert_eq!(call_bool("ffi.RecursiveGe", a, b), ord.is_ge());
            if **a == **b {
                let (ha, hb): (i64, i64) =
                    (hash.call_as((a,)).unwrap(), hash.call_as((b,)).unwrap());
                assert_eq!(ha, hb);
            }
        }
        // `repr` is the payload's `Display`, and so is Rust's `Display` of the reference.
        let text: String = repr.call_as((a,)).unwrap();
        assert_eq!(text, (**a).to_string());
        assert_eq!(format!("{a}"), text);
        assert_eq!(format!("{a:?}"), text);
    }
    let h = |x: &ObjectRef<TaggedVersion>| hash.call_as::<i64, _>((x,)).unwrap();
    assert_ne!(h(&versions[0]), h(&versions[2]));
    assert_eq!(format!("{}", versions[1]), "v1.2 (b)");
    // Nested values use the hooks too: arrays compare element-wise through them, and print
    // each element with its `Display`.
    let xs = Array::new([versions[0].clone(), versions[3].clone()]).unwrap();
    let ys = Array::new([versions[1].clone(), versions[3].clone()]).unwrap();
    assert!(call_bool("ffi.RecursiveEq", &xs, &ys));
    assert!(call_bool(
        "ffi.RecursiveLt",
        &xs,
        Array::new([versions[2].clone()]).unwrap()
    ));
    assert_eq!(
        repr.call_as::<String, _>((&xs,)).unwrap(),
        "(v1.2 (a), v2.0 ())"
    );
    // The hooks are the registered type attributes C++ reads.
    let index = TaggedVersion::type_index();
    for attr in [
        "__ffi_eq__",
        "__ffi_hash__",
        "__ffi_compare__",
        "__ffi_repr__",
    ] {
        let hook = reflection::type_attr(index, attr).unwrap_or_else(|| panic!("{attr}"));
        assert!(hook.checked_cast::<Function>().is_some(), "{attr}");
    }
}

#[test]
fn partial_orders_and_missing_hashes_raise_as_the_runtime_does() {
    let m = |value| ObjectRef::new(Measure { value });
    let (one, two, nan) = (m(1.0), m(2.0), m(f64::NAN));
    assert!(call_bool("ffi.RecursiveLt", &one, &two));
    // NaN != NaN, as in Rust (two objects: the same one is equal without a call).
    assert!(!call_bool("ffi.RecursiveEq", &nan, m(f64::NAN)));
    // `partial_cmp` is `None`: no answer is made up.
    let err = global("ffi.RecursiveLt").call((&one, &nan)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message()
            .contains("`rust_tests.Measure` values are unordered"),
        "{}",
        err.message()
    );
    // `eq` without `hash`: the runtime refuses to hash (Python's `hash()` raises likewise).
    let err = global("ffi.RecursiveHash").call((&one,)).unwrap_err();
    assert_eq!(err.kind(), "ValueError");
    // No `str`: the runtime's default repr.
    assert_eq!(format!("{one}"), "rust_tests.Measure(value=1)");
}

#[test]
fn no_field_of_a_frozen_type_is_writable_yet_copies_and_json_work() {
    let a = v(1, 2, "x");
    for field in reflection::fields(TaggedVersion::type_index()) {
        assert_eq!(
            field.flags & tvm_ffi::sys::field_flags::kTVMFFIFieldFlagBitMaskWritable,
            0
        );
    }
    // SAFETY: the setters of Rust-defined types synchronise.
    let err = unsafe { a.as_object().set_field("major", 5_i64) }.unwrap_err();
    assert_eq!(err.kind(), "AttributeError");
    assert_eq!(a.major, 1);
    // Construction through the reflection constructor, deep copy and JSON still work.
    let init: Function = reflection::type_attr(TaggedVersion::type_index(), "__ffi_init__")
        .unwrap()
        .cast()
        .unwrap();
    let b: ObjectRef<TaggedVersion> = init.call_as((1_i64, 2_i64, "y")).unwrap();
    assert!(*b == *a && b.tag.as_str() == "y");
    let copy = a.deep_copy().unwrap();
    assert!(!copy.ptr_eq(&a) && *copy == *a && copy.tag.as_str() == "x");
    let json = serialization::to_json_graph(&a).unwrap();
    let back: ObjectRef<TaggedVersion> = serialization::from_json_graph(&json)
        .unwrap()
        .cast()
        .unwrap();
    assert!(*back == *a && back.tag.as_str() == "x");
    // Once Rust has used them, their fields are refused as well.
    for obj in [&b, &copy, &back] {
        // SAFETY: as above.
        let err = unsafe { obj.as_object().set_field("tag", "z") }.unwrap_err();
        assert_eq!(err.kind(), "AttributeError");
    }
}

/// A `Display` that panics on negative values.
#[derive(Object, Clone, PartialEq)]
#[ffi_type(key = "rust_tests.Touchy", eq, str)]
#[repr(C)]
pub struct Touchy {
    pub value: i64,
}

impl fmt::Display for Touchy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        assert!(self.value >= 0, "negative touchy value");
        write!(f, "touchy {}", self.value)
    }
}

#[test]
fn a_panicking_trait_impl_is_an_error_of_the_operation() {
    let repr = global("ffi.ReprPrint");
    let ok = ObjectRef::new(Touchy { value: 1 });
    assert_eq!(repr.call_as::<String, _>((&ok,)).unwrap(), "touchy 1");
    let bad = ObjectRef::new(Touchy { value: -1 });
    let err = repr.call((&bad,)).unwrap_err();
    assert_eq!(err.kind(), "RuntimeError");
    assert!(
        err.message().contains("negative touchy value"),
        "{}",
        err.message()
    );
    assert!(
        err.message().contains("rust_tests.Touchy.__ffi_repr__"),
        "{}",
        err.message()
    );
    // The process goes on: the next call works.
    assert_eq!(repr.call_as::<String, _>((&ok,)).unwrap(), "touchy 1");
}

/// A value type's usual enum field (`dtype`).
#[derive(tvm_ffi::Enum, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[ffi_type(key = "rust_tests.DunderDType", str)]
pub enum DType {
    #[ffi(value = "int32")]
    Int32,
    #[ffi(value = "int64")]
    Int64,
}

/// The value-type recipe (derived `Eq`, `Ord`, `Hash`) on a node with an enum field.
#[derive(Object, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[ffi_type(key = "rust_tests.TypedImm", eq, hash, ord)]
#[repr(C)]
pub struct TypedImm {
    pub dtype: tvm_ffi::EnumRef<DType>,
    pub value: i64,
}

#[test]
fn value_types_derive_their_traits_through_enum_fields() {
    let imm = |dtype, value| {
        ObjectRef::new(TypedImm {
            dtype: tvm_ffi::EnumRef::new(dtype),
            value,
        })
    };
    let hash = global("ffi.RecursiveHash");
    let h = |x: &ObjectRef<TypedImm>| hash.call_as::<i64, _>((x,)).unwrap();
    let (a, b, c) = (
        imm(DType::Int32, 1),
        imm(DType::Int32, 1),
        imm(DType::Int64, 1),
    );
    assert!(call_bool("ffi.RecursiveEq", &a, &b));
    assert!(!call_bool("ffi.RecursiveEq", &a, &c));
    assert!(call_bool("ffi.RecursiveLt", &a, &c));
    assert_eq!(h(&a), h(&b));
    assert_ne!(h(&a), h(&c));
    // Rust's own traits: an enum reference orders and hashes as its variant.
    let set: std::collections::HashSet<tvm_ffi::EnumRef<DType>> =
        [a.dtype.clone(), b.dtype.clone(), c.dtype.clone()]
            .into_iter()
            .collect();
    assert_eq!(set.len(), 2);
    assert!(a.dtype < c.dtype && a.dtype == DType::Int32);
}
