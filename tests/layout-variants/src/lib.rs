//! Types with the keys of `examples/point` whose reflection (parent, size, field names,
//! offsets, sizes, flags, schemas) is identical to the example's but whose Rust layout is not:
//! loaded into a process that already loaded the example, sharing them would let one library
//! read the other's memory as the wrong Rust type. Each must be a load error naming its key.
use tvm_ffi::{ffi_func, Array, Object, ObjectRef, Rw};

/// `my_ext.Point` with `y` stored as `Rw<i64>` instead of `i64` (not marked `rw`, so its
/// reflection is the example's): differs only in `Rw<T>` vs `T`.
#[derive(Object)]
#[ffi_type(key = "my_ext.Point", structural = "tree")]
#[repr(C)]
pub struct Point {
    #[ffi(rw)]
    pub x: Rw<i64>,
    #[ffi(default = 7)]
    pub y: Rw<i64>,
    #[ffi(kw_only, default = "pt")]
    pub label: tvm_ffi::String,
}

fn empty_tags() -> Array<i64> {
    Array::new([]).expect("an empty array")
}

/// `my_ext.Options` whose Rust-only (`skip`) field has another type of the same size:
/// differs only in a skipped field.
#[derive(Object)]
#[ffi_type(key = "my_ext.Options", structural = "tree")]
#[repr(C)]
pub struct Options {
    pub id: i64,
    #[ffi(name = "title", default = "untitled")]
    pub name: tvm_ffi::String,
    #[ffi(default_factory = empty_tags)]
    pub tags: Array<i64>,
    #[ffi(init = false)]
    pub hits: i64,
    #[ffi(kw_only, default = false)]
    pub verbose: bool,
    #[ffi(repr = false, compare = false, hash = false, default = 0)]
    pub cache: i64,
    #[ffi(structural = "ignore", default = 0)]
    pub version: i64,
    #[ffi(metadata(unit = "ms", max = 1000), default = 10)]
    pub timeout: i64,
    #[ffi(default = None)]
    pub parent: Option<ObjectRef<Options>>,
    #[ffi(skip)]
    pub scratch: [u64; 3],
}

/// `rs_soundness.Cached` as tests/containers defines it, to the letter: its Rust-only field has
/// the same name, type name and size, yet belongs to another build (of another version of a
/// crate, the type behind the name could have another shape). Loaded after tests/containers,
/// it is refused.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Cached")]
#[repr(C)]
pub struct Cached {
    /// An id.
    pub id: i64,
    /// Rust-only.
    #[ffi(skip)]
    pub scratch: Vec<u8>,
}

/// The load errors of this library.
#[ffi_func(name = "layout_variants.load_errors")]
pub fn load_errors() -> Array<tvm_ffi::String> {
    Array::new(
        tvm_ffi::registry::load_errors()
            .into_iter()
            .map(tvm_ffi::String::from),
    )
    .expect("a small array")
}

/// Makes this library's `my_ext.Point`, which did not register when loaded second: the first
/// use names the conflict.
#[ffi_func(name = "layout_variants.make_point")]
pub fn make_point() -> ObjectRef<Point> {
    ObjectRef::new(Point {
        x: Rw::new(1),
        y: Rw::new(2),
        label: "p".into(),
    })
}
