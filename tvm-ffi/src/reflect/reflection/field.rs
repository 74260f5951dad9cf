//! Reflected fields: the storage types a field may have ([`FieldValue`]) and the generic
//! getter and setter the runtime calls for every field of a Rust-defined type.
//!
//! # Field access rules
//!
//! - Fields of type [`Rw<T>`](crate::Rw) (declared `#[ffi(rw)]`) may be read and written by
//!   foreign code at any time; each access takes the `Rw` lock.
//! - Every other field is immutable once Rust has seen the object. The reflected setter, which
//!   the runtime needs for its constructor, JSON/pickle loading, deep copy and Python subclass
//!   `__init__`, only writes objects that are still open (see [`super::construction`]); on a
//!   sealed object it raises `AttributeError`.
//! - A required object reference (`ObjectRef<T>`, `Function`, `Tensor`, ...) of an object made
//!   by the runtime's creator is *unset* (a null pointer) until the runtime sets it: the getter
//!   reads it as `None`, the setter writes it without dropping anything, and Rust never sees it
//!   (sealing checks it first).
//!
//! # Storage and the runtime's view of it
//!
//! Every storage is what C++ and Python assume from its `field_static_type_index` and size:
//! plain numbers; a 16-byte `Any` (`String`, `Bytes`, `Any`, [`Optional<T>`]); an 8-byte object
//! pointer, null when unset or `None` (`ObjectRef<T>`, `Option<ObjectRef<T>>`, `Array`, `Map`,
//! `Function`, `Tensor`). So a Python `@py_class` subclass, which builds and destroys the
//! parent's fields from that view alone, handles them correctly, and an all-zero field is a
//! valid value or unset.
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

use super::construction;
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::panic::{catch, raise_panic};
use crate::base::error::{Error, Result};
use crate::base::object::{type_info, ObjectRef, ObjectType};
use crate::base::value::any::cast_error_named;
use crate::base::value::{
    Any, AnyView, BigInt, Bytes, DataType, Device, FromAny, IntoAny, Optional, String, TryIntoAny,
    TypeSchema, VariantField,
};
use crate::call::function::Function;
use crate::data::container::{Array, Dict, List, Map, Shape};
use crate::data::tensor::Tensor;

/// A type that can be stored in a reflected field.
///
/// # Safety
/// `STATIC_TYPE_INDEX` must describe the storage truthfully (the runtime's serializer and
/// Python subclasses trust it): `1` int, `2` bool, `3` float, `5` DataType, `6` Device, `-1`
/// for 16-byte Any storage, an object index for an 8-byte object pointer. With `MAY_BE_UNSET`,
/// the storage is a pointer whose null pattern `is_unset` recognises and `write_unset` writes.
/// `Clone` and `load` run no user code (a bit copy or a reference count): [`Rw<T>`](crate::Rw)
/// runs them under a lock.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a reflected field of a TVM-FFI object",
    label = "unsupported field type",
    note = "text is `tvm_ffi::String`, a sequence `tvm_ffi::Array<T>`, a map `tvm_ffi::Map<K, V>`; supported: integers, f32/f64, bool, tvm_ffi::String, Bytes, BigInt, Optional<T>, ObjectRef<T>, Option<ObjectRef<T>>, Array<T>, Map<K, V>, List<T>, Dict<K, V>, Shape, Any, Function, Tensor, DataType, Device, and Rw<T> of those; mark other fields `#[ffi(skip)]`"
)]
pub unsafe trait FieldValue: Clone + Send + Sync + Sized + 'static {
    /// The value foreign code reads and writes.
    type Value: TryIntoAny + for<'a> FromAny<'a> + TypeSchema;
    /// The runtime's `field_static_type_index` of this storage.
    const STATIC_TYPE_INDEX: i32;
    /// Whether foreign code may write the field after construction (only
    /// [`Rw<T>`](crate::Rw)).
    const INTERIOR_MUTABLE: bool = false;
    /// Whether the storage is an [`Rw<T>`](crate::Rw) of an interior-mutable `T` (`Rw<Rw<T>>`):
    /// two locks for one value, which nothing needs; generated code refuses it.
    const NESTED_INTERIOR_MUTABILITY: bool = false;
    /// Whether the storage is a pointer that may be *unset* (null) while the object is open.
    const MAY_BE_UNSET: bool = false;
    /// The value of the field in a freshly created object; `None` for a required reference,
    /// which stays unset until the runtime sets it.
    fn empty() -> Option<Self>;
    /// A copy of the current value (the reflected getter).
    fn load(&self) -> Self::Value;
    /// Wraps a value as field storage.
    fn wrap(value: Self::Value) -> Self;
    /// Stores through interior mutability; only called when `INTERIOR_MUTABLE`.
    fn store(&self, _value: Self::Value) {
        unreachable!("store on a field without interior mutability")
    }
    /// The type setter errors name ("Cannot convert from type `int` to `<this>`"): the value
    /// type's, unless C++ names the same storage otherwise.
    fn type_str() -> std::string::String {
        <Self::Value as TypeSchema>::type_str()
    }
    /// Whether the storage at `field` is unset; only called when `MAY_BE_UNSET`.
    ///
    /// # Safety
    /// `field` points to this storage in a live object, valid or unset.
    unsafe fn is_unset(_field: *const Self) -> bool {
        false
    }
    /// Writes the unset pattern; only called when `MAY_BE_UNSET`.
    ///
    /// # Safety
    /// `field` points to uninitialised storage for `Self`.
    unsafe fn write_unset(_field: *mut Self) {
        unreachable!("a field without an unset state")
    }
}

