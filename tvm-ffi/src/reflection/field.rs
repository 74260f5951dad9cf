//! Reflected fields: the storage types a field may have ([`FieldValue`]) and the generic
//! getter and setter the runtime calls for every field of a Rust-defined type.
//!
//! # Field access rules
//!
//! - Fields of type [`Rw<T>`] (declared `#[ffi(rw)]`) may be read and written by foreign code
//!   at any time; each access takes the `Rw` lock.
//! - Every other field is immutable once Rust has seen the object. The reflected setter, which
//!   the runtime needs for its constructor, JSON/pickle loading and deep copy, only writes into
//!   objects the runtime is still constructing (see [`super::construction`]); on any other
//!   object it raises `AttributeError`.
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

use super::construction;
use super::rw::Rw;
use crate::container::{Array, Map};
use crate::error::panic::{catch, raise_panic};
use crate::error::{Error, Result};
use crate::function::Function;
use crate::object::{ObjectCell, ObjectRef, ObjectType};
use crate::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::tensor::Tensor;
use crate::value::{
    Any, AnyView, Bytes, DataType, Device, FromAny, IntoAny, String, TryIntoAny, TypeSchema,
};

/// A type that can be stored in a reflected field.
///
/// # Safety
/// `STATIC_TYPE_INDEX` must describe the storage truthfully (the runtime's serializer trusts
/// it): `1` int, `2` bool, `3` float, `5` DataType, `6` Device, `-1` for 16-byte Any-like
/// storage, an object index for 8-byte object pointers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a reflected field of a TVM-FFI object",
    label = "unsupported field type",
    note = "supported: integers, f32/f64, bool, tvm_ffi::String, Bytes, Option<T>, ObjectRef<T>, Array<T>, Map<K, V>, Any, Function, Tensor, DataType, Device, and Rw<T> of those; mark other fields `#[ffi(skip)]`"
)]
pub unsafe trait FieldValue: Send + Sync + Sized + 'static {
    /// The value foreign code reads and writes (`T` for `Rw<T>`, else `Self`).
    type Value: TryIntoAny + for<'a> FromAny<'a> + TypeSchema;
    /// The runtime's `field_static_type_index` of this storage.
    const STATIC_TYPE_INDEX: i32;
    /// Whether foreign code may write the field after construction (only [`Rw<T>`]).
    const INTERIOR_MUTABLE: bool = false;
    /// Whether [`FieldValue::empty`] returns a value (needed for the type's creator).
    const HAS_EMPTY: bool;
    /// The value of a field in a freshly created, not yet initialised object.
    fn empty() -> Option<Self>;
    /// A copy of the current value (the reflected getter).
    fn load(&self) -> Self::Value;
    /// Wraps a value as field storage.
    fn wrap(value: Self::Value) -> Self;
    /// Stores through interior mutability; only called when `INTERIOR_MUTABLE`.
    fn store(&self, _value: Self::Value) {
        unreachable!("store on a field without interior mutability")
    }
}

/// `load`/`wrap` of a field stored as its own value (everything but `Rw<T>`).
macro_rules! stored_as_is {
    () => {
        #[inline]
        fn load(&self) -> Self {
            self.clone()
        }
        #[inline]
        fn wrap(value: Self) -> Self {
            value
        }
    };
}

macro_rules! plain_field {
    ($index:expr, $empty:expr => $($t:ty),*) => {$(
        // SAFETY: the static index names this storage (see the table in the trait docs).
        unsafe impl FieldValue for $t {
            type Value = $t;
            const STATIC_TYPE_INDEX: i32 = $index;
            const HAS_EMPTY: bool = true;
            #[inline]
            fn empty() -> Option<Self> {
                Some($empty)
            }
            stored_as_is!();
        }
    )*};
}
plain_field!(ti::kTVMFFIInt, 0 => i8, i16, i32, i64, u8, u16, u32, u64, isize, usize);
plain_field!(ti::kTVMFFIBool, false => bool);
plain_field!(ti::kTVMFFIFloat, 0.0 => f32, f64);
plain_field!(ti::kTVMFFIAny, Default::default() => String, Bytes);
plain_field!(ti::kTVMFFIAny, Any::default() => Any);
plain_field!(ti::kTVMFFIDataType, DataType(sys::DLDataType { code: 0, bits: 0, lanes: 0 }) => DataType);
plain_field!(ti::kTVMFFIDevice, Device(sys::DLDevice { device_type: 1, device_id: 0 }) => Device);

