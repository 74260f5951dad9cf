//! Diagnostics the runtime prints itself: one line to stderr, written where nothing can be
//! raised (object deleters, load-time registration).
//!
//! `eprintln!` panics when stderr is closed, and these lines are written where a panic must
//! not happen, so write failures are ignored.

/// Writes `tvm-ffi: <message>` and a newline to stderr, ignoring failures.
pub(crate) fn warn(message: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "tvm-ffi: {message}");
}