/// `load`/`wrap` of a field stored as its own value (everything but `Rw<T>` and optionals).
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

/// The unset state of a pointer-sized reference: a null pointer.
macro_rules! unset_as_null {
    () => {
        const MAY_BE_UNSET: bool = true;
        unsafe fn is_unset(field: *const Self) -> bool {
            // SAFETY: the storage is one pointer (the implementor's repr(transparent) chain).
            unsafe { (field as *const *const std::ffi::c_void).read().is_null() }
        }
        unsafe fn write_unset(field: *mut Self) {
            // SAFETY: as above; writing the pointer-sized null pattern.
            unsafe { (field as *mut *const std::ffi::c_void).write(std::ptr::null()) }
        }
    };
}

macro_rules! plain_field {
    ($index:expr, $empty:expr => $($t:ty),*) => {$(
        // SAFETY: the static index names this storage (see the table in the trait docs).
        unsafe impl FieldValue for $t {
            type Value = $t;
            const STATIC_TYPE_INDEX: i32 = $index;
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
// C++ `BigInt`: a 16-byte `Any` holding an `int` or an `ffi.BigInt` (C++ reports `-1`).
plain_field!(ti::kTVMFFIAny, BigInt::default() => BigInt);
// Value-initialised, as C++ creators leave them.
plain_field!(ti::kTVMFFIDataType, DataType(sys::DLDataType { code: 0, bits: 0, lanes: 0 }) => DataType);
plain_field!(ti::kTVMFFIDevice, Device(sys::DLDevice { device_type: 0, device_id: 0 }) => Device);

// SAFETY: a 16-byte `Any` (C++ `Optional<T>` of a value), `None` when all zero.
unsafe impl<T> FieldValue for Optional<T>
where
    T: IntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = Option<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIAny;
    fn empty() -> Option<Self> {
        Some(Optional::none())
    }
    fn load(&self) -> Option<T> {
        self.get()
    }
    fn wrap(value: Option<T>) -> Self {
        Optional::from(value)
    }
}

// SAFETY: a 16-byte `Any` (C++ `Variant<..>`); all zero (`None`) is the unset state.
unsafe impl<E> FieldValue for VariantField<E>
where
    E: IntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = E;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIAny;
    const MAY_BE_UNSET: bool = true;
    fn empty() -> Option<Self> {
        None
    }
    fn load(&self) -> E {
        self.get()
    }
    fn wrap(value: E) -> Self {
        VariantField::new(value)
    }
    unsafe fn is_unset(field: *const Self) -> bool {
        // SAFETY: the storage is a `TVMFFIAny`; `None` has type index 0.
        unsafe { (field as *const TVMFFIAny).read().type_index == ti::kTVMFFINone }
    }
    unsafe fn write_unset(field: *mut Self) {
        // SAFETY: as above.
        unsafe { (field as *mut TVMFFIAny).write(TVMFFIAny::NONE) }
    }
}

/// An 8-byte, never-null reference, which `Option` stores as a nullable pointer: the storage of
/// an optional object field, as C++ stores a nullable reference (`ObjectPtr<T>`).
///
/// # Safety
/// `Self` must be a `repr(transparent)` chain down to one `NonNull` object pointer, so that
/// `Option<Self>` is that pointer with `None` as null.
#[diagnostic::on_unimplemented(
    message = "`Option<{Self}>` cannot be a reflected field: only object references are optional by a null pointer",
    label = "not an object reference",
    note = "store optional values as `tvm_ffi::Optional<{Self}>` (a 16-byte Any, as C++ `Optional<T>`)"
)]
pub unsafe trait NullablePointer: FieldValue {
    /// Whether C++ names the optional field by its target (`ObjectPtr<T>` is named `T`) rather
    /// than as `Optional<T>` (`Optional<Array<T>>` and the like).
    const NAMED_AS_TARGET: bool = false;
}
// SAFETY: a repr(transparent) chain down to one `NonNull` object pointer. An optional object
// reference is C++'s nullable `ObjectPtr<T>`, named by its target.
unsafe impl<T: ObjectType + Send + Sync> NullablePointer for ObjectRef<T> {
    const NAMED_AS_TARGET: bool = true;
}
// SAFETY: as above.
unsafe impl<T> NullablePointer for Array<T> where Array<T>: FieldValue {}
// SAFETY: as above.
unsafe impl<K, V> NullablePointer for Map<K, V> where Map<K, V>: FieldValue {}
// SAFETY: as above.
unsafe impl<T> NullablePointer for List<T> where List<T>: FieldValue {}
// SAFETY: as above.
unsafe impl<K, V> NullablePointer for Dict<K, V> where Dict<K, V>: FieldValue {}
// SAFETY: as above.
unsafe impl NullablePointer for Shape {}
// SAFETY: as above.
unsafe impl NullablePointer for Function {}
// SAFETY: as above.
unsafe impl NullablePointer for Tensor {}