// SAFETY: an object pointer (or null), which C++ `Optional<T>` reports as Any (-1).
unsafe impl<T> FieldValue for Option<T>
where
    T: FieldValue<Value = T> + Clone + IntoAny + for<'a> FromAny<'a> + TypeSchema,
{
    type Value = Option<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIAny;
    const HAS_EMPTY: bool = true;
    fn empty() -> Option<Self> {
        Some(None)
    }
    stored_as_is!();
}

// SAFETY: an 8-byte object pointer; C++ reports every `ObjectRef` field as `ffi.Object`.
unsafe impl<T: ObjectType + Send + Sync> FieldValue for ObjectRef<T> {
    type Value = ObjectRef<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIObject;
    // A non-nullable reference has no "empty" value: such types get no creator.
    const HAS_EMPTY: bool = false;
    fn empty() -> Option<Self> {
        None
    }
    stored_as_is!();
}

// SAFETY: an 8-byte pointer to an `ffi.Array` object.
unsafe impl<T> FieldValue for Array<T>
where
    T: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = Array<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIArray;
    const HAS_EMPTY: bool = true;
    fn empty() -> Option<Self> {
        Array::new(std::iter::empty()).ok()
    }
    stored_as_is!();
}

// SAFETY: an 8-byte pointer to an `ffi.Map` object.
unsafe impl<K, V> FieldValue for Map<K, V>
where
    K: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
    V: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = Map<K, V>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIMap;
    const HAS_EMPTY: bool = true;
    fn empty() -> Option<Self> {
        Map::new(std::iter::empty()).ok()
    }
    stored_as_is!();
}

// SAFETY: an 8-byte pointer to an `ffi.Function` object.
unsafe impl FieldValue for Function {
    type Value = Function;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIFunction;
    const HAS_EMPTY: bool = false;
    fn empty() -> Option<Self> {
        None
    }
    stored_as_is!();
}

// SAFETY: an 8-byte pointer to an `ffi.Tensor` object. C++ reports its `Tensor` fields with the
// generic object index (64) and Python's own dataclasses with 70; both describe this storage,
// and the tensor's own index is the more precise.
unsafe impl FieldValue for Tensor {
    type Value = Tensor;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFITensor;
    // A tensor reference is never null: such types get no creator (as for `ObjectRef<T>`).
    const HAS_EMPTY: bool = false;
    fn empty() -> Option<Self> {
        None
    }
    fn load(&self) -> Self {
        self.clone()
    }
    fn wrap(value: Self) -> Self {
        value
    }
}

// SAFETY: `Rw<T>` is repr(transparent) over `T`, so the storage is `T`'s.
unsafe impl<T> FieldValue for Rw<T>
where
    T: FieldValue<Value = T> + Clone + TryIntoAny + for<'a> FromAny<'a> + TypeSchema,
{
    type Value = T;
    const STATIC_TYPE_INDEX: i32 = T::STATIC_TYPE_INDEX;
    const INTERIOR_MUTABLE: bool = true;
    const HAS_EMPTY: bool = T::HAS_EMPTY;
    fn empty() -> Option<Self> {
        T::empty().map(Rw::new)
    }
    fn load(&self) -> T {
        self.get()
    }
    fn wrap(value: T) -> Self {
        Rw::new(value)
    }
    fn store(&self, value: T) {
        self.set(value)
    }
}

/// Implemented only by [`Rw<T>`]: a field marked `#[ffi(rw)]` must have interior mutability.
#[diagnostic::on_unimplemented(
    message = "a field marked `#[ffi(rw)]` must be declared as `tvm_ffi::Rw<{Self}>`",
    label = "foreign code could write this field while Rust holds a reference to it",
    note = "declare the field as `tvm_ffi::Rw<T>` and read it with `.get()`, write it with `.set(..)`"
)]
pub trait WritableField {}
impl<T> WritableField for Rw<T> {}

/// Compile-time check used by generated code for `#[ffi(rw)]` fields.
pub const fn assert_writable<F: WritableField + ?Sized>() {}

/// Implemented only by [`Rw<T>`]: the fields of an `external` declaration, which code outside
/// Rust may write at any time (the defining library's setters), must be read through it.
#[diagnostic::on_unimplemented(
    message = "a field of an `external` declaration must be declared as `tvm_ffi::Rw<{Self}>`",
    label = "the library that defines this type may write the field at any time",
    note = "read it with `.get()`: a plain field would let Rust assume it never changes"
)]
pub trait ForeignField {}
impl<T> ForeignField for Rw<T> {}

/// Compile-time check used by generated code for the fields of `external` declarations.
pub const fn assert_foreign_field<F: ForeignField + ?Sized>() {}

/// Offset of a payload field from the start of the object header.
pub const fn header_offset<T>(payload_offset: usize) -> usize {
    ObjectCell::<T>::PAYLOAD_OFFSET + payload_offset
}

