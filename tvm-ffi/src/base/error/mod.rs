//! [`Error`]: the runtime's error object (kind, message, backtrace), and how errors and panics
//! cross the ABI.
use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::abi::sys;
use crate::abi::AllocFailure;
use crate::base::object::builtin::{AnyObject, ErrorObj};
use crate::base::object::ObjectRef;

mod kind;
pub(crate) mod panic;

pub use kind::ErrorKind;
pub use panic::report_caught_panics;

/// `Result` with [`Error`] as the default error type.
///
/// ```
/// use tvm_ffi::{Error, Result};
/// fn parse(text: &str) -> Result<i64> {
///     text.parse().map_err(|_| Error::value_error(format!("not a number: {text:?}")))
/// }
/// assert_eq!(parse("42").unwrap(), 42);
/// assert_eq!(parse("x").unwrap_err().to_string(), r#"ValueError: not a number: "x""#);
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error backed by the runtime's `ffi.Error` object.
///
/// The [`kind`](Error::kind) selects the exception class in Python (`ValueError`, `TypeError`,
/// `KeyError`, `IndexError`, `AttributeError`, `RuntimeError` ...); unknown kinds become
/// `RuntimeError`. `Error` implements [`std::error::Error`]; `?` converts the common standard
/// errors into it (see [`Error::from_std`]), and a crate's own error type converts through its
/// own `impl From<MyError> for tvm_ffi::Error`.
///
/// ```
/// use tvm_ffi::{Error, ErrorKind};
/// #[derive(Debug)]
/// struct Overflow;
/// impl From<Overflow> for Error {
///     fn from(_: Overflow) -> Error {
///         Error::new(ErrorKind::Value, "overflow")
///     }
/// }
/// fn double(x: i64) -> tvm_ffi::Result<i64> {
///     Ok(x.checked_mul(2).ok_or(Overflow)?)
/// }
/// let err = double(i64::MAX).unwrap_err();
/// assert_eq!((err.kind(), err.message()), (ErrorKind::Value, "overflow"));
/// let boxed: Box<dyn std::error::Error + Send + Sync> = err.into();
/// assert_eq!(boxed.to_string(), "ValueError: overflow");
/// ```
///
/// The backtrace is read once, when the error is made or received in Rust, and kept: the runtime
/// rewrites a shared error's backtrace in place, without synchronisation, each time Python
/// re-raises it (`update_backtrace`), so reading the object's backtrace later, from a clone on
/// another thread, would race with that rewrite and read freed memory.
#[derive(Clone)]
pub struct Error {
    obj: ObjectRef<ErrorObj>,
    /// The backtrace when Rust made or received the error (`None`: empty).
    backtrace: Option<Arc<std::string::String>>,
}

impl Error {
    /// Creates an error with an empty backtrace; `kind` is an [`ErrorKind`] or its name.
    ///
    /// ```
    /// use tvm_ffi::{Error, ErrorKind};
    /// let err = Error::new(ErrorKind::Key, "no entry `x`");
    /// assert_eq!((err.kind(), err.message()), (ErrorKind::Key, "no entry `x`"));
    /// assert_eq!(Error::new("MyCustomError", "?").kind().as_str(), "MyCustomError"); // a name
    /// ```
    pub fn new(kind: impl Into<ErrorKind>, message: impl AsRef<str>) -> Error {
        Error::with_backtrace(kind, message.as_ref(), "")
    }

    /// Creates an error whose backtrace names a Rust source location, in the runtime's format
    /// (`  File "<file>", line <n>, in <function>`). Used by [`bail!`](crate::bail).
    pub fn at(
        kind: impl Into<ErrorKind>,
        message: impl AsRef<str>,
        file: &str,
        line: u32,
        function: &str,
    ) -> Error {
        let backtrace = call_site::frame(file, line, function);
        Error::with_backtrace(kind, message.as_ref(), &backtrace)
    }

