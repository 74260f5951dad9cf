//! TVM-FFI enums (C++ `refl::EnumDef`, Python `tvm_ffi.dataclasses.Enum`/`IntEnum`/`StrEnum`)
//! from Rust enums.
//!
//! `#[derive(tvm_ffi::Enum)]` on a Rust enum of unit variants registers a TVM-FFI enum type
//! (a final child of `ffi.Enum`, `ffi.IntEnum` with `int`, or `ffi.StrEnum` with `str`) and one
//! singleton object per variant, with its integer and string index and attributes, in the
//! type's `__ffi_enum__` state, exactly as `refl::EnumDef` does. The Rust enum converts to and
//! from `Any` as those singletons, so it works as an argument and result from Python and C++;
//! a field holding one is an [`EnumRef<E>`] (stored as the singleton's object pointer, as C++
//! stores an enum reference).
//!
//! ```
//! use tvm_ffi::{Any, Enum};
//!
//! /// A color.
//! #[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
//! #[ffi_type(key = "doc_example.Color")]
//! pub enum Color {
//!     #[ffi(attr(code = 10))]
//!     Red,
//!     #[ffi(attr(code = 20))]
//!     Green,
//! }
//!
//! let any = Any::new(Color::Green);
//! assert_eq!(any.type_key(), "doc_example.Color");
//! assert_eq!(any.cast::<Color>().unwrap(), Color::Green);
//! assert_eq!(format!("{any:?}"), "doc_example.Color.Green");
//! ```
use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use crate::abi::sys::type_index as ti;
use crate::base::object::{type_info, ObjectRef, ObjectType, RuntimeType};
use crate::base::value::{Any, AnyView, FromAny, IntoAny, String, TypeSchema};
use crate::call::function::metadata::MetadataValue;
use crate::reflect::reflection::field::reference_field;

/// The payload of an enum singleton (C++ `EnumObj`): `ffi.Enum`'s fields `_int_index` and
/// `_str_index` (`ffi.IntEnum`/`ffi.StrEnum` alias them as `value`).
#[repr(C)]
pub struct EnumObj {
    /// The canonical integer index (the ordinal, or the value of an `IntEnum`).
    pub int_index: i64,
    /// The canonical string index (the name, or the value of a `StrEnum`).
    pub str_index: String,
}

// SAFETY: enum singletons are laid out as header + `EnumObj` by C++ and by this crate alike;
// their fields never change once registered.
unsafe impl ObjectType for EnumObj {
    const TYPE_KEY: &'static str = "ffi.Enum";
    fn runtime_type() -> RuntimeType {
        static ENUM: OnceLock<RuntimeType> = OnceLock::new();
        *ENUM.get_or_init(|| {
            type_info::lookup_type("ffi.Enum").expect("the runtime registers `ffi.Enum`")
        })
    }
}

/// One variant of an enum, as registered.
pub struct EnumVariant {
    /// The integer index.
    pub int_index: i64,
    /// The string index.
    pub str_index: &'static str,
    /// Attributes (`attrs[name][singleton] = value`, C++ `set_attr`).
    pub attrs: &'static [(&'static str, MetadataValue)],
}

/// The singletons of one enum type, one per variant in declaration order, created when the
/// library loads.
pub struct EnumTable {
    singletons: OnceLock<Box<[ObjectRef<EnumObj>]>>,
}

impl EnumTable {
    /// An empty table.
    pub const fn new() -> Self {
        EnumTable {
            singletons: OnceLock::new(),
        }
    }

    /// Records the singletons (called by registration, once).
    pub(crate) fn set(&self, singletons: Vec<ObjectRef<EnumObj>>) {
        let _ = self.singletons.set(singletons.into_boxed_slice());
    }

    /// The singletons.
    ///
    /// # Panics
    /// If the enum type did not register (see `tvm_ffi::registry::load_errors`).
    pub fn get(&self, key: &str) -> &[ObjectRef<EnumObj>] {
        self.singletons.get().map(|s| &s[..]).unwrap_or_else(|| {
            panic!(
                "TVM-FFI enum `{key}` is not registered by this library: see \
                 tvm_ffi::registry::load_errors()"
            )
        })
    }
}

impl Default for EnumTable {
    fn default() -> Self {
        Self::new()
    }
}

