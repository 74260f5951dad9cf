//! Panics at the `extern "C"` boundary: a caught panic becomes a `RuntimeError` whose message
//! says it was a panic and where (a panic carrying [`AllocFailure`] becomes a `MemoryError`),
//! so nothing unwinds into C. The boundary itself (turning a function's `Result<Any>` into the
//! ABI's result slot) is `function::panic_guard`.
//!
//! # What a caught panic prints
//!
//! Nothing. A panic inside a function, accessor or constructor entered through the ABI is an
//! error for the caller, with its message and location in the error; the default panic hook
//! (its stderr message and, with `RUST_BACKTRACE` set, a backtrace capture that costs
//! milliseconds) does not run for it. To see caught panics as Rust reports them, set the
//! environment variable `TVM_FFI_REPORT_PANICS=1` or call [`report_caught_panics`]`(true)`.
//! Panics outside those entry points (in a thread of your own, in a Rust test) reach the
//! previous hook as usual.
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Once;

use crate::abi::AllocFailure;
use crate::base::error::Error;

thread_local! {
    static LAST_PANIC_LOCATION: RefCell<Option<std::string::String>> = const { RefCell::new(None) };
    /// How many FFI entry points are catching panics on this thread right now.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

const REPORT_UNSET: u8 = 0;
const REPORT_OFF: u8 = 1;
const REPORT_ON: u8 = 2;
static REPORT: AtomicU8 = AtomicU8::new(REPORT_UNSET);

/// Whether panics caught at the FFI boundary also run the previous panic hook. By default they
/// do not: a caught panic is an error for the caller (with its message and location), and
/// printing it, with a backtrace capture under `RUST_BACKTRACE`, would cost milliseconds and
/// clutter the caller's output. Overrides the environment variable `TVM_FFI_REPORT_PANICS=1`.
pub fn report_caught_panics(enabled: bool) {
    REPORT.store(
        if enabled { REPORT_ON } else { REPORT_OFF },
        Ordering::Relaxed,
    );
}

fn reporting_caught_panics() -> bool {
    match REPORT.load(Ordering::Relaxed) {
        REPORT_UNSET => {
            let on = std::env::var_os("TVM_FFI_REPORT_PANICS")
                .is_some_and(|v| !v.is_empty() && v != "0");
            // Racing first readers agree: they read the same environment.
            let _ = REPORT.compare_exchange(
                REPORT_UNSET,
                if on { REPORT_ON } else { REPORT_OFF },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            on
        }
        state => state == REPORT_ON,
    }
}

/// Installs (once) the panic hook: it remembers where a panic happened (for the error's
/// message and backtrace) and defers to the previous hook, except for panics that an FFI entry
/// point catches (see the [module docs](self)).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if let Some(loc) = info.location() {
                let text = format!("{}:{}:{}", loc.file(), loc.line(), loc.column());
                let _ = LAST_PANIC_LOCATION.try_with(|slot| *slot.borrow_mut() = Some(text));
            }
            let caught = CATCHING.try_with(Cell::get).unwrap_or(0) > 0;
            if caught && !reporting_caught_panics() {
                return;
            }
            match info.payload().downcast_ref::<Error>() {
                // The default hook prints a payload that is no string as `Box<dyn Any>`.
                Some(err) => crate::abi::warn(format_args!(
                    "thread '{}' panicked at {}:\n{err}",
                    std::thread::current().name().unwrap_or("<unnamed>"),
                    info.location()
                        .map_or_else(String::new, ToString::to_string),
                )),
                None => previous(info),
            }
        }));
    });
}

/// Runs `body`, catching a panic: the catch of every FFI entry point (function calls, field
/// accessors, creators, registration). While it runs, a panic does not reach the previous
/// panic hook (see the [module docs](self)).
#[inline]
pub fn catch<R>(body: impl FnOnce() -> R) -> std::thread::Result<R> {
    struct Leave;
    impl Drop for Leave {
        #[inline]
        fn drop(&mut self) {
            let _ = CATCHING.try_with(|depth| depth.set(depth.get().saturating_sub(1)));
        }
    }
    let _ = CATCHING.try_with(|depth| depth.set(depth.get() + 1));
    let _leave = Leave;
    panic::catch_unwind(AssertUnwindSafe(body))
}

/// Converts a caught panic payload into an error naming `context` and the panic site; an
/// [`AllocFailure`] becomes a `MemoryError`.
pub fn panic_to_error(context: &str, payload: Box<dyn std::any::Any + Send>) -> Error {
    let location = LAST_PANIC_LOCATION.with(|slot| slot.borrow_mut().take());
    let target = if context.is_empty() {
        std::string::String::new()
    } else {
        format!(" in `{context}`")
    };
    if let Some(failure) = payload.downcast_ref::<AllocFailure>() {
        return Error::new("MemoryError", format!("{failure}{target}"));
    }
    let payload = match payload.downcast::<Error>() {
        // A condition the SDK reports from code that cannot return an error: that error,
        // without the location of the panic (which is the SDK's).
        Ok(err) => {
            if context.is_empty() {
                return *err;
            }
            return Error::new(
                err.kind_name(),
                format!("{} (when calling `{context}`)", err.message()),
            );
        }
        Err(payload) => payload,
    };
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<std::string::String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    };
    match location {
        Some(loc) => {
            let (file, line) = split_location(&loc);
            Error::at(
                "RuntimeError",
                format!("Rust panic{target} at {loc}: {message}"),
                file,
                line,
                context,
            )
        }
        None => Error::runtime_error(format!("Rust panic{target}: {message}")),
    }
}

fn split_location(loc: &str) -> (&str, u32) {
    let mut parts = loc.rsplitn(3, ':');
    let _column = parts.next();
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    (parts.next().unwrap_or(loc), line)
}

/// Panics with `err` where an error must be reported but cannot be returned (a dereference, an
/// infallible constructor): the payload is the error itself, which the FFI boundary raises as
/// it is (not as a "Rust panic at <location>"), and the panic hook prints for a Rust caller.
pub fn panic_with(err: Error) -> ! {
    std::panic::panic_any(err)
}

/// Raises a caught panic as the pending FFI error. Never panics itself: if building the error
/// fails (no memory, a panicking payload destructor), a fixed message is raised instead.
pub fn raise_panic(context: &str, payload: Box<dyn std::any::Any + Send>) {
    let out_of_memory = payload.is::<AllocFailure>();
    let raised = catch(|| panic_to_error(context, payload).set_raised());
    if let Err(again) = raised {
        std::mem::forget(again);
        let (kind, message) = if out_of_memory {
            (c"MemoryError", c"out of memory")
        } else {
            (
                c"RuntimeError",
                c"Rust panic (its message could not be recorded)",
            )
        };
        // SAFETY: static NUL-terminated strings; the runtime copies them.
        unsafe { crate::abi::sys::TVMFFIErrorSetRaisedFromCStr(kind.as_ptr(), message.as_ptr()) };
    }
}

/// Runs `body` where no result slot exists (load-time registration): a panic is reported on
/// stderr and turned into `None`.
pub fn guard_quiet<T>(context: &str, body: impl FnOnce() -> T) -> Option<T> {
    match catch(body) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message =
                catch(|| panic_to_error(context, payload).to_string()).unwrap_or_else(|again| {
                    std::mem::forget(again);
                    format!("Rust panic in `{context}`")
                });
            crate::abi::warn(format_args!("{message}"));
            None
        }
    }
}