    /// Creates an error with an explicit backtrace (most recent call first).
    pub fn with_backtrace(kind: impl Into<ErrorKind>, message: &str, backtrace: &str) -> Error {
        Error::with_cause_and_extra_context(kind, message, backtrace, None, None)
    }

    /// Creates an error that records the error which caused it (`cause`, read back with
    /// [`Error::cause_chain`]) and an object of extra context (read back with
    /// [`Error::extra_context`]), as C++'s `Error(kind, message, backtrace, cause_chain,
    /// extra_context)` does. Both are shared, not copied: the new error holds a reference.
    ///
    /// ```
    /// use tvm_ffi::{Array, Error, ErrorKind};
    /// let cause = Error::value_error("bad literal `0x`");
    /// let context = Array::new([3i64, 4]).unwrap().into_object_ref().into_object();
    /// let err = Error::with_cause_and_extra_context(
    ///     ErrorKind::Runtime, "parsing failed", "", Some(&cause), Some(&context),
    /// );
    /// assert_eq!(err.cause_chain().unwrap().message(), "bad literal `0x`");
    /// assert!(err.extra_context().unwrap().ptr_eq(&context));
    /// ```
    pub fn with_cause_and_extra_context(
        kind: impl Into<ErrorKind>,
        message: &str,
        backtrace: &str,
        cause: Option<&Error>,
        extra_context: Option<&ObjectRef<AnyObject>>,
    ) -> Error {
        let backtrace_text = backtrace;
        let kind = kind.into();
        let kind = sys::TVMFFIByteArray::from_bytes(kind.as_str().as_bytes());
        let message = sys::TVMFFIByteArray::from_bytes(message.as_bytes());
        let backtrace = sys::TVMFFIByteArray::from_bytes(backtrace.as_bytes());
        let handle = |obj: Option<NonNull<sys::TVMFFIObject>>| {
            obj.map_or(std::ptr::null_mut(), |ptr| {
                ptr.as_ptr() as sys::TVMFFIObjectHandle
            })
        };
        let cause = handle(cause.map(|cause| cause.obj.as_raw()));
        let extra_context = handle(extra_context.map(ObjectRef::as_raw));
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: valid byte arrays and output slot; the runtime copies the bytes. `cause` is
        // null or an ffi.Error, `extra_context` null or an object, both kept alive by the
        // caller's references for the call; the runtime takes references of its own.
        let rc = unsafe {
            sys::TVMFFIErrorCreateWithCauseAndExtraContext(
                &kind,
                &message,
                &backtrace,
                cause,
                extra_context,
                &mut out,
            )
        };
        let ptr = NonNull::new(out as *mut sys::TVMFFIObject);
        match (rc, ptr) {
            (0, Some(ptr)) => Error {
                // SAFETY: a fresh ffi.Error with one strong reference, now ours.
                obj: unsafe { ObjectRef::from_raw(ptr) },
                backtrace: snapshot_text(backtrace_text),
            },
            // The runtime only fails to create an error when it cannot allocate it.
            _ => AllocFailure::raise(message.size + backtrace.size),
        }
    }

    /// The error that caused this one, if it was made with one
    /// ([`Error::with_cause_and_extra_context`], C++'s `cause_chain`).
    pub fn cause_chain(&self) -> Option<Error> {
        // SAFETY: the cell is owned by the error object we hold, and its cause is set once, when
        // the error is made (the runtime never rewrites it).
        let cause = NonNull::new(unsafe { (*self.cell()).cause_chain } as *mut sys::TVMFFIObject)?;
        // SAFETY: a live object the error holds a reference to; we take our own.
        let cause = unsafe { ObjectRef::<AnyObject>::from_raw_borrowed(cause) };
        // A C caller may have passed any object as the cause: only an ffi.Error is an `Error`.
        cause.downcast::<ErrorObj>().map(Error::received)
    }