/// A Rust enum registered as a TVM-FFI enum; implemented by `#[derive(tvm_ffi::Enum)]`.
///
/// # Safety
/// `ordinal` and `from_ordinal` must be inverse over `VARIANTS`, and `table` must hold the
/// type's singletons in that order.
pub unsafe trait EnumType: Copy + Send + Sync + 'static {
    /// The registry key.
    const TYPE_KEY: &'static str;
    /// The variants, in declaration order.
    const VARIANTS: &'static [EnumVariant];
    /// The runtime type of the singletons (registering this library's types first, if that
    /// has not happened yet).
    fn runtime_type() -> RuntimeType;
    /// The singleton table.
    fn table() -> &'static EnumTable;
    /// The variant's position in `VARIANTS`.
    fn ordinal(self) -> usize;
    /// The variant at `ordinal`.
    fn from_ordinal(ordinal: usize) -> Option<Self>;
    /// The variant as a `'static` constant.
    fn as_static(self) -> &'static Self;

    /// The singleton object of this variant.
    fn singleton(self) -> &'static ObjectRef<EnumObj> {
        // Registered (singletons made) once the runtime type is known.
        let _ = Self::runtime_type();
        &Self::table().get(Self::TYPE_KEY)[self.ordinal()]
    }

    /// The variant whose string index (name, or value of a `str` enum) is `index`, as C++
    /// `EnumObj::_GetByStrIndex` finds it.
    fn from_str_index(index: &str) -> Option<Self> {
        Self::VARIANTS
            .iter()
            .position(|v| v.str_index == index)
            .and_then(Self::from_ordinal)
    }

    /// The variant whose integer index (ordinal, or value of an `int` enum) is `index`, as C++
    /// `EnumObj::_GetByIntIndex` finds it.
    fn from_int_index(index: i64) -> Option<Self> {
        Self::VARIANTS
            .iter()
            .position(|v| v.int_index == index)
            .and_then(Self::from_ordinal)
    }

    /// The variant a singleton (or a copy of one) stands for.
    fn from_object(obj: &ObjectRef<EnumObj>) -> Option<Self> {
        if obj.type_index() != Self::runtime_type().index {
            return None;
        }
        let table = Self::table().get(Self::TYPE_KEY);
        if let Some(i) = table.iter().position(|s| s.ptr_eq(obj)) {
            return Self::from_ordinal(i);
        }
        // Not a registered singleton (a copy, or an entry added from Python): by its indices.
        Self::VARIANTS
            .iter()
            .position(|v| v.int_index == obj.int_index && v.str_index == &*obj.str_index)
            .and_then(Self::from_ordinal)
    }
}

/// A new enum object of type `index` (a singleton, or a copy as C++'s shallow copy makes).
///
/// # Safety
/// `index` must be an enum type (whose payload is an `EnumObj`).
pub(crate) unsafe fn new_enum_object(
    index: i32,
    int_index: i64,
    str_index: String,
) -> ObjectRef<EnumObj> {
    // SAFETY: `index` is an enum type (the caller's contract).
    let ptr = unsafe {
        crate::base::object::alloc_object(
            EnumObj {
                int_index,
                str_index,
            },
            index,
            0,
        )
    };
    // SAFETY: a fresh object of an enum type (an `EnumObj` payload) with one reference.
    unsafe { ObjectRef::from_raw(ptr) }
}

/// What `#[derive(Enum)]` generates code against (re-exported through `__private`).
pub(crate) mod support {
    use super::{new_enum_object, EnumType};
    use crate::base::object::ObjectRef;
    use crate::base::value::{Any, AnyView, String};
    use crate::reflect::enums::EnumObj;

