//! Constructor fixtures: which fields the reflection constructor takes, positionally or by
//! keyword, and what the creator leaves in the others (C++ `testing.cc:293-391`). Every field
//! is writable (`def_rw`); `Default` gives the values of C++'s member initialisers.
use tvm_ffi::{Object, Rw};

// Twin of `testing.TestCxxInitSubset`: two fields outside the constructor.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCxxInitSubset")]
#[repr(C)]
pub struct TestCxxInitSubset {
    #[ffi(rw)]
    pub required_field: Rw<i64>,
    #[ffi(rw, init = false, default = -1)]
    pub optional_field: Rw<i64>,
    #[ffi(rw, init = false, default = "default")]
    pub note: Rw<tvm_ffi::String>,
}

impl Default for TestCxxInitSubset {
    fn default() -> Self {
        TestCxxInitSubset {
            required_field: 0.into(),
            optional_field: (-1).into(),
            note: Rw::default(),
        }
    }
}

// Twin of `testing.TestCxxKwOnly`: keyword-only fields.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxKwOnly")]
#[repr(C)]
pub struct TestCxxKwOnly {
    #[ffi(rw, kw_only)]
    pub x: Rw<i64>,
    #[ffi(rw, kw_only)]
    pub y: Rw<i64>,
    #[ffi(rw, kw_only)]
    pub z: Rw<i64>,
    #[ffi(rw, kw_only, default = 100)]
    pub w: Rw<i64>,
}

// Twin of `testing.TestCxxAutoInit`: one field of each kind.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxAutoInit")]
#[repr(C)]
pub struct TestCxxAutoInit {
    #[ffi(rw)]
    pub a: Rw<i64>,
    #[ffi(rw, init = false, default = 42)]
    pub b: Rw<i64>,
    #[ffi(rw, kw_only)]
    pub c: Rw<i64>,
    #[ffi(rw, default = 99)]
    pub d: Rw<i64>,
}

// Twin of `testing.TestCxxAutoInitSimple`.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxAutoInitSimple")]
#[repr(C)]
pub struct TestCxxAutoInitSimple {
    #[ffi(rw)]
    pub x: Rw<i64>,
    #[ffi(rw)]
    pub y: Rw<i64>,
}

// Twin of `testing.TestCxxAutoInitAllInitOff`: `z` has no default, so it keeps the creator's
// value (C++'s member initialiser 1234, here `Default`).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestCxxAutoInitAllInitOff")]
#[repr(C)]
pub struct TestCxxAutoInitAllInitOff {
    #[ffi(rw, init = false, default = 7)]
    pub x: Rw<i64>,
    #[ffi(rw, init = false, default = 9)]
    pub y: Rw<i64>,
    #[ffi(rw, init = false)]
    pub z: Rw<i64>,
}

impl Default for TestCxxAutoInitAllInitOff {
    fn default() -> Self {
        TestCxxAutoInitAllInitOff {
            x: 7.into(),
            y: 0.into(),
            z: 1234.into(),
        }
    }
}

// Twin of `testing.TestCxxAutoInitKwOnlyDefaults`.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxAutoInitKwOnlyDefaults")]
#[repr(C)]
pub struct TestCxxAutoInitKwOnlyDefaults {
    #[ffi(rw)]
    pub p_required: Rw<i64>,
    #[ffi(rw, default = 11)]
    pub p_default: Rw<i64>,
    #[ffi(rw, kw_only)]
    pub k_required: Rw<i64>,
    #[ffi(rw, kw_only, default = 22)]
    pub k_default: Rw<i64>,
    #[ffi(rw, init = false, default = 33)]
    pub hidden: Rw<i64>,
}

// Twin of `testing.TestCxxAutoInitParent`.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxAutoInitParent")]
#[repr(C)]
pub struct TestCxxAutoInitParent {
    #[ffi(rw)]
    pub parent_required: Rw<i64>,
    #[ffi(rw, default = 5)]
    pub parent_default: Rw<i64>,
}

// Twin of `testing.TestCxxAutoInitChild`: the constructor takes the parent's fields too,
// required ones before those with defaults.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxAutoInitChild", final)]
#[repr(C)]
pub struct TestCxxAutoInitChild {
    #[ffi(base)]
    pub base: TestCxxAutoInitParent,
    #[ffi(rw)]
    pub child_required: Rw<i64>,
    #[ffi(rw, kw_only)]
    pub child_kw_only: Rw<i64>,
}

// Twin of `testing.TestCxxNoAutoInit`: no constructor (`init = false`), the creator stays.
#[derive(Object, Clone, Default)]
#[ffi_type(key = "testing.rs.TestCxxNoAutoInit", init = false)]
#[repr(C)]
pub struct TestCxxNoAutoInit {
    #[ffi(rw)]
    pub x: Rw<i64>,
    #[ffi(rw)]
    pub y: Rw<i64>,
}
