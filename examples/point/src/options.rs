//! Every field option in one type, for reference (and for the test suite).
use tvm_ffi::{Array, Object, ObjectRef};

fn empty_tags() -> Array<i64> {
    Array::new([]).expect("an empty array")
}

/// A settings object showing each `#[ffi(..)]` field option.
#[derive(Object, Clone)]
#[ffi_type(key = "my_ext.Options", structural = "tree")]
#[repr(C)]
pub struct Options {
    /// Required and positional (no default).
    pub id: i64,
    /// Renamed: Python and C++ see `title`.
    #[ffi(name = "title", default = "untitled")]
    pub name: tvm_ffi::String,
    /// A fresh value per object (`default_factory`).
    #[ffi(default_factory = empty_tags)]
    pub tags: Array<i64>,
    /// Not a constructor argument (`init = false`): starts at its empty value, 0.
    #[ffi(init = false)]
    pub hits: i64,
    /// Keyword-only, with a default.
    #[ffi(kw_only, default = false)]
    pub verbose: bool,
    /// Left out of `repr`, of recursive equality and of hashing.
    #[ffi(repr = false, compare = false, hash = false, default = 0)]
    pub cache: i64,
    /// Ignored by `structural_equal` / `structural_hash`.
    #[ffi(structural = "ignore", default = 0)]
    pub version: i64,
    /// Extra metadata next to the type schema.
    #[ffi(metadata(unit = "ms", max = 1000), default = 10)]
    pub timeout: i64,
    /// Optional object, `None` by default.
    #[ffi(default = None)]
    pub parent: Option<ObjectRef<Options>>,
    /// Not reflected at all (`skip`): Rust-only state, `Default` in objects the runtime creates.
    #[ffi(skip)]
    pub scratch: Vec<u8>,
}