    /// Which runtime enum base a Rust enum derives from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum EnumKind {
        /// `ffi.Enum`: integer index = ordinal, string index = name.
        Plain,
        /// `ffi.IntEnum`: integer index = the variant's value, string index = name.
        Int,
        /// `ffi.StrEnum`: integer index = ordinal, string index = the variant's value.
        Str,
    }

    impl EnumKind {
        /// The parent type's key.
        pub const fn parent_key(self) -> &'static str {
            match self {
                EnumKind::Plain => "ffi.Enum",
                EnumKind::Int => "ffi.IntEnum",
                EnumKind::Str => "ffi.StrEnum",
            }
        }
    }

    /// The creator of the enum type `E`: an empty enum object (Python fills its indices through
    /// `ffi.Enum`'s setters when it adds an entry).
    ///
    /// # Safety
    /// Called by the runtime with a writable `out`.
    pub unsafe extern "C" fn create_enum_object<E: EnumType>(
        out: *mut crate::abi::sys::TVMFFIObjectHandle,
    ) -> std::ffi::c_int {
        match crate::base::error::panic::catch(|| {
            // SAFETY: `E`'s runtime type is its enum type (the `EnumType` contract).
            unsafe { new_enum_object(E::runtime_type().index, 0, String::default()) }
        }) {
            Ok(obj) => {
                // SAFETY: `out` is writable; the caller takes the one reference.
                unsafe {
                    out.write(obj.into_raw().as_ptr() as crate::abi::sys::TVMFFIObjectHandle)
                };
                0
            }
            Err(payload) => {
                crate::base::error::panic::raise_panic(E::TYPE_KEY, payload);
                -1
            }
        }
    }

    /// `IntoAny` of a derived enum: its singleton.
    pub fn enum_into_any<E: EnumType>(value: E) -> Any {
        Any::new(value.singleton().clone())
    }

    /// `FromAny` of a derived enum: a singleton of its type.
    pub fn enum_try_cast<E: EnumType>(view: &AnyView<'_>) -> Option<E> {
        let obj = view.checked_cast::<&ObjectRef<EnumObj>>()?;
        E::from_object(obj)
    }

    /// Whether `values[i]` differs from every other value (generated code checks an `int` enum's
    /// indices with it at compile time).
    pub const fn enum_value_is_unique(values: &[i64], i: usize) -> bool {
        let mut j = 0;
        while j < values.len() {
            if j != i && values[j] == values[i] {
                return false;
            }
            j += 1;
        }
        true
    }
}

/// A field holding a variant of the enum `E`, stored as a reference to its singleton (8 bytes,
/// as C++ stores an enum reference, so C++ and Python subclasses see the layout they expect).
///
/// ```
/// # use tvm_ffi::{Enum, EnumRef};
/// # #[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
/// # #[ffi_type(key = "doc_example.Shade")]
/// # pub enum Shade { Light, Dark }
/// let field: EnumRef<Shade> = Shade::Dark.into();
/// assert_eq!(field.get(), Shade::Dark);
/// assert!(matches!(field.get(), Shade::Dark));
/// ```
#[repr(transparent)]
pub struct EnumRef<E> {
    /// Invariant: a singleton of `E`'s type standing for a variant of `E`.
    obj: ObjectRef<EnumObj>,
    _enum: PhantomData<E>,
}

impl<E: EnumType> EnumRef<E> {
    /// A reference to `value`'s singleton.
    pub fn new(value: E) -> Self {
        EnumRef {
            obj: value.singleton().clone(),
            _enum: PhantomData,
        }
    }

    /// The variant.
    pub fn get(&self) -> E {
        E::from_object(&self.obj).expect("an EnumRef holds a variant of its enum")
    }

    /// The singleton object.
    pub fn as_object_ref(&self) -> &ObjectRef<EnumObj> {
        &self.obj
    }
}

impl<E: EnumType> From<E> for EnumRef<E> {
    fn from(value: E) -> Self {
        EnumRef::new(value)
    }
}

impl<E> Clone for EnumRef<E> {
    fn clone(&self) -> Self {
        EnumRef {
            obj: self.obj.clone(),
            _enum: PhantomData,
        }
    }
}

impl<E: EnumType + PartialEq> PartialEq for EnumRef<E> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<E: EnumType + PartialEq> PartialEq<E> for EnumRef<E> {
    fn eq(&self, other: &E) -> bool {
        self.get() == *other
    }
}

impl<E: EnumType + fmt::Debug> fmt::Debug for EnumRef<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

impl<E: EnumType> TypeSchema for EnumRef<E> {
    fn type_str() -> std::string::String {
        E::TYPE_KEY.into()
    }
}

impl<E: EnumType> IntoAny for EnumRef<E> {
    fn into_any(self) -> Any {
        Any::new(self.obj)
    }
}

impl<'a, E: EnumType> FromAny<'a> for EnumRef<E> {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        support::enum_try_cast::<E>(view).map(EnumRef::new)
    }
}

// An 8-byte pointer to the singleton object; C++ reports enum reference fields as `ffi.Object`.
// Required: unset (null) until the runtime sets it.
reference_field! {
    [E: EnumType] EnumRef<E>: ti::kTVMFFIObject, None;
}

// SAFETY: repr(transparent) down to one `NonNull` object pointer.
unsafe impl<E: EnumType> crate::reflect::reflection::field::NullablePointer for EnumRef<E> {}