/// The header of the object owning the field at `field` (`OFFSET` bytes into it).
#[inline]
unsafe fn owner_of<const OFFSET: usize>(field: *mut c_void) -> NonNull<TVMFFIObject> {
    // SAFETY: the runtime passes the address of a field registered at OFFSET, so the object
    // header is OFFSET bytes before it; it is never null.
    unsafe { NonNull::new_unchecked((field as *mut u8).sub(OFFSET) as *mut TVMFFIObject) }
}

/// Writes an error raised by an accessor, naming the field.
#[cold]
pub(super) fn raise(err: Error) -> c_int {
    err.set_raised();
    -1
}

/// The reflected getter of a field of type `F` registered at `OFFSET` (from the header):
/// writes an owned copy of the value.
///
/// # Safety
/// Called by the runtime with the address of such a field of a live object and a writable
/// `out`.
pub unsafe extern "C" fn field_getter<F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    out: *mut TVMFFIAny,
) -> c_int {
    let read = || {
        // SAFETY: `field` points to a live, initialised `F` inside the object.
        let value = unsafe { &*(field as *const F) };
        value.load()
    };
    let outcome = catch(|| {
        // SAFETY: the field belongs to a live object at OFFSET.
        let owner = unsafe { owner_of::<OFFSET>(field) };
        // SAFETY: as above. Sealed objects are immutable (or `Rw`-locked), open ones are
        // accessed under the construction lock, objects not built by Rust are refused.
        let value = match unsafe { construction::closed_state(owner) } {
            Some(construction::Closed::Foreign) => {
                return Err(construction::Closed::foreign_error(owner));
            }
            Some(construction::Closed::Sealed) => read(),
            None if F::INTERIOR_MUTABLE => read(),
            // SAFETY: a live object of a Rust-defined type (it keeps a construction state).
            None => match unsafe { construction::with_construction_access(owner, read) } {
                Ok(value) => value,
                Err(construction::Closed::Sealed) => read(),
                Err(construction::Closed::Foreign) => {
                    return Err(construction::Closed::foreign_error(owner));
                }
            },
        };
        value.try_into_any()
    });
    match outcome {
        Ok(Ok(any)) => {
            // SAFETY: `out` is writable; ownership of the value moves to the caller.
            unsafe { out.write(any.into_raw()) };
            0
        }
        Ok(Err(err)) => raise(err),
        Err(payload) => {
            raise_panic("field getter", payload);
            -1
        }
    }
}

/// The reflected setter of a field of type `F` at `OFFSET` in objects of type `T`.
///
/// `Rw` fields are replaced under their lock; other fields only while the object is still
/// being constructed by the runtime (see the field access rules of the `reflection` layer).
///
/// # Safety
/// Called by the runtime with the address of such a field of a live object and a valid
/// borrowed `value`.
pub unsafe extern "C" fn field_setter<T: ObjectType, F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    value: *const TVMFFIAny,
) -> c_int {
    let outcome = catch(|| -> Result<()> {
        // SAFETY: the runtime passes a valid borrowed value.
        let view = unsafe { &*(value as *const AnyView<'_>) };
        let new_value: F::Value = view.cast()?;
        // SAFETY: the field belongs to a live object at OFFSET.
        let owner = unsafe { owner_of::<OFFSET>(field) };
        // SAFETY: as above.
        if unsafe { construction::closed_state(owner) } == Some(construction::Closed::Foreign) {
            return Err(construction::Closed::foreign_error(owner));
        }
        if F::INTERIOR_MUTABLE {
            // SAFETY: `field` points to a live `F`; interior mutability synchronises.
            unsafe { &*(field as *const F) }.store(new_value);
            return Ok(());
        }
        let replaced = unsafe {
            // SAFETY: exclusive access while the object is open; no `&` to it exists because
            // Rust seals an object before its first dereference.
            construction::with_construction_access(owner, || {
                std::ptr::replace(field as *mut F, F::wrap(new_value))
            })
        };
        match replaced {
            Ok(old) => {
                drop(old);
                Ok(())
            }
            Err(construction::Closed::Foreign) => Err(construction::Closed::foreign_error(owner)),
            Err(construction::Closed::Sealed) => Err(Error::new(
                "AttributeError",
                format!(
                    "Cannot set read-only field of `{}` at offset {OFFSET}: it can only be \
                     written while the object is being constructed; declare it \
                     `#[ffi(rw)] field: tvm_ffi::Rw<T>` to make it writable",
                    T::TYPE_KEY
                ),
            )),
        }
    });
    match outcome {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => raise(err),
        Err(payload) => {
            raise_panic("field setter", payload);
            -1
        }
    }
}
