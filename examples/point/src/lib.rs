//! The main example: a Rust library whose functions (and, with the object-authoring macros,
//! types) are used from Python and C++ exactly like C++ ones.
use tvm_ffi::{ffi_func, ffi_methods, Array, Function, Object, ObjectRef, Rw};

pub mod options;
pub mod space;
pub mod style;
pub mod version;

/// A point in the plane.
#[derive(Object, Clone)]
#[ffi_type(key = "my_ext.Point", structural = "tree")]
#[repr(C)]
pub struct Point {
    /// The x coordinate (writable from Python and C++).
    #[ffi(rw)]
    pub x: Rw<i64>,
    /// The y coordinate.
    #[ffi(default = 7)]
    pub y: i64,
    /// A label, keyword-only.
    #[ffi(kw_only, default = "pt")]
    pub label: tvm_ffi::String,
}

#[ffi_methods]
impl Point {
    /// Squared distance from the origin.
    pub fn norm2(&self) -> i64 {
        let x = self.x.get();
        x * x + self.y * self.y
    }

    /// A new point with both coordinates multiplied by `k`.
    pub fn scale(&self, k: i64) -> ObjectRef<Point> {
        ObjectRef::new(Point {
            x: (self.x.get() * k).into(),
            y: self.y * k,
            label: self.label.clone(),
        })
    }

    /// A new point moved by `dx` and `dy` (0 unless given: a parameter with a default).
    pub fn moved(&self, dx: i64, #[ffi(default = 0)] dy: i64) -> ObjectRef<Point> {
        ObjectRef::new(Point {
            x: (self.x.get() + dx).into(),
            y: self.y + dy,
            label: self.label.clone(),
        })
    }

    /// The origin (a static method).
    pub fn origin() -> ObjectRef<Point> {
        ObjectRef::new(Point {
            x: 0.into(),
            y: 0,
            label: "origin".into(),
        })
    }

    /// A point at `(x, y)`, labelled "at" (a static method with a default: Python calls it
    /// with keywords too, `Point.at(1, y=2)`).
    pub fn at(x: i64, #[ffi(default = 0)] y: i64) -> ObjectRef<Point> {
        ObjectRef::new(Point {
            x: x.into(),
            y,
            label: "at".into(),
        })
    }

    /// Whether `other` is this very object (receives the reference itself as `this`).
    pub fn is_same(this: &ObjectRef<Self>, other: ObjectRef<Point>) -> bool {
        this.ptr_eq(&other)
    }
}

/// A closed interval `[lo, hi]` with an explicit constructor that validates its arguments.
#[derive(Object)]
#[ffi_type(key = "my_ext.Interval", structural = "tree")]
#[repr(C)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

#[ffi_methods]
impl Interval {
    /// Makes `[lo, hi]`; `lo > hi` raises `ValueError`.
    #[ffi(init)]
    pub fn new(lo: f64, hi: f64) -> tvm_ffi::Result<Self> {
        tvm_ffi::ensure!(lo <= hi, ValueError, "empty interval: lo={lo} > hi={hi}");
        Ok(Interval { lo, hi })
    }

    /// `hi - lo`.
    pub fn length(&self) -> f64 {
        self.hi - self.lo
    }
}

/// The C++ type `testing.TestCxxClassBase` (defined in `libtvm_ffi_testing`, which
/// `import tvm_ffi` loads), declared so that a Rust type can derive from it. The layout is
/// checked against the runtime's reflection when this library loads. Its fields are `Rw<T>`:
/// C++ (and Python, through C++'s setters) may write them at any time.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.TestCxxClassBase", external)]
#[repr(C)]
pub struct TestCxxClassBase {
    /// C++ `int64_t v_i64`.
    pub v_i64: Rw<i64>,
    /// C++ `int32_t v_i32`.
    pub v_i32: Rw<i32>,
}

// SAFETY: mirrors C++ `testing::TestCxxClassBase` (two plain integers, which any value is
// valid for); the layout and field types are checked at load.
unsafe impl tvm_ffi::ExternalType for TestCxxClassBase {}

/// A Rust subtype of the C++ `testing.TestCxxClassBase`.
#[derive(Object, Clone)]
#[ffi_type(key = "my_ext.CxxChild")]
#[repr(C)]
pub struct CxxChild {
    /// The C++ parent's payload.
    #[ffi(base)]
    pub base: TestCxxClassBase,
    /// A field added in Rust.
    #[ffi(default = "child")]
    pub note: tvm_ffi::String,
}

#[ffi_methods]
impl CxxChild {
    /// `v_i64 + v_i32`, reading the C++ parent's fields.
    pub fn total(&self) -> i64 {
        self.base.v_i64.get() + i64::from(self.base.v_i32.get())
    }
}

