//! `?` on standard errors: the kind they raise as, the message with its cause chain, picking
//! another kind, a library's own `From<MyError> for tvm_ffi::Error`, and `tvm_ffi::Error`
//! inside `Box<dyn std::error::Error>` code.
use std::fmt;

use tvm_ffi::{ffi_func, Function, ResultExt};

/// A library error with a cause, as `thiserror` or `serde_json` would make one.
#[derive(Debug)]
struct ConfigError {
    line: u32,
    cause: std::num::ParseIntError,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad config at line {}", self.line)
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

fn parse_config(text: &str) -> Result<i64, ConfigError> {
    text.parse().map_err(|cause| ConfigError { line: 3, cause })
}

/// A library's error converts through its own `From` impl (which the blanket conversion of
/// every standard error ruled out, E0119); `Error::from_std` keeps the kind and cause chain.
impl From<ConfigError> for tvm_ffi::Error {
    fn from(err: ConfigError) -> tvm_ffi::Error {
        tvm_ffi::Error::from_std(&err)
    }
}

/// A library error converts with `?` through its `From` impl.
#[ffi_func(name = "rust_tests.errors.config")]
fn config(text: &str) -> tvm_ffi::Result<i64> {
    Ok(parse_config(text)?)
}

/// Parse errors raise ValueError.
#[ffi_func(name = "rust_tests.errors.parse")]
fn parse(text: &str) -> tvm_ffi::Result<f64> {
    Ok(text.parse::<f64>()?)
}

/// The caller picks the kind.
#[ffi_func(name = "rust_tests.errors.lookup")]
fn lookup(key: &str) -> tvm_ffi::Result<i64> {
    match key {
        "one" => Ok(1),
        _ => Err(format!("no entry `{key}`")).raise_as("KeyError"),
    }
}

fn call_err(name: &str, arg: &str) -> (String, String) {
    let err = Function::get_global(name)
        .unwrap()
        .call((arg,))
        .unwrap_err();
    (err.kind().to_string(), err.message().to_string())
}

#[test]
fn standard_errors_raise_with_their_kind_and_cause_chain() {
    assert_eq!(
        call_err("rust_tests.errors.config", "x"),
        (
            "RuntimeError".into(),
            "bad config at line 3: invalid digit found in string".into()
        )
    );
    assert_eq!(
        call_err("rust_tests.errors.parse", "x"),
        ("ValueError".into(), "invalid float literal".into())
    );
    assert_eq!(
        call_err("rust_tests.errors.lookup", "two"),
        ("KeyError".into(), "no entry `two`".into())
    );
    let mut v: Vec<u8> = Vec::new();
    let err: tvm_ffi::Error = v.try_reserve_exact(usize::MAX).unwrap_err().into();
    assert_eq!(err.kind().as_str(), "MemoryError");
    assert!(
        err.message().starts_with("cannot allocate: "),
        "{}",
        err.message()
    );
}

#[test]
fn ffi_errors_travel_in_box_dyn_error() {
    fn run() -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
        let f = Function::get_global("rust_tests.errors.parse").unwrap();
        let value: f64 = f.call_as(("nope",))?;
        Ok(value as i64)
    }
    let err = run().unwrap_err();
    assert_eq!(err.to_string(), "ValueError: invalid float literal");
}

/// The runtime rewrites a shared error's backtrace in place, without synchronisation, each time
/// Python re-raises it (`set_last_ffi_error` calls the cell's `update_backtrace`). A Rust clone
/// on another thread reads its own copy, taken when the error was made or received: never the
/// storage being rewritten (which read freed memory, under ASan a heap-use-after-free).
#[test]
fn a_clone_never_reads_a_backtrace_the_runtime_rewrites() {
    use tvm_ffi::sys;
    for round in 0..20 {
        let err = tvm_ffi::Error::with_backtrace(
            "ValueError",
            "shared",
            "  File \"lib.rs\", line 1, in f\n",
        );
        let original = err.backtrace();
        let handle = err.as_object_ref().as_raw().as_ptr() as usize;
        // The cell follows the 24-byte header (c_api.h `TVMFFIErrorGetCellPtr`); Rust no
        // longer exposes it, Python reaches it so.
        let cell =
            (handle + std::mem::size_of::<sys::TVMFFIObject>()) as *const sys::TVMFFIErrorCell;
        // SAFETY: the live error's cell; nothing writes it yet.
        let update = unsafe { (*cell).update_backtrace }.unwrap();
        std::thread::scope(|s| {
            let reader = err.clone();
            let expected = original.clone();
            s.spawn(move || {
                for _ in 0..2_000 {
                    assert_eq!(reader.backtrace(), expected);
                }
            });
            for i in 0..2_000 {
                // Growing, so that the runtime's storage reallocates.
                let text = format!("  File \"re_raise.py\", line {i}, in g\n").repeat(1 + i % 64);
                let bytes = sys::TVMFFIByteArray::from_bytes(text.as_bytes());
                // SAFETY: the runtime's own update function on its live error object, as
                // Python calls it; this thread holds `err` for the whole scope.
                unsafe { update(handle as _, &bytes, sys::kTVMFFIBacktraceUpdateModeReplace) };
            }
        });
        // Received errors are snapshotted too: an error raised through a call.
        let received = tvm_ffi::Error::from_object_ref(err.as_object_ref().clone());
        assert_ne!(received.backtrace(), original, "round {round}");
        assert_eq!(err.backtrace(), original, "round {round}");
    }
}

