//! What the runtime calls to make objects of Rust-defined types: the creator and `__ffi_new__`
//! (an open object the runtime then fills through the setters), field defaults, the explicit
//! constructor's result, and `__ffi_shallow_copy__`.
use std::ffi::c_int;
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::construction;
use super::field::FieldValue;
use super::reflected::Reflected;
use crate::abi::sys::{self, TVMFFIObject};
use crate::base::error::panic::{catch, raise_panic};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::AnyObject;
use crate::base::object::{self, DropRustObject, ObjectRef, ObjectType, RustObject};
use crate::base::value::{Any, Bytes, String, TryIntoAny};
use crate::call::function::Function;

/// Writes `payload` (see [`Reflected::init_empty`]) by autoref specialisation: a `Default` type
/// is written as its default, any other field by field (`fields`). Used as
/// `(&&InitProbe::<T>::new()).init(payload)`.
pub struct InitProbe<T>(PhantomData<T>);
impl<T> InitProbe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        InitProbe(PhantomData)
    }
}
impl<T> Default for InitProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}
/// Selected when the payload implements `Default`.
///
/// # Safety
/// `init` writes a valid `T` (what `T::init_empty` promises its caller): generated code calls it
/// through the probe and then treats the payload as written.
pub unsafe trait InitByDefault<T> {
    /// Writes `T::default()`.
    ///
    /// # Safety
    /// `payload` points to uninitialised memory for `T`.
    unsafe fn init(&self, payload: *mut T);
}
// SAFETY: writes `T::default()`, a valid `T`.
unsafe impl<T: Default> InitByDefault<T> for &InitProbe<T> {
    #[inline]
    unsafe fn init(&self, payload: *mut T) {
        // SAFETY: the caller's contract.
        unsafe { payload.write(T::default()) }
    }
}
/// Selected when the payload does not implement `Default`.
///
/// # Safety
/// `init` writes every field of `T` valid or unset (what `T::init_empty` promises its caller).
pub unsafe trait InitByFields<T> {
    /// Writes field by field.
    ///
    /// # Safety
    /// `payload` points to uninitialised memory for `T`.
    unsafe fn init(&self, payload: *mut T);
}
// SAFETY: `init_fields` writes every field of `T`'s tables valid or unset.
unsafe impl<T: Reflected> InitByFields<T> for InitProbe<T> {
    #[inline]
    unsafe fn init(&self, payload: *mut T) {
        // SAFETY: the caller's contract; `T`'s tables describe its payload.
        unsafe { super::reflected::init_fields(payload) }
    }
}

/// Allocates an open object of type `T` whose payload `init` writes (see
/// [`Reflected::init_empty`]).
fn alloc_open<T: Reflected + RustObject>(init: impl FnOnce(*mut T)) -> NonNull<TVMFFIObject> {
    // SAFETY: `init` writes every field valid or unset, which `T::drop_payload` (through
    // `DropRustObject`) accepts while the object is open; the index is `T`'s.
    unsafe {
        object::alloc_object_with::<T, DropRustObject>(
            T::runtime_type().index,
            construction::OPEN,
            init,
        )
    }
}

/// A fresh object of type `T`, open for the runtime to fill: what the creator and
/// `__ffi_new__` make.
pub fn new_open_object<T: Reflected + RustObject>() -> ObjectRef<T> {
    // SAFETY: `init_empty` writes every field valid or unset.
    let ptr = alloc_open::<T>(|payload| unsafe { T::init_empty(payload) });
    // SAFETY: a fresh object of type `T` with one reference.
    unsafe { ObjectRef::from_raw(ptr) }
}

/// The creator the runtime calls to make an empty object (auto-init, JSON/pickle loading,
/// `ffi.MakeObjectFromPackedArgs`).
///
/// # Safety
/// Called by the runtime with a writable `out`.
pub unsafe extern "C" fn create_object<T: Reflected + RustObject>(
    out: *mut sys::TVMFFIObjectHandle,
) -> c_int {
    match catch(new_open_object::<T>) {
        Ok(obj) => {
            // SAFETY: `out` is writable; the caller takes the one reference.
            unsafe { out.write(obj.into_raw().as_ptr() as sys::TVMFFIObjectHandle) };
            0
        }
        Err(payload) => {
            raise_panic(T::TYPE_KEY, payload);
            -1
        }
    }
}

/// `__ffi_new__`, registered from the creator as C++ registers it: a typed function
/// `<key>.__ffi_new__() -> ffi.Object` that makes a fresh object.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_new__`: the objects it makes are open (their
/// required references unset, see `reflection::construction`), which only the runtime's construction
/// protocol (the setters, then sealing) expects.
pub unsafe fn new_function<T: Reflected + RustObject>() -> Function {
    let name: &'static str = Box::leak(format!("{}.__ffi_new__", T::TYPE_KEY).into_boxed_str());
    Function::from_typed_named(name, || new_open_object::<T>().into_object())
}