/// Adds two integers.
#[ffi_func(name = "my_ext.add")]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// `x + by`: `by` has a default (`shift(1) == 2`), and Python passes keywords to a
/// constructor (`Interval(lo=1.0, hi=2.0)`); Rust and C++ callers pass them all in the
/// runtime's KWARGS convention.
#[ffi_func(name = "my_ext.shift")]
pub fn shift(x: i64, #[ffi(default = 1)] by: i64) -> i64 {
    x + by
}

/// Parses an integer; an invalid text raises `ValueError`.
#[ffi_func(name = "my_ext.parse")]
pub fn parse(text: &str) -> tvm_ffi::Result<i64> {
    Ok(text.trim().parse::<i64>()?)
}

/// Calls `f` twice: `f(f(x))`.
#[ffi_func(name = "my_ext.apply_twice")]
pub fn apply_twice(f: Function, x: i64) -> tvm_ffi::Result<i64> {
    let once: i64 = f.call_as((x,))?;
    f.call_as((once,))
}

/// Greets `name` (a string that may be longer or shorter than 8 bytes).
#[ffi_func(name = "my_ext.greet")]
pub fn greet(name: &str) -> String {
    format!("hello, {name}")
}

/// Sums an array of integers.
#[ffi_func(name = "my_ext.sum")]
pub fn sum(values: Array<i64>) -> i64 {
    values.iter().sum()
}

/// The integers `0..n` as a list. The array is allocated fallibly: a size the allocator
/// refuses raises `MemoryError`.
#[ffi_func(name = "my_ext.range")]
pub fn range(n: i64) -> tvm_ffi::Result<Array<i64>> {
    tvm_ffi::ensure!(n >= 0, ValueError, "`n` must be non-negative, got {n}");
    Array::new(0..n)
}

/// Counts the entries of a map and sums its values.
#[ffi_func(name = "my_ext.map_total")]
pub fn map_total(m: tvm_ffi::Map<tvm_ffi::String, i64>) -> i64 {
    m.entries().into_iter().map(|(_, v)| v).sum()
}

/// Returns its argument: an object made anywhere keeps its identity.
#[ffi_func(name = "my_ext.identity")]
pub fn identity(
    obj: ObjectRef<tvm_ffi::builtin::AnyObject>,
) -> ObjectRef<tvm_ffi::builtin::AnyObject> {
    obj
}

/// Divides; panics on zero (the panic becomes a RuntimeError, the process survives).
///
/// Both a global function and a module export: `tvm_ffi.load_module(lib).checked_div(7, 2)`.
#[ffi_func(name = "my_ext.checked_div", export = "checked_div")]
pub fn checked_div(a: i64, b: i64) -> i64 {
    if b == 0 {
        panic!("division by zero in checked_div");
    }
    a / b
}

/// Narrows to i32: an out-of-range argument is a TypeError, never a truncation.
#[ffi_func(name = "my_ext.narrow")]
pub fn narrow(x: i32) -> i32 {
    x
}

/// Calls `f()` and describes the error it raised as `"<kind>: <message>"` (or `"ok"`): an
/// exception raised by a Python callback arrives in Rust with its original kind.
#[ffi_func(name = "my_ext.describe_error")]
pub fn describe_error(f: Function) -> String {
    match f.call(()) {
        Ok(_) => "ok".to_string(),
        Err(err) => format!("{}: {}", err.kind(), err.message()),
    }
}

/// Adds one: a module export, `tvm_ffi.load_module(lib).add_one(1) == 2` (the symbol
/// `__tvm_ffi_add_one`), not a global function.
#[ffi_func(export = "add_one")]
pub fn add_one(x: i64) -> i64 {
    x + 1
}

/// Counts its arguments, whatever they are: a packed (variadic) function receives them all,
/// unconverted, as `&[AnyView]`.
#[ffi_func(name = "my_ext.count_args")]
pub fn count_args(args: &[tvm_ffi::AnyView]) -> i64 {
    args.len() as i64
}

/// Joins its string arguments with the separator given first: a packed function converts its
/// arguments itself (a non-string raises the runtime's `TypeError`).
#[ffi_func(name = "my_ext.join")]
pub fn join(args: &[tvm_ffi::AnyView]) -> tvm_ffi::Result<String> {
    let Some((sep, parts)) = args.split_first() else {
        tvm_ffi::bail!(
            TypeError,
            "my_ext.join needs a separator as its first argument"
        );
    };
    let parts = parts
        .iter()
        .map(|part| part.cast::<&str>())
        .collect::<tvm_ffi::Result<Vec<_>>>()?;
    Ok(parts.join(sep.cast::<&str>()?))
}
