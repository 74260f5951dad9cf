//! What the runtime calls to make objects of Rust-defined types: the creator (an empty object
//! the runtime then fills through the setters), field defaults, the explicit constructor's
//! result, and `__ffi_shallow_copy__`.
use std::ffi::c_int;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::construction;
use super::field::{raise, FieldValue};
use crate::error::panic::{catch, raise_panic};
use crate::error::{Error, Result};
use crate::function::Function;
use crate::object::builtin::Object;
use crate::object::{self, ObjectRef, ObjectType, RustObject};
use crate::sys::{self, TVMFFIObject};
use crate::value::{Any, Bytes, String, TryIntoAny};

/// A Rust-defined object type with reflected fields; implemented by `#[derive(Object)]`.
///
/// # Safety
/// `empty_payload` must build a payload whose reflected fields match the registered
/// descriptors.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI object type",
    label = "`#[ffi(base)]` needs a `#[derive(Object)]` struct (or an `external` declaration)",
    note = "the base field holds the parent type's payload; declare the parent with `#[derive(Object)]`"
)]
pub unsafe trait Reflected: ObjectType {
    /// `final`: no subtypes allowed.
    const IS_FINAL: bool;
    /// Whether every field has an empty value, so the runtime gets a creator.
    const CAN_CREATE: bool;
    /// The payload of a freshly created object, before the runtime sets its fields.
    fn empty_payload() -> Option<Self>;
}

/// The creator the runtime calls to make an empty object (auto-init, JSON/pickle loading).
///
/// # Safety
/// Called by the runtime with a writable `out`.
pub unsafe extern "C" fn create_object<T: Reflected>(out: *mut sys::TVMFFIObjectHandle) -> c_int {
    let outcome = catch(|| -> Result<NonNull<TVMFFIObject>> {
        let payload = T::empty_payload().ok_or_else(|| {
            Error::type_error(format!(
                "`{}` has fields without an empty value and cannot be created empty",
                T::TYPE_KEY
            ))
        })?;
        Ok(object::alloc_object(
            payload,
            T::runtime_type().index,
            construction::OPEN,
        ))
    });
    match outcome {
        Ok(Ok(ptr)) => {
            // SAFETY: `out` is writable; the caller takes the one reference.
            unsafe { out.write(ptr.as_ptr() as sys::TVMFFIObjectHandle) };
            0
        }
        Ok(Err(err)) => raise(err),
        Err(payload) => {
            raise_panic(T::TYPE_KEY, payload);
            -1
        }
    }
}

/// The value of `default = <expr>`, converted to the field's value type (string literals
/// become `tvm_ffi::String`).
#[diagnostic::on_unimplemented(
    message = "the default `{Self}` does not fit a field of type `{T}`",
    label = "give a value of the field's type (`{T}`)",
    note = "for a value computed at construction time, use `default_factory = <fn path>`"
)]
pub trait IntoDefault<T> {
    /// Converts.
    fn into_default(self) -> T;
}
impl<T> IntoDefault<T> for T {
    fn into_default(self) -> T {
        self
    }
}
impl IntoDefault<String> for &str {
    fn into_default(self) -> String {
        String::from(self)
    }
}
impl IntoDefault<Bytes> for &[u8] {
    fn into_default(self) -> Bytes {
        Bytes::from(self)
    }
}

/// Converts a `default = <expr>` value for field type `F` into the `Any` the runtime stores.
pub fn default_value<F: FieldValue>(value: impl IntoDefault<F::Value>) -> Any {
    match value.into_default().try_into_any() {
        Ok(any) => any,
        Err(err) => panic!("invalid field default: {}", err.message()),
    }
}

/// Wraps a `default_factory = path` function as the `() -> Any` function the runtime calls.
pub fn default_factory<F: FieldValue>(factory: fn() -> F::Value) -> Any {
    Any::new(Function::from_packed_named(
        "default factory",
        move |_args| factory().try_into_any(),
    ))
}

/// Converts what an `#[ffi(init)]` function returns into the new object.
#[diagnostic::on_unimplemented(
    message = "an `#[ffi(init)]` constructor of `{T}` cannot return `{Self}`",
    label = "return `Self`, `ObjectRef<Self>` or a `Result` of either",
    note = "the constructor makes the new object; errors go through `Result<Self, E>` with `E: Into<tvm_ffi::Error>`"
)]
pub trait InitResult<T> {
    /// The object, or the constructor's error.
    fn into_object(self) -> Result<ObjectRef<Object>>;
}
impl<T: RustObject> InitResult<T> for T {
    fn into_object(self) -> Result<ObjectRef<Object>> {
        Ok(ObjectRef::new(self).into_object())
    }
}
impl<T: ObjectType> InitResult<T> for ObjectRef<T> {
    fn into_object(self) -> Result<ObjectRef<Object>> {
        Ok(self.into_object())
    }
}
impl<T, R: InitResult<T>, E: Into<Error>> InitResult<T> for std::result::Result<R, E> {
    fn into_object(self) -> Result<ObjectRef<Object>> {
        self.map_err(Into::into)?.into_object()
    }
}

/// Converts an `#[ffi(init)]` function's result into the value returned to the caller.
pub fn init_into_any<T, R: InitResult<T>>(result: R) -> Result<Any> {
    result.into_object().map(Any::new)
}

/// Finds `__ffi_shallow_copy__` support by autoref specialisation: types that are `Clone`
/// get a copy function, others none. Used as `(&&ShallowCopyProbe::<T>::new()).shallow_copy()`.
pub struct ShallowCopyProbe<T>(PhantomData<T>);
impl<T> ShallowCopyProbe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        ShallowCopyProbe(PhantomData)
    }
}
impl<T> Default for ShallowCopyProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}
/// Selected when the payload is `Clone`.
pub trait ShallowCopyByClone {
    /// The copy function.
    fn shallow_copy(&self) -> Option<Function>;
}
impl<T: RustObject + Clone> ShallowCopyByClone for &ShallowCopyProbe<T> {
    fn shallow_copy(&self) -> Option<Function> {
        // As C++ `ObjectDef` registers it: a typed function of the receiver, named
        // `<key>.__ffi_shallow_copy__` in its messages. An object of a subtype is copied
        // through `T`'s payload (sliced to a `T`), as C++'s copy constructor of `T` does.
        let name: &'static str =
            Box::leak(format!("{}.__ffi_shallow_copy__", T::TYPE_KEY).into_boxed_str());
        Some(Function::from_typed_named(
            name,
            |this: ObjectRef<T>| -> ObjectRef<Object> {
                let copy = (*this).clone();
                // The copy stays open: deep copy fixes its fields up through the setters.
                let ptr = object::alloc_object(copy, T::runtime_type().index, construction::OPEN);
                // SAFETY: a fresh object of type `T` with one reference.
                unsafe { ObjectRef::<T>::from_raw(ptr) }.into_object()
            },
        ))
    }
}
/// Selected when the payload is not `Clone`.
pub trait ShallowCopyUnsupported {
    /// No copy function.
    fn shallow_copy(&self) -> Option<Function>;
}
impl<T> ShallowCopyUnsupported for ShallowCopyProbe<T> {
    fn shallow_copy(&self) -> Option<Function> {
        None
    }
}