    /// The object of extra context this error carries, if any (C++'s `extra_context`).
    pub fn extra_context(&self) -> Option<ObjectRef<AnyObject>> {
        // SAFETY: as in `cause_chain`: set once, when the error is made.
        let context =
            NonNull::new(unsafe { (*self.cell()).extra_context } as *mut sys::TVMFFIObject)?;
        // SAFETY: a live object the error holds a reference to; we take our own.
        Some(unsafe { ObjectRef::from_raw_borrowed(context) })
    }

    /// `ValueError` with `message`.
    pub fn value_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Value, message)
    }
    /// `TypeError` with `message`.
    pub fn type_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Type, message)
    }
    /// `RuntimeError` with `message`.
    pub fn runtime_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Runtime, message)
    }
    /// `KeyError` with `message`.
    pub fn key_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Key, message)
    }
    /// `IndexError` with `message`.
    pub fn index_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Index, message)
    }
    /// `AttributeError` with `message`.
    pub fn attribute_error(message: impl AsRef<str>) -> Error {
        Error::new(ErrorKind::Attribute, message)
    }

    /// The runtime's error cell. Only its kind and message, which never change, may be read
    /// through this reference; the backtrace is read once, in `received`.
    fn cell(&self) -> *const sys::TVMFFIErrorCell {
        self.obj.cell.get()
    }

    /// The error kind ([`ErrorKind::Value`] for a `ValueError`, ...); compares with `==` to
    /// a kind or its name.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from(self.kind_name())
    }

    /// The name of the kind, as the runtime stores it.
    fn kind_name(&self) -> &str {
        // SAFETY: the cell's byte arrays are owned by the error object we hold; the kind never
        // changes.
        std::str::from_utf8(unsafe { (*self.cell()).kind.as_bytes() }).unwrap_or("RuntimeError")
    }

    /// The message.
    pub fn message(&self) -> &str {
        // SAFETY: as in `kind`.
        let bytes = unsafe { (*self.cell()).message.as_bytes() };
        std::str::from_utf8(bytes).unwrap_or("<message is not UTF-8>")
    }

    /// The backtrace, most recent call first, one `  File "...", line N, in f` line per frame.
    ///
    /// The backtrace as it was when the error was made or received in Rust, plus the frames
    /// Rust appended since ([`Error::append_backtrace`]). Frames that other holders (Python
    /// re-raising the error) add to the shared object later are not seen: the runtime rewrites
    /// that storage in place without synchronisation, so Rust never reads it again.
    pub fn backtrace(&self) -> std::string::String {
        self.backtrace.as_deref().cloned().unwrap_or_default()
    }

    /// An error holding `obj`, with its backtrace read now.
    ///
    /// The read is sound when nothing rewrites the backtrace meanwhile: errors reach Rust
    /// right after they are made or raised (a call's raised error, a field or argument), not
    /// while a Python thread re-raises the same object.
    fn received(obj: ObjectRef<ErrorObj>) -> Error {
        // SAFETY: the cell's byte arrays are owned by the error object we hold; the bytes are
        // copied at once (see above for the rewrite this does not race with).
        let bytes = unsafe { (*obj.cell.get()).backtrace.as_bytes() };
        let backtrace = snapshot_text(&std::string::String::from_utf8_lossy(bytes));
        Error { obj, backtrace }
    }

    /// Appends a frame to the backtrace (as errors travel up the stack).
    ///
    /// The runtime updates its error object in place, so this needs the only reference to it:
    /// when the error object is shared (a clone exists), `self` first gets a copy of its own.
    pub fn append_backtrace(&mut self, frame: &str) {
        if self.obj.strong_count() != 1 || self.obj.weak_count() != 1 {
            *self = Error::with_cause_and_extra_context(
                self.kind_name(),
                self.message(),
                &self.backtrace(),
                self.cause_chain().as_ref(),
                self.extra_context().as_ref(),
            );
        }
        // SAFETY: `self` holds the only reference (checked above): nothing else can rewrite
        // the cell meanwhile.
        if let Some(update) = unsafe { (*self.cell()).update_backtrace } {
            let frame_bytes = sys::TVMFFIByteArray::from_bytes(frame.as_bytes());
            // SAFETY: the runtime's own update function on its own error object, of which
            // `self` holds the only reference (checked above), so no `&str` into the old
            // backtrace can exist (`backtrace` returns copies).
            unsafe {
                update(
                    self.obj.as_raw().as_ptr() as _,
                    &frame_bytes,
                    sys::kTVMFFIBacktraceUpdateModeAppend,
                )
            };
        }
        let mut text = self.backtrace();
        text.push_str(frame);
        self.backtrace = snapshot_text(&text);
    }

    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<ErrorObj> {
        &self.obj
    }

    /// Wraps an error object (reading its backtrace now, see [`Error::backtrace`]).
    pub fn from_object_ref(obj: ObjectRef<ErrorObj>) -> Error {
        Error::received(obj)
    }

    /// Unwraps into the error object.
    pub fn into_object_ref(self) -> ObjectRef<ErrorObj> {
        self.obj
    }

    /// Takes the error the runtime raised on this thread (after a call returned non-zero).
    pub fn take_raised() -> Option<Error> {
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: valid output slot; ownership of the error moves to us.
        unsafe { sys::TVMFFIErrorMoveFromRaised(&mut out) };
        // SAFETY: a non-null result is an owned ffi.Error.
        NonNull::new(out as *mut sys::TVMFFIObject)
            .map(|ptr| Error::received(unsafe { ObjectRef::from_raw(ptr) }))
    }

    /// The error for a non-zero return code of a runtime call.
    pub(crate) fn from_return_code(rc: i32) -> Error {
        match Error::take_raised() {
            Some(err) => err,
            None if rc == -2 => Error::new(
                "FrontendError",
                "the frontend (e.g. Python) raised an error, such as KeyboardInterrupt",
            ),
            None => Error::runtime_error(format!(
                "libtvm_ffi call failed with code {rc} and no error set"
            )),
        }
    }

    /// Hands the error to the runtime as this thread's raised error; the caller then returns -1.
    pub fn set_raised(self) {
        // SAFETY: the runtime takes its own reference; ours is released on drop.
        unsafe { sys::TVMFFIErrorSetRaised(self.obj.as_raw().as_ptr() as _) };
    }
}

