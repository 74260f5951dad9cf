//! Reflection of Rust-defined object types: what `#[derive(Object)]` and `#[ffi_methods]`
//! describe, and the generic accessors the runtime calls.
//!
//! The macros emit only descriptors ([`TypeEntry`], [`FieldEntry`], [`MethodEntry`]) and
//! instantiate the generic functions of this module; [`crate::registry`] hands them to
//! libtvm_ffi when the library loads.
//!
//! # Field access rules
//!
//! - Fields of type [`Rw<T>`] (declared `#[ffi(rw)]`) may be read and written by foreign code
//!   at any time; each access takes the `Rw` lock.
//! - Every other field is immutable once Rust has seen the object. The reflected setter, which
//!   the runtime needs for its constructor, JSON/pickle loading and deep copy, only writes into
//!   objects the runtime is still constructing (see the construction state in
//!   [`crate::object`]); on any other object it raises `AttributeError`.
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::any::{FromAny, TryIntoAny, TypeSchema};
use crate::builtin::Object;
use crate::error::{Error, Result};
use crate::function::Function;
use crate::metadata::MetadataValue;
use crate::object::{self, ObjectCell, ObjectRef, ObjectType, RuntimeType, TypeSlot};
use crate::rw::Rw;
use crate::sys::{self, TVMFFIAny, TVMFFIObject};
use crate::{Any, AnyView};

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
use sys::type_index as ti;
plain_field!(ti::kTVMFFIInt, 0 => i8, i16, i32, i64, u8, u16, u32, u64, isize, usize);
plain_field!(ti::kTVMFFIBool, false => bool);
plain_field!(ti::kTVMFFIFloat, 0.0 => f32, f64);
plain_field!(ti::kTVMFFIAny, Default::default() => crate::String, crate::Bytes);
plain_field!(ti::kTVMFFIAny, Any::default() => Any);
plain_field!(ti::kTVMFFIDataType, crate::DataType(sys::DLDataType { code: 0, bits: 0, lanes: 0 }) => crate::DataType);
plain_field!(ti::kTVMFFIDevice, crate::Device(sys::DLDevice { device_type: 1, device_id: 0 }) => crate::Device);

// SAFETY: an object pointer (or null), which C++ `Optional<T>` reports as Any (-1).
unsafe impl<T> FieldValue for Option<T>
where
    T: FieldValue<Value = T> + Clone + crate::IntoAny + for<'a> FromAny<'a> + TypeSchema,
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
unsafe impl<T> FieldValue for crate::Array<T>
where
    T: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = crate::Array<T>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIArray;
    const HAS_EMPTY: bool = true;
    fn empty() -> Option<Self> {
        crate::Array::new(std::iter::empty()).ok()
    }
    stored_as_is!();
}

// SAFETY: an 8-byte pointer to an `ffi.Map` object.
unsafe impl<K, V> FieldValue for crate::Map<K, V>
where
    K: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
    V: TryIntoAny + for<'a> FromAny<'a> + TypeSchema + Send + Sync + 'static,
{
    type Value = crate::Map<K, V>;
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIMap;
    const HAS_EMPTY: bool = true;
    fn empty() -> Option<Self> {
        crate::Map::new(std::iter::empty()).ok()
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
unsafe impl FieldValue for crate::Tensor {
    type Value = crate::Tensor;
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
fn raise(err: Error) -> c_int {
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
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the field belongs to a live object at OFFSET.
        let owner = unsafe { owner_of::<OFFSET>(field) };
        // SAFETY: as above. Sealed objects are immutable (or `Rw`-locked), open ones are
        // accessed under the construction lock, objects not built by Rust are refused.
        let value = match unsafe { object::closed_state(owner) } {
            Some(object::Closed::Foreign) => {
                return Err(object::Closed::foreign_error(owner));
            }
            Some(object::Closed::Sealed) => read(),
            None if F::INTERIOR_MUTABLE => read(),
            // SAFETY: a live object of a Rust-defined type (TRACKS_CONSTRUCTION).
            None => match unsafe { object::with_construction_access(owner, read) } {
                Ok(value) => value,
                Err(object::Closed::Sealed) => read(),
                Err(object::Closed::Foreign) => {
                    return Err(object::Closed::foreign_error(owner));
                }
            },
        };
        value.try_into_any()
    }));
    match outcome {
        Ok(Ok(any)) => {
            // SAFETY: `out` is writable; ownership of the value moves to the caller.
            unsafe { out.write(any.into_raw()) };
            0
        }
        Ok(Err(err)) => raise(err),
        Err(payload) => {
            crate::boundary::raise_panic("field getter", payload);
            -1
        }
    }
}