// SAFETY: a nullable 8-byte object pointer (`None` is null), reported as an object pointer
// (`ffi.Object`): the runtime and Python subclasses copy and destroy a field with any other
// index but a plain number's as a 16-byte `Any`. (C++ reports its pointer-sized
// `Optional<Array<T>>` as "any", which a Python subclass's shallow copy then misreads.)
unsafe impl<T> FieldValue for Option<T>
where
    T: NullablePointer + FieldValue<Value = T> + Clone + IntoAny + for<'a> FromAny<'a> + TypeSchema,
{
    type Value = Option<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIObject;
    fn empty() -> Option<Self> {
        Some(None)
    }
    // C++'s `ObjectPtr<T>` names its target `T`; `Optional<T>` names it `Optional<T>`.
    fn type_str() -> std::string::String {
        if T::NAMED_AS_TARGET {
            <T as TypeSchema>::type_str()
        } else {
            <Option<T> as TypeSchema>::type_str()
        }
    }
    stored_as_is!();
}

/// The `FieldValue` of references stored as one object pointer, null while unset: the value is
/// the reference itself, `$index` the static type index C++ reports for such a field, and
/// `$empty` the value a fresh field holds (`None`: unset until the runtime or a creator sets it).
macro_rules! reference_field {
    ($([$($gen:tt)*] $t:ty $(where [$($bound:tt)*])?: $index:expr, $empty:expr;)*) => {$(
        // SAFETY: `$t` is one non-null object pointer of the type `$index` names or a subtype
        // (each invocation says which index C++ reports), so null is free for "unset".
        unsafe impl<$($gen)*> $crate::reflect::reflection::field::FieldValue for $t
            $(where $($bound)*)?
        {
            type Value = $t;
            const STATIC_TYPE_INDEX: i32 = $index;
            fn empty() -> Option<Self> {
                $empty
            }
            $crate::reflect::reflection::field::stored_as_is!();
            $crate::reflect::reflection::field::unset_as_null!();
        }
    )*};
}
pub(crate) use {reference_field, stored_as_is, unset_as_null};

/// The bounds of a container element, key or value stored in a field.
trait FieldElement: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static {}
impl<T: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static> FieldElement for T {}

// C++ reports `ffi.Array`, `ffi.List` (75) and `ffi.Shape` (69) for those fields, and
// `ffi.Object` for every other reference (`ObjectRef`, `Map`, `Dict`, untyped `Function`,
// `Tensor`). A `List` or `Dict` is shared: the field holds one reference, which foreign code
// may replace only through `Rw`; the contents change under any holder, which their reads copy
// value by value.
reference_field! {
    [T: ObjectType + Send + Sync] ObjectRef<T>: ti::kTVMFFIObject, None;
    [T] Array<T> where [T: FieldElement]: ti::kTVMFFIArray, Array::new(std::iter::empty()).ok();
    [T] List<T> where [T: FieldElement]: ti::kTVMFFIList, List::new(std::iter::empty()).ok();
    [K, V] Map<K, V> where [K: FieldElement, V: FieldElement]:
        ti::kTVMFFIObject, Map::new(std::iter::empty()).ok();
    [K, V] Dict<K, V> where [K: FieldElement, V: FieldElement]:
        ti::kTVMFFIObject, Dict::new(std::iter::empty()).ok();
    [] Shape: ti::kTVMFFIShape, Some(Shape::default());
    [] Function: ti::kTVMFFIObject, None;
    [] Tensor: ti::kTVMFFIObject, None;
}

