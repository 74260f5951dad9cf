//! The Rust side of `benches/python_call_overhead.py`: `#[ffi_func]` twins of the C++
//! `refl::GlobalDef().def(...)` functions in `benches/cpp/bench_functions.cc`, built as the
//! cdylib `libtvm_ffi_bench_functions.so` and loaded from Python.
//!
//! Keep each body identical in effect to its C++ twin, so that a timing difference is the cost of
//! the generated call path (argument checks and conversion, result writing, panic guard) and
//! nothing else.
use tvm_ffi::builtin::Object;
use tvm_ffi::{ffi_func, ObjectRef};

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
pub fn echo(x: ObjectRef<Object>) -> ObjectRef<Object> {
    x
}
