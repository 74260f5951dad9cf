//! Rust functions that use what other languages hand them: a `Module` loaded by Python or C++,
//! and objects of C++ or Python types read and called by name, never declared in Rust. Called
//! by `tests/python/test_peer.py` and `tests/cpp/peer.cc`.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{ffi_func, Any, AnyView, Module, ObjectRef, Result};

/// Calls the function `name` of `module` with `x`.
#[ffi_func(name = "test_peer.module_call")]
fn module_call(module: Module, name: &str, x: i64) -> Result<i64> {
    module.function(name)?.call_as((x,))
}

/// What Rust reads of `module`'s function `name`: `[kind, implements, doc, metadata]`.
#[ffi_func(name = "test_peer.module_info")]
fn module_info(module: Module, name: &str) -> Result<tvm_ffi::Array<Any>> {
    tvm_ffi::Array::new([
        Any::new(module.kind()?),
        Any::new(module.implements_function(name)?),
        Any::new(module.function_doc(name)?),
        Any::new(module.function_metadata(name)?),
    ])
}

/// The field `name` of `obj`, whatever its type.
#[ffi_func(name = "test_peer.get_field")]
fn get_field(obj: ObjectRef<AnyObject>, name: &str) -> Result<Any> {
    obj.get_field_any(name)
}

/// The field `name` of `obj` as an integer (a typed read).
#[ffi_func(name = "test_peer.get_int_field")]
fn get_int_field(obj: ObjectRef<AnyObject>, name: &str) -> Result<i64> {
    obj.get_field(name)
}

/// Sets the field `name` of `obj` to `value`.
#[ffi_func(name = "test_peer.set_field")]
fn set_field(obj: ObjectRef<AnyObject>, name: &str, value: Any) -> Result<()> {
    // SAFETY: the peer's tests write a field from one thread at a time.
    unsafe { obj.set_field(name, value) }
}

/// `(obj, name, *args)`: calls the method `name` of `obj` with `args`.
#[ffi_func(name = "test_peer.call_method")]
fn call_method(args: &[AnyView]) -> Result<Any> {
    let [obj, name, rest @ ..] = args else {
        tvm_ffi::bail!(
            TypeError,
            "test_peer.call_method(obj, name, *args) needs obj and name"
        );
    };
    let obj: ObjectRef<AnyObject> = obj.cast()?;
    obj.call_method(name.cast::<&str>()?, rest)
}

/// Loads the module at `path` from Rust and calls its function `name` with `x`.
///
/// Test-only: loading a library trusts it (`Module::load_from_file` is `unsafe`); the tests
/// pass libraries of this workspace, as Python's `tvm_ffi.load_module` trusts its caller.
#[ffi_func(name = "test_peer.load_and_call")]
fn load_and_call(path: &str, name: &str, x: i64) -> Result<i64> {
    // SAFETY: only the test suite calls this, with libraries this workspace built.
    unsafe { Module::load_from_file(path)? }
        .function(name)?
        .call_as((x,))
}

/// A Rust thread of this library that repeats a step until stopped, counting its steps and the
/// steps that found something wrong (`test_peer.error_reader_*`, `test_peer.lookup_*`).
struct Background {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<(u64, u64)>,
}

impl Background {
    /// Starts repeating `step` (which returns whether it found something wrong), returning
    /// once the thread runs, so that it overlaps what the caller does next.
    fn start(mut step: impl FnMut() -> bool + Send + 'static) -> Background {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let started = std::sync::Arc::new(std::sync::Barrier::new(2));
        let running = started.clone();
        let thread = std::thread::spawn(move || {
            running.wait();
            let (mut steps, mut wrong) = (0u64, 0u64);
            loop {
                steps += 1;
                if step() {
                    wrong += 1;
                }
                if flag.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
            }
            (steps, wrong)
        });
        started.wait();
        Background { stop, thread }
    }

    /// Stops the thread started in `slot`: `[steps, steps that found something wrong]`.
    fn stop(slot: &std::sync::Mutex<Option<Background>>) -> Result<tvm_ffi::Array<i64>> {
        let background = slot
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| tvm_ffi::Error::runtime_error("no thread was started"))?;
        background
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let (steps, wrong) = background
            .thread
            .join()
            .map_err(|_| tvm_ffi::Error::runtime_error("the thread panicked"))?;
        tvm_ffi::Array::new([steps as i64, wrong as i64])
    }
}

static ERROR_READER: std::sync::Mutex<Option<Background>> = std::sync::Mutex::new(None);

/// Keeps a clone of `error` on a Rust thread that reads its backtrace until
/// `test_peer.error_reader_stop`, while Python rewrites the shared error's backtrace in place
/// (as re-raising it does).
#[ffi_func(name = "test_peer.error_reader_start")]
fn error_reader_start(error: ObjectRef<tvm_ffi::builtin::ErrorObj>) -> Result<()> {
    let error = tvm_ffi::Error::from_object_ref(error);
    let first = error.backtrace();
    let reader = Background::start(move || error.backtrace() != first);
    *ERROR_READER.lock().unwrap_or_else(|p| p.into_inner()) = Some(reader);
    Ok(())
}

/// Stops the reader of `test_peer.error_reader_start`: `[reads, reads that saw a changed
/// backtrace]`.
#[ffi_func(name = "test_peer.error_reader_stop")]
fn error_reader_stop() -> Result<tvm_ffi::Array<i64>> {
    Background::stop(&ERROR_READER)
}

static LOOKUPS: std::sync::Mutex<Option<Background>> = std::sync::Mutex::new(None);

/// Looks up the registered global functions `names` on a Rust thread of this library, one
/// after another and over again, until `test_peer.lookup_stop`, while another library
/// registers functions. Every other step asks for the key of an index no type has, which
/// reads the runtime's list of type keys through one of its global functions.
#[ffi_func(name = "test_peer.lookup_start")]
fn lookup_start(names: tvm_ffi::Array<tvm_ffi::String>) -> Result<()> {
    let names: Vec<std::string::String> = names.iter().map(|name| name.to_string()).collect();
    let mut step = 0;
    let lookups = Background::start(move || {
        step += 1;
        if step % 2 == 0 {
            return tvm_ffi::reflection::type_key_of_index(i32::MAX) != "<unregistered>";
        }
        names
            .get(step / 2 % names.len().max(1))
            .is_some_and(|name| tvm_ffi::Function::get_global(name).is_none())
    });
    *LOOKUPS.lock().unwrap_or_else(|p| p.into_inner()) = Some(lookups);
    Ok(())
}

/// Stops the thread of `test_peer.lookup_start`: `[lookups, lookups that found nothing]`.
#[ffi_func(name = "test_peer.lookup_stop")]
fn lookup_stop() -> Result<tvm_ffi::Array<i64>> {
    Background::stop(&LOOKUPS)
}