/// Implemented only by [`Rw<T>`](crate::Rw): a field marked `#[ffi(rw)]` must have interior mutability.
#[diagnostic::on_unimplemented(
    message = "a field marked `#[ffi(rw)]` must be declared as `tvm_ffi::Rw<{Self}>`",
    label = "foreign code could write this field while Rust holds a reference to it",
    note = "declare the field as `tvm_ffi::Rw<T>` and read it with `.get()`, write it with `.set(..)`"
)]
pub trait WritableField {}

/// Compile-time check used by generated code for `#[ffi(rw)]` fields.
pub const fn assert_writable<F: WritableField + ?Sized>() {}

/// Implemented only by [`Rw<T>`](crate::Rw): the fields of an `external` declaration, which
/// code outside Rust may write at any time (the defining library's setters), must be read
/// through it.
#[diagnostic::on_unimplemented(
    message = "a field of an `external` declaration must be declared as `tvm_ffi::Rw<{Self}>`",
    label = "the library that defines this type may write the field at any time",
    note = "read it with `.get()`: a plain field would let Rust assume it never changes"
)]
pub trait ForeignField {}

/// Compile-time check used by generated code for the fields of `external` declarations.
pub const fn assert_foreign_field<F: ForeignField + ?Sized>() {}

/// The header of the object owning the field at `field` (`OFFSET` bytes into it), when that
/// object is a `T` (or of a subtype): the runtime hands an accessor "object address + offset",
/// and Python's field descriptors accept any object, so the owner's type is checked before any
/// byte of the field is touched.
///
/// # Safety
/// `field` is `OFFSET` bytes past the header of a live object (of any type).
#[inline]
unsafe fn owner_of<T: ObjectType, const OFFSET: usize>(
    field: *mut c_void,
    access: &str,
) -> Result<NonNull<TVMFFIObject>> {
    // SAFETY: the caller's contract: the header is OFFSET bytes before `field`, never null.
    let owner =
        unsafe { NonNull::new_unchecked((field as *mut u8).sub(OFFSET) as *mut TVMFFIObject) };
    // SAFETY: a live object's header.
    let index = unsafe { crate::base::object::type_index_of(owner) };
    if type_info::is_instance_of_any_index(index, T::runtime_type()) {
        return Ok(owner);
    }
    Err(Error::type_error(format!(
        "Cannot {access} the field of `{}` at offset {OFFSET} on an object of type `{}`",
        T::TYPE_KEY,
        type_info::type_key_of_index(index)
    )))
}

/// Writes an error raised by an accessor, naming the field.
#[cold]
pub(super) fn raise(err: Error) -> c_int {
    err.set_raised();
    -1
}

