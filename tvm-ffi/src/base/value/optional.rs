//! [`Optional<T>`]: an optional value stored as the 16-byte `Any`, as C++ stores
//! `ffi::Optional<T>` of a non-object `T` (`Optional<int64_t>`, `Optional<String>`, ...).
use std::fmt;
use std::marker::PhantomData;

use super::any::{Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::abi::sys::TVMFFIAny;

/// An optional value stored as the runtime's 16-byte `Any` (`None`, or a `T`), the layout of C++
/// `ffi::Optional<T>` for values that are not object references.
///
/// As an object field it is what `Option<T>` cannot be: a layout C++ and Python agree on (an
/// all-zero `Optional` is `None`). Optional *object* fields are plain `Option<ObjectRef<T>>`,
/// which is a nullable pointer, as in C++.
///
/// ```
/// use tvm_ffi::Optional;
/// let mut limit: Optional<i64> = Optional::none();
/// assert_eq!(limit.get(), None);
/// limit = Some(8).into();
/// assert_eq!(limit.get(), Some(8));
/// let name: Optional<tvm_ffi::String> = Optional::some("a longer name".into());
/// assert_eq!(name.get().as_deref(), Some("a longer name"));
/// ```
#[repr(transparent)]
pub struct Optional<T> {
    /// Invariant: `None`, or a value that converts to `T`.
    value: Any,
    _value: PhantomData<fn() -> T>,
}

impl<T> Optional<T> {
    /// No value.
    pub const fn none() -> Self {
        Optional {
            value: Any::none(),
            _value: PhantomData,
        }
    }

    /// Whether there is a value.
    pub fn is_some(&self) -> bool {
        !self.value.is_none()
    }

    /// Whether there is no value.
    pub fn is_none(&self) -> bool {
        self.value.is_none()
    }

    /// The stored value as an `Any` (`None` when empty).
    pub fn as_any(&self) -> &Any {
        &self.value
    }

    /// The raw 16-byte value.
    pub fn as_raw(&self) -> &TVMFFIAny {
        self.value.as_raw()
    }
}

impl<T: IntoAny> Optional<T> {
    /// A value.
    pub fn some(value: T) -> Self {
        Optional {
            value: value.into_any(),
            _value: PhantomData,
        }
    }
}

impl<T: IntoAny> Optional<T> {
    /// Replaces the value (`None` empties it), releasing the old one.
    ///
    /// ```
    /// use tvm_ffi::Optional;
    /// let mut limit = Optional::some(8i64);
    /// limit.set(None);
    /// assert!(limit.is_none());
    /// limit.set(Some(-7));
    /// assert_eq!(limit.get(), Some(-7));
    /// ```
    pub fn set(&mut self, value: Option<T>) {
        *self = Optional::from(value);
    }
}

impl Optional<super::string::String> {
    /// The string, borrowed in place (no copy), if any.
    ///
    /// ```
    /// use tvm_ffi::{Optional, String};
    /// let name = Optional::some(String::from("a longer name"));
    /// assert_eq!(name.as_str(), Some("a longer name"));
    /// assert_eq!(Optional::<String>::none().as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        // The invariant: a present value is a string.
        self.value.checked_cast::<&str>()
    }
}

impl<T: for<'a> FromAny<'a>> Optional<T> {
    /// A copy of the value, if any.
    pub fn get(&self) -> Option<T> {
        if self.value.is_none() {
            None
        } else {
            // The invariant: a present value converts to `T`.
            self.value.checked_cast::<T>()
        }
    }
}

impl<T> Default for Optional<T> {
    fn default() -> Self {
        Self::none()
    }
}

impl<T> Clone for Optional<T> {
    fn clone(&self) -> Self {
        Optional {
            value: self.value.clone(),
            _value: PhantomData,
        }
    }
}

impl<T: IntoAny> From<Option<T>> for Optional<T> {
    fn from(value: Option<T>) -> Self {
        match value {
            Some(v) => Optional::some(v),
            None => Optional::none(),
        }
    }
}

impl<T: IntoAny> From<T> for Optional<T> {
    fn from(value: T) -> Self {
        Optional::some(value)
    }
}

impl<T: for<'a> FromAny<'a>> From<Optional<T>> for Option<T> {
    fn from(value: Optional<T>) -> Self {
        value.get()
    }
}

impl<T: for<'a> FromAny<'a> + PartialEq> PartialEq for Optional<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: for<'a> FromAny<'a> + fmt::Debug> fmt::Debug for Optional<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl<T: TypeSchema> TypeSchema for Optional<T> {
    fn type_str() -> String {
        format!("Optional<{}>", T::type_str())
    }
    fn type_schema() -> String {
        format!(r#"{{"type":"Optional","args":[{}]}}"#, T::type_schema())
    }
}

impl<T> IntoAny for Optional<T> {
    fn into_any(self) -> Any {
        self.value
    }
}

impl<'a, T: for<'b> FromAny<'b> + IntoAny + TypeSchema> FromAny<'a> for Optional<T> {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if view.is_none() {
            return Some(Optional::none());
        }
        // Stored in `T`'s own form (an int given for a float is stored as the float), as C++
        // converts on assignment.
        T::from_any(view).map(Optional::some)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        T::describe_mismatch(view)
    }
}
