//! Call-overhead benchmark of the Rust SDK, the twin of `benches/cpp/call_overhead.cc`.
//!
//! Measures, in nanoseconds per operation (best of several runs):
//!
//! - `call.add_one`: a typed call of the C++ global `testing.add_one` (one `int` argument,
//!   `int` result read back), through [`Function::call`];
//! - `call.nop`: a zero-argument call of the C++ global `testing.nop`;
//! - `objectref.clone_drop`: cloning an [`ObjectRef`] (the function
//!   object) and dropping the clone at once, i.e. one strong increment and one decrement;
//! - `object.new_drop`: a new object of a Rust-defined type with one `i64` field
//!   ([`ObjectRef::new`](tvm_ffi::ObjectRef::new)), released at once (allocation, deleter,
//!   free);
//! - `field.rw_read`: reading an `Rw<i64>` field through `&T` (a relaxed atomic load; the C++
//!   twin reads a plain `int64_t` member through `const T*`);
//! - `map.*`, `array.*`, `shape.build`: container reads and `Shape` construction (see
//!   [`containers`]).
//!
//! Usage: `call_overhead [ITERATIONS] [RUNS]` (defaults: 10 000 000 and 5). Each result line is
//! `<operation> <ns> ns/op`; `benches/run.sh` parses these lines, so keep the format in step
//! with the C++ program.
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::hint::black_box;
use std::time::Instant;

use tvm_ffi::{Function, Object, ObjectRef, Rw};

mod containers;

/// The object of `object.new_drop`: one `i64` field, as the C++ twin's `BenchObj`.
#[derive(Object)]
#[ffi_type(key = "bench.RustNewDrop", final)]
#[repr(C)]
struct BenchObj {
    value: i64,
}

/// The object of `field.rw_read`: one writable `i64` field.
#[derive(Object)]
#[ffi_type(key = "bench.RustRwRead", final)]
#[repr(C)]
struct BenchRw {
    #[ffi(rw)]
    value: Rw<i64>,
}

/// `dlopen` flag: resolve every symbol at load time.
const RTLD_NOW: c_int = 0x2;
/// `dlopen` flag: make the library's symbols available to later loads.
const RTLD_GLOBAL: c_int = 0x100;

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlerror() -> *const c_char;
}

/// Default number of operations per timed run.
const DEFAULT_ITERATIONS: u64 = 10_000_000;
/// Default number of timed runs per operation (the best one is reported).
const DEFAULT_RUNS: u32 = 5;

/// Loads the wheel's C++ test library, whose static initialisers register the `testing.*`
/// global functions.
fn load_testing_library() -> Result<(), String> {
    let path = format!("{}/libtvm_ffi_testing.so", tvm_ffi::build_info::LIBDIR);
    let c_path = CString::new(path.clone()).map_err(|e| format!("bad path {path}: {e}"))?;
    // SAFETY: `c_path` is a valid NUL-terminated path; the library stays loaded for the rest
    // of the process (the handle is intentionally leaked).
    let handle = unsafe { dlopen(c_path.as_ptr(), RTLD_NOW | RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: after a failed dlopen, dlerror returns a valid C string (or null).
        let err = unsafe { dlerror() };
        let msg = if err.is_null() {
            "unknown error".into()
        } else {
            // SAFETY: non-null, NUL-terminated, valid until the next dl* call on this thread.
            unsafe { CStr::from_ptr(err) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(format!("cannot load {path}: {msg}"));
    }
    Ok(())
}

/// Looks up a global function registered by the test library.
fn global(name: &str) -> Result<Function, String> {
    Function::get_global(name).ok_or_else(|| format!("global function `{name}` is not registered"))
}

/// Runs `body(iterations)` once to warm up, then `runs` timed times, and returns the best
/// time per operation in nanoseconds.
fn best_ns_per_op(iterations: u64, runs: u32, mut body: impl FnMut(u64)) -> f64 {
    body(iterations / 10 + 1);
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            body(iterations);
            start.elapsed().as_nanos() as f64 / iterations as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Prints one result line in the format shared with the C++ program.
fn report(operation: &str, ns: f64) {
    println!("{operation:<24} {ns:>9.2} ns/op");
}

/// Parses the optional positional argument `index`, or returns `default`.
fn arg_or<T: std::str::FromStr>(index: usize, default: T) -> Result<T, String> {
    match std::env::args().nth(index) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| format!("invalid argument #{index}: {s:?}")),
    }
}

/// Runs the three measurements.
fn run() -> Result<(), String> {
    let iterations: u64 = arg_or(1, DEFAULT_ITERATIONS)?.max(1);
    let runs: u32 = arg_or(2, DEFAULT_RUNS)?.max(1);
    load_testing_library()?;
    let add_one = global("testing.add_one")?;
    let nop = global("testing.nop")?;

    // Check once, outside the timed loops, that the calls do what we think they do.
    let probe = add_one.call((41i64,)).map_err(|e| e.to_string())?;
    if probe.cast::<i64>().map_err(|e| e.to_string())? != 42 {
        return Err("testing.add_one(41) != 42".into());
    }
    nop.call(()).map_err(|e| e.to_string())?;

    println!("# rust: {iterations} iterations, best of {runs} runs");
    // The container rows (benches/src/containers.rs).
    containers::run(iterations, runs)?;
    let ns = best_ns_per_op(iterations, runs, |n| {
        for i in 0..n as i64 {
            let out = add_one
                .call((black_box(i),))
                .expect("testing.add_one failed");
            black_box(
                out.cast::<i64>()
                    .expect("testing.add_one returned a non-int"),
            );
        }
    });
    report("call.add_one", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        for _ in 0..n {
            black_box(nop.call(()).expect("testing.nop failed"));
        }
    });
    report("call.nop", ns);

    let object = add_one.as_object_ref();
    let ns = best_ns_per_op(iterations, runs, |n| {
        for _ in 0..n {
            drop(black_box(object.clone()));
        }
    });
    report("objectref.clone_drop", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        for i in 0..n as i64 {
            drop(black_box(ObjectRef::new(BenchObj {
                value: black_box(i),
            })));
        }
    });
    report("object.new_drop", ns);

    let object = ObjectRef::new(BenchRw { value: Rw::new(3) });
    let payload: &BenchRw = &object;
    let ns = best_ns_per_op(iterations, runs, |n| {
        let mut sum = 0i64;
        for _ in 0..n {
            sum = sum.wrapping_add(black_box(payload).value.get());
        }
        black_box(sum);
    });
    report("field.rw_read", ns);
    Ok(())
}

fn main() {
    if let Err(msg) = run() {
        eprintln!("error: {msg}");
        std::process::exit(1);
    }
}