/// The kept backtrace: `None` for an empty one (most errors made in Rust), no allocation.
fn snapshot_text(text: &str) -> Option<Arc<std::string::String>> {
    (!text.is_empty()).then(|| Arc::new(text.to_owned()))
}

/// An allocation that failed (what [`ObjectRef::try_new`](crate::ObjectRef::try_new) returns)
/// is a `MemoryError` naming the size.
impl From<AllocFailure> for Error {
    fn from(failure: AllocFailure) -> Error {
        Error::new(ErrorKind::Memory, failure.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind_name(), self.message())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind_name())
            .field("message", &self.message())
            .field("backtrace", &self.backtrace())
            .finish()
    }
}

impl PartialEq for Error {
    /// Errors compare by kind and message.
    fn eq(&self, other: &Self) -> bool {
        self.kind_name() == other.kind_name() && self.message() == other.message()
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The error for a standard error: the kind Python programmers expect for the common ones
    /// (`ValueError` for parse and conversion errors, `MemoryError` for a failed
    /// `try_reserve`), else `RuntimeError`; the message is the error's `Display` followed by
    /// its `source()` chain. `?` applies it to the standard library's errors; for another
    /// crate's error, `.map_err(|e| Error::from_std(&e))?`, or
    /// [`raise_as`](ResultExt::raise_as) to pick the kind.
    ///
    /// ```
    /// fn config(text: &str) -> tvm_ffi::Result<i64> {
    ///     let value: i64 = text.trim().parse()?; // ParseIntError -> ValueError
    ///     Ok(value)
    /// }
    /// assert_eq!(config("x").unwrap_err().kind(), "ValueError");
    /// ```
    pub fn from_std(err: &(dyn std::error::Error + 'static)) -> Error {
        Error::new(std_error_kind(err), std_error_message(err))
    }
}

/// `?` on the standard library's errors (see [`Error::from_std`]).
macro_rules! from_std_errors {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for Error {
            fn from(err: $ty) -> Error {
                Error::from_std(&err)
            }
        }
    )*};
}

