//! The Rust side of `benches/python_call_overhead.py`: `#[ffi_func]` twins of the C++
//! `refl::GlobalDef().def(...)` functions in `benches/cpp/bench_functions.cc`, built as the
//! cdylib `libtvm_ffi_bench_functions.so` and loaded from Python.
//!
//! Keep each body identical in effect to its C++ twin, so that a timing difference is the cost of
//! the generated call path (argument checks and conversion, result writing, panic guard) and
//! nothing else.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{ffi_func, ffi_methods, ObjectRef, Rw};

/// No arguments, no result (C++: `[]() {}`).
#[ffi_func(name = "bench.nop")]
pub fn nop() {}

/// One `int` argument (C++: `[](int64_t x) { return x + 1; }`).
#[ffi_func(name = "bench.add_one")]
pub fn add_one(x: i64) -> i64 {
    x + 1
}

/// Three `int` arguments (C++: `[](int64_t a, int64_t b, int64_t c) { return a + b + c; }`).
#[ffi_func(name = "bench.add3")]
pub fn add3(a: i64, b: i64, c: i64) -> i64 {
    a + b + c
}

/// Returns its object argument (C++: `[](ffi::ObjectRef x) { return x; }`): one reference
/// taken for the argument, moved into the result.
#[ffi_func(name = "bench.echo")]
pub fn echo(x: ObjectRef<AnyObject>) -> ObjectRef<AnyObject> {
    x
}

/// Two writable `int` fields (C++: a class with two `int64_t` members registered with
/// `def_rw`), for the method `sum`.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "bench.RwPair", final)]
#[repr(C)]
pub struct RwPair {
    #[ffi(rw)]
    pub a: Rw<i64>,
    #[ffi(rw)]
    pub b: Rw<i64>,
}

#[ffi_methods]
impl RwPair {
    /// Reads both fields (C++: `a + b` on the members).
    pub fn sum(&self) -> i64 {
        self.a.get() + self.b.get()
    }
}

/// A new pair (C++: `make_object` and two member writes).
#[ffi_func(name = "bench.make_rw_pair")]
pub fn make_rw_pair(a: i64, b: i64) -> ObjectRef<RwPair> {
    ObjectRef::new(RwPair {
        a: Rw::new(a),
        b: Rw::new(b),
    })
}

/// Two integers with an explicit constructor (C++: `refl::init<int64_t, int64_t>()`), for
/// `benches/kwargs.py`: Python constructs it positionally or with keywords.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "bench.Pair", final)]
#[repr(C)]
pub struct Pair {
    pub a: i64,
    pub b: i64,
}

#[ffi_methods]
impl Pair {
    /// The constructor (C++: `PairObj(int64_t a, int64_t b)`).
    #[ffi(init)]
    pub fn new(a: i64, b: i64) -> Self {
        Pair { a, b }
    }
}

/// `[values reached, seconds per walk, seconds per identity map]` of `runs` full Rust
/// `structural::walk`s of `root` (a callback on every value) and `runs` `structural::map`s that
/// change nothing (through the C++ hooks of a type that registers them, such as TVM's IR), for
/// `benches/tvm_walk.py`.
#[ffi_func(name = "bench.structural_walk_and_map")]
pub fn structural_walk_and_map(
    root: tvm_ffi::Any,
    runs: i64,
) -> tvm_ffi::Result<tvm_ffi::Array<f64>> {
    use tvm_ffi::structural::{self, VisitValue, WalkOrder, WalkResult};
    let runs = runs.max(1);
    let mut seen = 0u64;
    let start = std::time::Instant::now();
    for _ in 0..runs {
        structural::walk(
            &root,
            |_: &VisitValue| {
                seen += 1;
                WalkResult::Advance
            },
            WalkOrder::PreOrder,
        )?;
    }
    let walk = start.elapsed().as_secs_f64() / runs as f64;
    let start = std::time::Instant::now();
    for _ in 0..runs {
        let out = structural::map(
            root.clone(),
            |_: &AnyObject| structural::Unchanged,
            WalkOrder::PostOrder,
        )?;
        std::hint::black_box(out);
    }
    let map = start.elapsed().as_secs_f64() / runs as f64;
    tvm_ffi::Array::new([(seen / runs as u64) as f64, walk, map])
}
