//! The lowest layer: the raw C ABI of libtvm_ffi (the `tvm-ffi-sys` crate, named `sys` here
//! so that every layer above reaches the ABI through this module), and the two ways code at the
//! ABI's edge reports what it cannot raise as an error: allocation failure as a panic payload,
//! and a diagnostic line on stderr.
//!
//! # Allocation failure
//!
//! Running out of memory never takes the host down. Allocations the SDK makes on behalf of a
//! call either return an error or, behind an infallible API (`ObjectRef::new`, `String::new`,
//! ...), panic with an [`AllocFailure`] payload, which the `extern "C"` boundary raises as a
//! `MemoryError` in the caller. Code that allocates on its own should reserve fallibly
//! (`Vec::try_reserve_exact(n)?`: `TryReserveError` converts into a `MemoryError`).
//!
//! # Diagnostics
//!
//! Diagnostics the runtime prints itself: one line to stderr, written where nothing can be
//! raised (object deleters, load-time registration).
//!
//! `eprintln!` panics when stderr is closed, and these lines are written where a panic must
//! not happen, so write failures are ignored.

pub use tvm_ffi_sys as sys;

/// The payload of the panic that an infallible constructor raises when memory runs out; the
/// FFI boundary turns it into a `MemoryError` naming the size.
///
/// ```
/// use tvm_ffi::{AllocFailure, Error, ErrorKind};
/// let failure = AllocFailure { bytes: 64 };
/// assert_eq!(failure.to_string(), "cannot allocate 64 bytes: out of memory");
/// // `ObjectRef::try_new` returns it; `?` makes it a `MemoryError`.
/// let error = Error::from(failure);
/// assert_eq!(error.kind(), ErrorKind::Memory);
/// assert!(error.message().contains("64 bytes"), "{}", error.message());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocFailure {
    /// The size of the allocation that failed, in bytes.
    pub bytes: usize,
}

impl AllocFailure {
    /// Unwinds with an `AllocFailure` payload (no allocation of a message on the way).
    #[cold]
    #[inline(never)]
    pub(crate) fn raise(bytes: usize) -> ! {
        std::panic::panic_any(AllocFailure { bytes })
    }
}

impl std::fmt::Display for AllocFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot allocate {} bytes: out of memory", self.bytes)
    }
}

/// Writes `tvm-ffi: <message>` and a newline to stderr, ignoring failures.
pub(crate) fn warn(message: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "tvm-ffi: {message}");
}

/// Runs `body` where no panic may escape (a deleter, an `extern "C"` entry point): `false` when
/// it panicked. The payload is dropped here; one whose own `Drop` panics again is leaked with
/// that second payload.
pub(crate) fn catch_discarding(body: impl FnOnce()) -> bool {
    let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) else {
        return true;
    };
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)));
    if let Err(again) = dropped {
        std::mem::forget(again);
    }
    false
}