/// The reflected getter of a field of type `F` registered at `OFFSET` (from the header):
/// writes an owned copy of the value (`None` for an unset required reference).
///
/// # Safety
/// Called by the runtime with `OFFSET` bytes past the header of a live object (of any type:
/// a `T` is checked) and a writable `out`.
pub unsafe extern "C" fn field_getter<T: ObjectType, F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    out: *mut TVMFFIAny,
) -> c_int {
    let field = field as *mut F;
    // SAFETY: `field` points to this field of a live object; it is read only when set, and
    // `F` values are shared-readable (`Rw` locks inside).
    let read = || unsafe { &*field }.load().try_into_any();
    let read_open = || {
        // SAFETY: as above; the construction lock keeps setters out meanwhile.
        if F::MAY_BE_UNSET && unsafe { F::is_unset(field) } {
            Ok(Any::none())
        } else {
            read()
        }
    };
    let outcome = catch(|| {
        // SAFETY: the runtime's contract: OFFSET bytes into a live object.
        let owner = unsafe { owner_of::<T, OFFSET>(field as *mut c_void, "read") }?;
        // SAFETY: a live object. A sealed object's fields are all set and immutable (or
        // `Rw`-locked); an open object's are read under the construction lock.
        if unsafe { construction::is_sealed(owner) } {
            return read();
        }
        // SAFETY: a live object of a Rust-defined type or of a Python subclass of one.
        match unsafe { construction::with_construction_access(owner, read_open) } {
            Ok(value) => value,
            Err(()) => read(),
        }
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

/// Whether the `len` bytes at `ptr` are all zero, read as atomics (a setter on another thread
/// may write them meanwhile).
///
/// # Safety
/// `ptr` is valid for reads of `len` bytes, aligned to 4 and `len` a multiple of 4.
unsafe fn all_zero(ptr: *const u8, len: usize) -> bool {
    (0..len / 4).all(|i| {
        // SAFETY: the caller's contract: in bounds and aligned.
        let word = unsafe { &*(ptr.add(i * 4) as *const std::sync::atomic::AtomicU32) };
        word.load(std::sync::atomic::Ordering::Relaxed) == 0
    })
}

/// The reflected setter of a field of type `F` at `OFFSET` in objects of type `T`.
///
/// `Rw` fields are replaced under their lock; other fields only while the object is still
/// open (see the [field access rules](crate::reflection)).
///
/// # Safety
/// Called by the runtime with `OFFSET` bytes past the header of a live object (of any type:
/// a `T` is checked) and a valid borrowed `value`.
pub unsafe extern "C" fn field_setter<T: ObjectType, F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    value: *const TVMFFIAny,
) -> c_int {
    setter::<T, F, OFFSET>(field, value)
}

/// [`field_setter`], for the field's storage type `F`.
#[inline(always)]
fn setter<T: ObjectType, F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    value: *const TVMFFIAny,
) -> c_int {
    let field = field as *mut F;
    let outcome = catch(|| -> Result<()> {
        // SAFETY: the runtime passes a valid borrowed value.
        let view = unsafe { &*(value as *const AnyView<'_>) };
        let mut new_value = Some(
            view.checked_cast::<F::Value>()
                .ok_or_else(|| cast_error_named::<F::Value>(view, &F::type_str()))?,
        );
        // SAFETY: the runtime's contract: OFFSET bytes into a live object.
        let owner = unsafe { owner_of::<T, OFFSET>(field as *mut c_void, "set") }?;
        // A reference held by an instance allocated outside Rust (a Python subclass) is never
        // replaced: the runtime's shallow copy of the instance takes it without Rust's lock.
        // Only storage still all zero (as allocated: nothing to release) is written.
        let set_once = super::reflected::holds_reference(F::STATIC_TYPE_INDEX)
            // SAFETY: a live object of a Rust-defined type or of a Python subclass of one.
            && !unsafe { construction::is_rust_made(owner) };
        let written_before = || {
            // SAFETY: the field's storage (8 or 16 bytes, 8-aligned), read as atomics.
            !unsafe { all_zero(field as *const u8, std::mem::size_of::<F>()) }
        };
        if set_once && written_before() {
            return Err(construction::set_once_error(T::TYPE_KEY, OFFSET));
        }
        // SAFETY: a live object of a Rust-defined type or of a Python subclass of one.
        let written = unsafe {
            construction::with_construction_access(owner, || {
                // Again under the lock: two setters may both have seen the field unset.
                if set_once && written_before() {
                    return Err(construction::set_once_error(T::TYPE_KEY, OFFSET));
                }
                let value = new_value.take().expect("set once");
                // SAFETY: exclusive access while the object is open (an `Rw` field too: its
                // accessors take the construction lock while the object is open); no `&` to it
                // exists because Rust seals an object before its first dereference. An unset
                // reference holds no value to drop. The old value (of an `Rw` field too) is
                // returned, to be dropped once the lock is released: its destructor may run
                // foreign code (a Python `__del__`) that reads this object.
                Ok(if F::MAY_BE_UNSET && F::is_unset(field) {
                    field.write(F::wrap(value));
                    None
                } else {
                    Some(std::ptr::replace(field, F::wrap(value)))
                })
            })
        };
        match written {
            // The old value is dropped after the construction lock is released.
            Ok(old) => {
                drop(old?);
                Ok(())
            }
            // Sealed: every field is set; only `Rw` fields may change.
            Err(()) if F::INTERIOR_MUTABLE => {
                // SAFETY: `field` points to a live `F`; interior mutability synchronises.
                unsafe { &*field }.store(new_value.take().expect("not yet stored"));
                Ok(())
            }
            Err(()) => Err(construction::read_only_error(T::TYPE_KEY, OFFSET)),
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
