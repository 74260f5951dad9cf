//! [`ErrorKind`]: the exception class an [`Error`](super::Error) raises as in Python.
use std::fmt;

/// The kind of an [`Error`](super::Error): the exception class it raises as in Python, and
/// the `kind` C++ reads (`Error::kind()`).
///
/// `#[non_exhaustive]`: kinds the runtime or another language made that have no variant here
/// are [`ErrorKind::Other`]; a kind gaining a variant later moves out of `Other`, so compare
/// with `==` (which compares names, and also works against a `&str`) rather than matching on
/// `Other`.
///
/// ```
/// use tvm_ffi::{Error, ErrorKind};
/// let err = Error::new(ErrorKind::Key, "no entry `x`");
/// assert_eq!(err.kind(), ErrorKind::Key);
/// assert_eq!(err.kind(), "KeyError");
/// assert_eq!(ErrorKind::from("MyLibError").as_str(), "MyLibError");
/// assert_eq!(ErrorKind::from("ValueError"), ErrorKind::Value);
/// ```
#[non_exhaustive]
#[derive(Clone, Debug)]
pub enum ErrorKind {
    /// `TypeError`: a value of the wrong type (a failed conversion or cast).
    Type,
    /// `ValueError`: a value of the right type but out of range or malformed.
    Value,
    /// `KeyError`: a missing key.
    Key,
    /// `IndexError`: an index out of bounds.
    Index,
    /// `AttributeError`: a missing field, method or attribute.
    Attribute,
    /// `MemoryError`: an allocation that failed.
    Memory,
    /// `RuntimeError`: any other failure (the kind of unknown kinds in Python).
    Runtime,
    /// `AssertionError`: a broken invariant.
    Assertion,
    /// `NotImplementedError`.
    NotImplemented,
    /// Any other kind, by name (`"InternalError"`, a library's own error class, ...).
    Other(String),
}

/// The kinds with a variant, by name.
const NAMED: &[(ErrorKind, &str)] = &[
    (ErrorKind::Type, "TypeError"),
    (ErrorKind::Value, "ValueError"),
    (ErrorKind::Key, "KeyError"),
    (ErrorKind::Index, "IndexError"),
    (ErrorKind::Attribute, "AttributeError"),
    (ErrorKind::Memory, "MemoryError"),
    (ErrorKind::Runtime, "RuntimeError"),
    (ErrorKind::Assertion, "AssertionError"),
    (ErrorKind::NotImplemented, "NotImplementedError"),
];

impl ErrorKind {
    /// The name the runtime stores and Python maps to an exception class (`"TypeError"`).
    pub fn as_str(&self) -> &str {
        match self {
            ErrorKind::Other(name) => name,
            known => NAMED
                .iter()
                .find(|(kind, _)| std::mem::discriminant(kind) == std::mem::discriminant(known))
                .map_or("RuntimeError", |(_, name)| name),
        }
    }
}

impl From<&str> for ErrorKind {
    /// The kind named `name`: its variant, or [`ErrorKind::Other`].
    fn from(name: &str) -> Self {
        NAMED.iter().find(|(_, known)| *known == name).map_or_else(
            || ErrorKind::Other(name.to_owned()),
            |(kind, _)| kind.clone(),
        )
    }
}

impl From<String> for ErrorKind {
    fn from(name: String) -> Self {
        ErrorKind::from(name.as_str())
    }
}

impl From<&ErrorKind> for ErrorKind {
    fn from(kind: &ErrorKind) -> Self {
        kind.clone()
    }
}

impl PartialEq for ErrorKind {
    /// Kinds are equal when their names are (`Other("TypeError".into()) == Type`).
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ErrorKind {}

impl std::hash::Hash for ErrorKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