/// C callers of `TVMFFIErrorCreateWithCauseAndExtraContext` may pass any object as the cause:
/// only an `ffi.Error` comes back as an `Error` (an `Array` read as an error cell would read
/// its data pointer as the message's bytes). The extra context is any object.
#[test]
fn a_cause_that_is_not_an_error_is_not_read_as_one() {
    use tvm_ffi::{sys, Array, Error, ObjectRef};
    let not_an_error = Array::new([1i64, 2, 3])
        .unwrap()
        .into_object_ref()
        .into_object();
    let empty = sys::TVMFFIByteArray::from_bytes(b"");
    let kind = sys::TVMFFIByteArray::from_bytes(b"ValueError");
    let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    let handle = not_an_error.as_raw().as_ptr() as sys::TVMFFIObjectHandle;
    // SAFETY: valid byte arrays and output slot; both handles are live objects (the runtime
    // takes its own references).
    let rc = unsafe {
        sys::TVMFFIErrorCreateWithCauseAndExtraContext(
            &kind, &empty, &empty, handle, handle, &mut out,
        )
    };
    assert_eq!(rc, 0);
    let ptr = std::ptr::NonNull::new(out as *mut sys::TVMFFIObject).unwrap();
    // SAFETY: a fresh ffi.Error with one strong reference, now ours.
    let err = Error::from_object_ref(unsafe { ObjectRef::from_raw(ptr) });
    assert!(err.cause_chain().is_none());
    assert!(err.extra_context().unwrap().ptr_eq(&not_an_error));
    // Ours, and the error's two (as its cause and as its context).
    assert_eq!(not_an_error.strong_count(), 3);
    drop(err);
    assert_eq!(not_an_error.strong_count(), 1);
}

/// A cause travels with the error through a call: raised by a Rust function, received by the
/// caller with the same cause object.
#[test]
fn the_cause_chain_crosses_a_call() {
    use tvm_ffi::Error;
    let cause = Error::key_error("no entry `x`");
    let inner = cause.clone();
    let f = Function::from_typed(move || -> tvm_ffi::Result<i64> {
        Err(Error::with_cause_and_extra_context(
            "RuntimeError",
            "lookup failed",
            "",
            Some(&inner),
            None,
        ))
    });
    let err = f.call(()).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("RuntimeError", "lookup failed")
    );
    let got = err.cause_chain().unwrap();
    assert!(got.as_object_ref().ptr_eq(cause.as_object_ref()));
    assert_eq!(got.message(), "no entry `x`");
}

/// `bail!` and `ensure!` name the raising function in the backtrace, as C++'s `TVM_FFI_THROW`
/// does (`in <function>`); in a closure, the function the closure is written in.
#[test]
fn bail_names_the_raising_function() {
    fn check_positive(n: i64) -> tvm_ffi::Result<i64> {
        tvm_ffi::ensure!(n > 0, ValueError, "{n} is not positive");
        Ok(n)
    }
    let err = check_positive(-1).unwrap_err();
    assert_eq!(err.message(), "-1 is not positive");
    let frame = err.backtrace();
    assert!(frame.starts_with("  File \""), "{frame}");
    assert!(
        frame.ends_with(", in errors::bail_names_the_raising_function::check_positive\n"),
        "{frame}"
    );
    let in_closure = || -> tvm_ffi::Result<()> { tvm_ffi::bail!(KeyError, "no entry") };
    let frame = in_closure().unwrap_err().backtrace();
    assert!(
        frame.ends_with(", in errors::bail_names_the_raising_function\n"),
        "{frame}"
    );
}