from_std_errors!(
    std::num::ParseIntError,
    std::num::ParseFloatError,
    std::num::TryFromIntError,
    std::str::Utf8Error,
    std::string::FromUtf8Error,
    std::string::FromUtf16Error,
    std::str::ParseBoolError,
    std::char::ParseCharError,
    std::char::CharTryFromError,
    std::ffi::NulError,
    std::array::TryFromSliceError,
    std::collections::TryReserveError,
    std::io::Error,
    std::fmt::Error,
    std::env::VarError,
    std::time::SystemTimeError,
    std::sync::mpsc::RecvError,
);

impl From<Box<dyn std::error::Error + Send + Sync + 'static>> for Error {
    fn from(err: Box<dyn std::error::Error + Send + Sync + 'static>) -> Error {
        match err.downcast::<Error>() {
            Ok(err) => *err,
            Err(err) => Error::from_std(&*err),
        }
    }
}

/// The kind a standard error raises as.
fn std_error_kind(err: &(dyn std::error::Error + 'static)) -> ErrorKind {
    if err.is::<std::collections::TryReserveError>() {
        return ErrorKind::Memory;
    }
    let value_errors = [
        err.is::<std::num::ParseIntError>(),
        err.is::<std::num::ParseFloatError>(),
        err.is::<std::num::TryFromIntError>(),
        err.is::<std::str::Utf8Error>(),
        err.is::<std::string::FromUtf8Error>(),
        err.is::<std::string::FromUtf16Error>(),
        err.is::<std::str::ParseBoolError>(),
        err.is::<std::char::ParseCharError>(),
        err.is::<std::char::CharTryFromError>(),
        err.is::<std::ffi::NulError>(),
        err.is::<std::array::TryFromSliceError>(),
    ];
    if value_errors.contains(&true) {
        ErrorKind::Value
    } else {
        ErrorKind::Runtime
    }
}

/// `Display` of the error, then of each `source()`, joined by `": "`.
fn std_error_message(err: &(dyn std::error::Error + 'static)) -> std::string::String {
    let mut message = if err.is::<std::collections::TryReserveError>() {
        format!("cannot allocate: {err}")
    } else {
        err.to_string()
    };
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// Picks the kind an error raises as: `result.raise_as("KeyError")?`.
///
/// ```
/// use tvm_ffi::ResultExt;
/// fn lookup(map: &std::collections::HashMap<String, i64>, key: &str) -> tvm_ffi::Result<i64> {
///     map.get(key).copied().ok_or(format!("no entry `{key}`")).raise_as("KeyError")
/// }
/// let err = lookup(&Default::default(), "x").unwrap_err();
/// assert_eq!((err.kind(), err.message()), (tvm_ffi::ErrorKind::Key, "no entry `x`"));
/// ```
pub trait ResultExt<T> {
    /// The error as an [`Error`] of `kind` (an [`ErrorKind`] or its name) whose message is
    /// the error's `Display`.
    fn raise_as(self, kind: impl Into<ErrorKind>) -> Result<T>;
}

impl<T, E: fmt::Display> ResultExt<T> for std::result::Result<T, E> {
    fn raise_as(self, kind: impl Into<ErrorKind>) -> Result<T> {
        self.map_err(|err| Error::new(kind, err.to_string()))
    }
}

/// Returns early with an [`Error`] of the given kind, recording the file, the line and the
/// function in its backtrace (`  File "src/lib.rs", line 3, in my_crate::parse`).
///
/// ```
/// fn parse(text: &str) -> tvm_ffi::Result<i64> {
///     if text.is_empty() {
///         tvm_ffi::bail!(ValueError, "cannot parse an empty string");
///     }
///     text.parse::<i64>().map_err(Into::into)
/// }
/// let err = parse("").unwrap_err();
/// assert!(err.backtrace().ends_with("::parse\n"), "{}", err.backtrace());
/// ```
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($fmt:tt)+) => {
        return ::core::result::Result::Err($crate::Error::at(
            ::core::stringify!($kind),
            ::std::format!($($fmt)+),
            ::core::file!(),
            ::core::line!(),
            {
                // Rust has no macro naming the enclosing function: the path of an item
                // declared inside it names it.
                fn __tvm_ffi_here() {}
                $crate::__private::enclosing_function(::core::any::type_name_of_val(
                    &__tvm_ffi_here,
                ))
            },
        )
        .into())
    };
}

/// Adds the caller's place to the backtrace of the error a `Result` carries, as one frame in
/// the runtime's form (`  File "src/lib.rs", line 9, in my_crate::outer`, the function named as
/// [`bail!`] names it), and passes an `Ok` through; any error that converts into [`Error`] is
/// converted first. Upstream's `attach_context!`.
///
/// ```
/// fn inner() -> tvm_ffi::Result<i64> {
///     tvm_ffi::bail!(ValueError, "bad input")
/// }
/// fn outer() -> tvm_ffi::Result<i64> {
///     tvm_ffi::attach_context!(inner())
/// }
/// let err = outer().unwrap_err();
/// assert_eq!(err.message(), "bad input");
/// let backtrace = err.backtrace();
/// let frames: Vec<&str> = backtrace.lines().collect();
/// assert!(frames[0].ends_with("::inner") && frames[1].ends_with("::outer"), "{frames:?}");
/// assert_eq!(tvm_ffi::attach_context!(Ok::<i64, tvm_ffi::Error>(3)).unwrap(), 3);
/// ```
#[macro_export]
macro_rules! attach_context {
    ($result:expr) => {
        $crate::__private::attach_context($result, ::core::file!(), ::core::line!(), {
            fn __tvm_ffi_here() {}
            $crate::__private::enclosing_function(::core::any::type_name_of_val(&__tvm_ffi_here))
        })
    };
}

/// What [`bail!`] and [`attach_context!`] reach through `__private` (a module of its own, so
/// that the functions have no second public path).
pub(crate) mod call_site {
    use super::Error;

    /// One backtrace frame in the runtime's form.
    pub(crate) fn frame(file: &str, line: u32, function: &str) -> std::string::String {
        format!("  File \"{file}\", line {line}, in {function}\n")
    }

    /// [`attach_context!`](crate::attach_context): the error, converted, with the frame
    /// appended.
    pub fn attach_context<T, E: Into<Error>>(
        result: Result<T, E>,
        file: &str,
        line: u32,
        function: &str,
    ) -> super::Result<T> {
        result.map_err(|error| {
            let mut error = error.into();
            error.append_backtrace(&frame(file, line, function));
            error
        })
    }

    /// The path of the function that declares the item whose type name is `item_path`
    /// (`my_crate::parse::number::__tvm_ffi_here` gives `my_crate::parse::number`; closures'
    /// `{{closure}}` segments are dropped): what [`bail!`] names as the raising function.
    pub fn enclosing_function(item_path: &str) -> &str {
        let mut path = item_path
            .rsplit_once("::")
            .map_or(item_path, |(outer, _)| outer);
        while let Some(outer) = path.strip_suffix("::{{closure}}") {
            path = outer;
        }
        path
    }
}

/// Returns early with an [`Error`] of the given kind unless the condition holds.
///
/// ```
/// fn check(n: i64) -> tvm_ffi::Result<()> {
///     tvm_ffi::ensure!(n >= 0, ValueError, "n must be non-negative, got {n}");
///     Ok(())
/// }
/// ```
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($fmt:tt)+) => {
        if !($cond) {
            $crate::bail!($kind, $($fmt)+);
        }
    };
}