/// The reflected setter of a field of type `F` at `OFFSET` in objects of type `T`.
///
/// `Rw` fields are replaced under their lock; other fields only while the object is still
/// being constructed by the runtime (see the [module docs](self)).
///
/// # Safety
/// Called by the runtime with the address of such a field of a live object and a valid
/// borrowed `value`.
pub unsafe extern "C" fn field_setter<T: ObjectType, F: FieldValue, const OFFSET: usize>(
    field: *mut c_void,
    value: *const TVMFFIAny,
) -> c_int {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<()> {
        // SAFETY: the runtime passes a valid borrowed value.
        let view = unsafe { &*(value as *const AnyView<'_>) };
        let new_value: F::Value = view.cast()?;
        // SAFETY: the field belongs to a live object at OFFSET.
        let owner = unsafe { owner_of::<OFFSET>(field) };
        // SAFETY: as above.
        if unsafe { object::closed_state(owner) } == Some(object::Closed::Foreign) {
            return Err(object::Closed::foreign_error(owner));
        }
        if F::INTERIOR_MUTABLE {
            // SAFETY: `field` points to a live `F`; interior mutability synchronises.
            unsafe { &*(field as *const F) }.store(new_value);
            return Ok(());
        }
        let replaced = unsafe {
            // SAFETY: exclusive access while the object is open; no `&` to it exists because
            // Rust seals an object before its first dereference.
            object::with_construction_access(owner, || {
                std::ptr::replace(field as *mut F, F::wrap(new_value))
            })
        };
        match replaced {
            Ok(old) => {
                drop(old);
                Ok(())
            }
            Err(object::Closed::Foreign) => Err(object::Closed::foreign_error(owner)),
            Err(object::Closed::Sealed) => Err(Error::new(
                "AttributeError",
                format!(
                    "Cannot set read-only field of `{}` at offset {OFFSET}: it can only be \
                     written while the object is being constructed; declare it \
                     `#[ffi(rw)] field: tvm_ffi::Rw<T>` to make it writable",
                    T::TYPE_KEY
                ),
            )),
        }
    }));
    match outcome {
        Ok(Ok(())) => 0,
        Ok(Err(err)) => raise(err),
        Err(payload) => {
            crate::boundary::raise_panic("field setter", payload);
            -1
        }
    }
}

