//! Panics at the `extern "C"` boundary: a caught panic becomes a `RuntimeError` whose message
//! says it was a panic and where, so nothing unwinds into C. The boundary itself (turning a
//! function's `Result<Any>` into the ABI's result slot) is `function::boundary`.
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use crate::error::Error;

thread_local! {
    static LAST_PANIC_LOCATION: RefCell<Option<std::string::String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once) a panic hook that remembers where a panic happened, then defers to the
/// previous hook (so the usual message still reaches stderr).
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if let Some(loc) = info.location() {
                let text = format!("{}:{}:{}", loc.file(), loc.line(), loc.column());
                LAST_PANIC_LOCATION.with(|slot| *slot.borrow_mut() = Some(text));
            }
            previous(info);
        }));
    });
}

/// Converts a caught panic payload into an error naming `context` and the panic site.
pub fn panic_to_error(context: &str, payload: Box<dyn std::any::Any + Send>) -> Error {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<std::string::String>() {
        s.clone()
    } else {
        "<non-string panic payload>".to_string()
    };
    let location = LAST_PANIC_LOCATION.with(|slot| slot.borrow_mut().take());
    let target = if context.is_empty() {
        std::string::String::new()
    } else {
        format!(" in `{context}`")
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

/// Raises a caught panic as the pending FFI error. Never panics itself: if building the error
/// fails (no memory, a panicking payload destructor), a fixed message is raised instead.
pub fn raise_panic(context: &str, payload: Box<dyn std::any::Any + Send>) {
    let raised = panic::catch_unwind(AssertUnwindSafe(|| {
        panic_to_error(context, payload).set_raised()
    }));
    if raised.is_err() {
        // SAFETY: static NUL-terminated strings; the runtime copies them.
        unsafe {
            crate::sys::TVMFFIErrorSetRaisedFromCStr(
                c"RuntimeError".as_ptr(),
                c"Rust panic (its message could not be recorded)".as_ptr(),
            )
        };
    }
}

/// Runs `body` where no result slot exists (deleters, load-time registration): a panic is
/// reported on stderr and turned into `None`.
pub fn guard_quiet<T>(context: &str, body: impl FnOnce() -> T) -> Option<T> {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let message = panic::catch_unwind(AssertUnwindSafe(|| {
                panic_to_error(context, payload).to_string()
            }))
            .unwrap_or_else(|_| format!("Rust panic in `{context}`"));
            crate::diagnostic::warn(format_args!("{message}"));
            None
        }
    }
}