/// `__ffi_convert__` of `#[ffi_type(convert)]`, as C++ `def_convert` registers it: a typed
/// function `<key>.__ffi_convert__(value) -> <key>` that accepts an instance of the type (or
/// a subtype) and raises `TypeError` for anything else.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_convert__`, whose results the runtime and
/// Python take as objects of `T`.
pub unsafe fn convert_function<T: ObjectType>() -> Function {
    let name: &'static str = Box::leak(format!("{}.__ffi_convert__", T::TYPE_KEY).into_boxed_str());
    Function::from_typed_named(name, |value: Any| -> Result<ObjectRef<T>> {
        value
            .as_view()
            .checked_cast::<ObjectRef<T>>()
            .ok_or_else(|| {
                Error::type_error(format!(
                    "Cannot cast from `{}` to `{}`",
                    value.type_key(),
                    T::TYPE_KEY
                ))
            })
    })
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
///
/// # Safety
/// The result is the default of a field whose storage is `F` only (the runtime writes it into
/// that field through the field's setter).
pub unsafe fn default_value<F: FieldValue>(value: impl IntoDefault<F::Value>) -> Any {
    match value.into_default().try_into_any() {
        Ok(any) => any,
        Err(err) => panic!("invalid field default: {}", err.message()),
    }
}

/// Wraps a `default_factory = path` function as the `() -> Any` function the runtime calls.
///
/// # Safety
/// As for [`default_value`]: the result is the default factory of a field whose storage is `F`.
pub unsafe fn default_factory<F: FieldValue>(factory: fn() -> F::Value) -> Any {
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
pub trait InitResult<T>: InitResultSealed<T> {
    /// The object, or the constructor's error.
    fn into_object(self) -> Result<ObjectRef<AnyObject>>;
}
impl<T: RustObject> InitResult<T> for T {
    fn into_object(self) -> Result<ObjectRef<AnyObject>> {
        Ok(ObjectRef::new(self).into_object())
    }
}
impl<T: ObjectType> InitResult<T> for ObjectRef<T> {
    fn into_object(self) -> Result<ObjectRef<AnyObject>> {
        Ok(self.into_object())
    }
}
impl<T, R: InitResult<T>, E: Into<Error>> InitResult<T> for std::result::Result<R, E> {
    fn into_object(self) -> Result<ObjectRef<AnyObject>> {
        self.map_err(Into::into)?.into_object()
    }
}

/// Sealed: Python makes the object an `#[ffi(init)]` constructor returns the new instance of
/// `T`'s class, so a result must be an object of `T` (or a subtype); an impl outside this crate
/// (`InitResult<T> for ObjectRef<Other>`) could hand it anything.
mod sealed {
    pub trait InitResultSealed<T> {}
}
use sealed::InitResultSealed;
impl<T: RustObject> InitResultSealed<T> for T {}
impl<T: ObjectType> InitResultSealed<T> for ObjectRef<T> {}
impl<T, R: InitResult<T>, E: Into<Error>> InitResultSealed<T> for std::result::Result<R, E> {}

/// Converts an `#[ffi(init)]` function's result into the value returned to the caller.
///
/// # Safety
/// Only in the `__ffi_init__` of `T` (the `#[ffi(init)]` constructor of `T` itself): Python
/// makes the returned object the new instance of `T`'s class.
pub unsafe fn init_into_any<T, R: InitResult<T>>(result: R) -> Result<Any> {
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
impl<T: Reflected + RustObject + Clone> ShallowCopyByClone for &ShallowCopyProbe<T> {
    fn shallow_copy(&self) -> Option<Function> {
        // As C++ `ObjectDef` registers it: a typed function of the receiver, named
        // `<key>.__ffi_shallow_copy__` in its messages. An object of a subtype is copied
        // through `T`'s payload (sliced to a `T`), as C++'s copy constructor of `T` does.
        let name: &'static str =
            Box::leak(format!("{}.__ffi_shallow_copy__", T::TYPE_KEY).into_boxed_str());
        Some(Function::from_typed_named(
            name,
            |this: ObjectRef<T>| -> ObjectRef<AnyObject> {
                let copy = (*this).clone();
                // The copy stays open: deep copy fixes its fields up through the setters.
                let ptr = alloc_open::<T>(|payload| {
                    // SAFETY: uninitialised memory for `T`, written in full.
                    unsafe { payload.write(copy) }
                });
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