/// The creator the runtime calls to make an empty object (auto-init, JSON/pickle loading).
///
/// # Safety
/// Called by the runtime with a writable `out`.
pub unsafe extern "C" fn create_object<T: Reflected>(out: *mut sys::TVMFFIObjectHandle) -> c_int {
    let outcome = std::panic::catch_unwind(|| -> Result<NonNull<TVMFFIObject>> {
        let payload = T::empty_payload().ok_or_else(|| {
            Error::type_error(format!(
                "`{}` has fields without an empty value and cannot be created empty",
                T::TYPE_KEY
            ))
        })?;
        Ok(object::alloc_object_in_state(
            payload,
            T::runtime_type().index,
            object::OPEN,
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
            crate::boundary::raise_panic(T::TYPE_KEY, payload);
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
impl IntoDefault<crate::String> for &str {
    fn into_default(self) -> crate::String {
        crate::String::from(self)
    }
}
impl IntoDefault<crate::Bytes> for &[u8] {
    fn into_default(self) -> crate::Bytes {
        crate::Bytes::from(self)
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

/// A reflected field, as registered with `TVMFFITypeRegisterField`.
pub struct FieldEntry {
    /// Name seen by Python and C++ (the Rust name unless renamed).
    pub name: &'static str,
    /// Doc string.
    pub doc: &'static str,
    /// `kTVMFFIFieldFlagBitMask*` flags.
    pub flags: i64,
    /// Offset from the start of the header.
    pub offset: usize,
    /// Size of the storage.
    pub size: usize,
    /// Alignment of the storage.
    pub alignment: usize,
    /// The runtime's `field_static_type_index`.
    pub static_type_index: i32,
    /// The reflected getter.
    pub getter: sys::TVMFFIFieldGetter,
    /// The reflected setter.
    pub setter: sys::TVMFFIFieldSetter,
    /// The field's `type_schema` JSON.
    pub type_schema: fn() -> std::string::String,
    /// The default value, or the factory function when `flags` has `DefaultFromFactory`.
    pub default: Option<fn() -> Any>,
    /// Extra metadata keys.
    pub metadata: &'static [(&'static str, MetadataValue)],
}

/// `structural = "..."`: how `structural_equal`/`structural_hash` treat the type.
pub mod structural {
    /// No structural comparison (the runtime raises `TypeError`).
    pub const UNSUPPORTED: i32 = crate::sys::kTVMFFISEqHashKindUnsupported;
    /// `"tree"`: compared field by field.
    pub const TREE: i32 = crate::sys::kTVMFFISEqHashKindTreeNode;
    /// `"free-var"`: variables bound by definition points.
    pub const FREE_VAR: i32 = crate::sys::kTVMFFISEqHashKindFreeVar;
    /// `"dag"`: like a tree, sharing-aware.
    pub const DAG: i32 = crate::sys::kTVMFFISEqHashKindDAGNode;
    /// `"const-tree"`: a tree whose nodes may be compared by pointer first.
    pub const CONST_TREE: i32 = crate::sys::kTVMFFISEqHashKindConstTreeNode;
    /// `"unique"`: compared by identity.
    pub const UNIQUE: i32 = crate::sys::kTVMFFISEqHashKindUniqueInstance;
}

/// Whether a [`TypeEntry`] defines a type or declares one defined elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeOrigin {
    /// Defined by this library: registered at load.
    Defined,
    /// Defined elsewhere (C++, another library): its layout is checked at load.
    External,
}

/// A type collected from `#[derive(Object)]`.
pub struct TypeEntry {
    /// Registry key.
    pub key: &'static str,
    /// Parent key (`ffi.Object` for root types).
    pub parent_key: &'static str,
    /// Defined here or declared.
    pub origin: TypeOrigin,
    /// Doc string.
    pub doc: &'static str,
    /// Where the runtime index is stored once registered.
    pub slot: &'static TypeSlot,
    /// `final`: no subtypes.
    pub is_final: bool,
    /// Header plus payload.
    pub total_size: usize,
    /// Structural equality/hash kind ([`structural`]).
    pub structural: i32,
    /// The creator, when every field has an empty value.
    pub creator: Option<sys::TVMFFIObjectCreator>,
    /// Own reflected fields (inherited ones belong to the parent's entry).
    pub fields: &'static [FieldEntry],
    /// `__ffi_shallow_copy__`, when the payload is `Clone`.
    pub shallow_copy: fn() -> Option<Function>,
}

/// What a [`MethodEntry`] registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    /// Takes the object as argument 0.
    Instance,
    /// No object argument.
    Static,
    /// The explicit constructor `__ffi_init__`.
    Init,
}

/// A method collected from `#[ffi_methods]`.
pub struct MethodEntry {
    /// Key of the type the method belongs to.
    pub type_key: &'static str,
    /// Name seen by Python and C++.
    pub name: &'static str,
    /// Doc string.
    pub doc: &'static str,
    /// Instance, static or constructor.
    pub kind: MethodKind,
    /// Creates the function object.
    pub make: fn() -> Function,
    /// The metadata JSON (`{"type_schema":"..."}`).
    pub metadata: fn() -> std::string::String,
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
impl<T: object::RustObject> InitResult<T> for T {
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
impl<T: object::RustObject + Clone> ShallowCopyByClone for &ShallowCopyProbe<T> {
    fn shallow_copy(&self) -> Option<Function> {
        Some(Function::from_packed_named(
            "__ffi_shallow_copy__",
            |args: &[AnyView<'_>]| {
                let this: &ObjectRef<T> = args
                    .first()
                    .ok_or_else(|| Error::type_error("__ffi_shallow_copy__ expects the object"))?
                    .cast()?;
                let index = T::runtime_type().index;
                if this.type_index() != index {
                    // Copying a subtype through its parent's payload would lose its fields.
                    return Err(Error::type_error(format!(
                        "`{}.__ffi_shallow_copy__` cannot copy an object of subtype `{}`",
                        T::TYPE_KEY,
                        this.type_key()
                    )));
                }
                let copy = (**this).clone();
                // The copy stays open: deep copy fixes its fields up through the setters.
                let ptr = object::alloc_object_in_state(copy, index, object::OPEN);
                // SAFETY: a fresh object with one reference, an instance of its type.
                let obj: ObjectRef<Object> = unsafe { ObjectRef::from_raw(ptr) };
                Ok(Any::new(obj))
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

/// The runtime type of a Rust-defined or declared type, for generated `ObjectType` impls.
#[inline]
pub fn resolve(slot: &TypeSlot, key: &str) -> RuntimeType {
    slot.resolve(key)
}
