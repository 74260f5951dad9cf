//! The trait of a Rust-defined object type with reflected fields and the table it is made of
//! (fields, the other payload parts), below everything that builds, seals or drops such
//! objects (construction state, creators, field accessors): everything done with a payload is
//! derived from the table, as is the layout fingerprint compared across libraries.
use crate::abi::sys;
use crate::base::object::{ObjectCell, ObjectType};
use crate::base::value::Any;
use crate::call::function::metadata::MetadataValue;

/// A Rust-defined object type with reflected fields (or a declaration of a type defined
/// elsewhere); implemented by `#[derive(Object)]` from its field table.
///
/// # Safety
/// `FIELDS` and `PARTS` must describe the payload exactly: every reflected field (with its
/// offset from the header and its storage type) and every other part (the parent's payload,
/// Rust-only fields), each once. `init_empty` must leave every field valid or (for
/// `MAY_BE_UNSET` storage) unset.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI object type",
    label = "`#[ffi(base)]` needs a `#[derive(Object)]` struct (or an `external` declaration)",
    note = "the base field holds the parent type's payload; declare the parent with `#[derive(Object)]`"
)]
pub unsafe trait Reflected: ObjectType {
    /// `final`: no subtypes allowed.
    const IS_FINAL: bool;
    /// The reflected fields, in declaration order.
    const FIELDS: &'static [FieldEntry];
    /// The parent's payload and the Rust-only fields.
    const PARTS: &'static [PayloadPart];
    /// Whether the payload consists of reflected fields only, so that an instance allocated
    /// outside Rust (a Python subclass) is a valid payload once its required fields are set.
    const FOREIGN_COMPATIBLE: bool = foreign_compatible(Self::PARTS);
    /// The first `Rw` field (of this type or a parent) holding more than a plain number (a
    /// string, an object, an `Any`): an instance allocated outside Rust (a Python subclass)
    /// cannot be used from Rust then, because the runtime's shallow copy of such an instance
    /// reads the field without Rust's lock (a `set` meanwhile could free the value it copies).
    const COPY_RACY_FIELD: Option<&'static str> = copy_racy_field(Self::FIELDS, Self::PARTS);
    /// Writes the payload of a fresh object the runtime is about to fill: `Default` when the
    /// type implements it (so `init = false` fields keep the author's values), else each
    /// field's empty value, with required references unset.
    ///
    /// # Safety
    /// `payload` points to uninitialised memory for `Self`.
    unsafe fn init_empty(payload: *mut Self) {
        // SAFETY: the caller's contract; the tables describe the payload (the trait's).
        unsafe { init_fields(payload) }
    }
    /// The name of the first required field that is unset, if any.
    ///
    /// # Safety
    /// `payload` points to a payload whose fields are each valid or unset.
    unsafe fn unset_required_field(payload: *const Self) -> Option<&'static str> {
        // SAFETY: the caller's contract; the tables describe the payload (the trait's).
        unsafe { first_unset(payload) }
    }
    /// Drops the fields that are set.
    ///
    /// # Safety
    /// `payload` points to a payload whose fields are each valid or unset, and which no one
    /// can reach any more.
    unsafe fn drop_open(payload: *mut Self) {
        // SAFETY: as above.
        unsafe { drop_fields(payload) }
    }
}

/// How a payload's open state treats one reflected field (see [`Reflected`]).
pub struct FieldStorage {
    /// Writes the field's empty value, or unset for a required reference.
    pub(super) init_empty: unsafe fn(*mut u8),
    /// Whether the field is unset.
    pub(super) is_unset: unsafe fn(*const u8) -> bool,
    /// Drops the field unless it is unset.
    pub(super) drop_open: unsafe fn(*mut u8),
    /// Whether foreign code may write it after construction (an `Rw<T>`).
    pub(super) interior_mutable: bool,
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
    /// The open-payload operations of the storage.
    pub storage: FieldStorage,
}

/// What a [`PayloadPart`] is.
pub enum PartKind {
    /// The parent's payload (`#[ffi(base)]`), of the type registered as `key`.
    Base {
        /// The parent's type key.
        key: &'static str,
        /// The parent's first unset required field.
        first_unset: unsafe fn(*const u8) -> Option<&'static str>,
    },
    /// A Rust-only field (`#[ffi(skip)]`): its type's name and the build that laid it out
    /// (a type name and size say nothing of a shape another build may have changed).
    Skipped {
        /// `std::any::type_name` of the field.
        type_name: fn() -> &'static str,
        /// A number unique to the expansion that declared the field.
        build: &'static str,
    },
}

/// A part of a payload that is not a reflected field: the parent's payload or a Rust-only
/// field.
pub struct PayloadPart {
    /// The Rust field name.
    pub name: &'static str,
    /// Offset from the start of the payload.
    pub offset: usize,
    /// Size of the part.
    pub size: usize,
    /// Base or skipped.
    pub kind: PartKind,
    /// Writes the part of a fresh payload.
    pub(super) init_empty: unsafe fn(*mut u8),
    /// Drops what is set of the part.
    pub(super) drop_open: unsafe fn(*mut u8),
    /// Whether an instance allocated outside Rust (all zero, then filled through the
    /// setters) holds a valid part.
    pub(super) foreign_compatible: bool,
    /// A base part's [`Reflected::COPY_RACY_FIELD`].
    pub(super) copy_racy_field: Option<&'static str>,
}

/// Whether a field's storage holds more than a plain number (`Any` storage, or an object
/// pointer): what the runtime's shallow copy of a Python subclass instance copies by taking a
/// reference, without any lock.
pub(crate) const fn holds_reference(static_type_index: i32) -> bool {
    static_type_index == sys::type_index::kTVMFFIAny
        || static_type_index >= sys::type_index::kTVMFFIStaticObjectBegin
}

/// See [`Reflected::COPY_RACY_FIELD`].
pub const fn copy_racy_field(fields: &[FieldEntry], parts: &[PayloadPart]) -> Option<&'static str> {
    let mut i = 0;
    while i < parts.len() {
        if let Some(name) = parts[i].copy_racy_field {
            return Some(name);
        }
        i += 1;
    }
    let mut i = 0;
    while i < fields.len() {
        if fields[i].storage.interior_mutable && holds_reference(fields[i].static_type_index) {
            return Some(fields[i].name);
        }
        i += 1;
    }
    None
}

/// Whether every part of a payload is valid when allocated outside Rust (reflected fields
/// always are, once their required references are set).
pub const fn foreign_compatible(parts: &[PayloadPart]) -> bool {
    let mut i = 0;
    while i < parts.len() {
        if !parts[i].foreign_compatible {
            return false;
        }
        i += 1;
    }
    true
}

/// The address of the field of `T` at header offset `offset`, in `payload`.
fn field_ptr<T>(payload: *const T, offset: usize) -> *const u8 {
    (payload as *const u8).wrapping_add(offset - ObjectCell::<T>::PAYLOAD_OFFSET)
}

/// Writes every part and field of a fresh payload (see [`Reflected::init_empty`]).
///
/// # Safety
/// `payload` points to uninitialised memory for `T`, whose tables describe it.
pub unsafe fn init_fields<T: Reflected>(payload: *mut T) {
    for part in T::PARTS {
        // SAFETY: the part's storage, uninitialised (the caller's contract).
        unsafe { (part.init_empty)((payload as *mut u8).add(part.offset)) }
    }
    for field in T::FIELDS {
        // SAFETY: the field's storage, uninitialised (the caller's contract).
        unsafe { (field.storage.init_empty)(field_ptr(payload, field.offset) as *mut u8) }
    }
}

/// The name of the first unset required field (see [`Reflected::unset_required_field`]).
///
/// # Safety
/// `payload` points to a payload of `T` whose parts and fields are each valid or unset.
pub unsafe fn first_unset<T: Reflected>(payload: *const T) -> Option<&'static str> {
    for part in T::PARTS {
        if let PartKind::Base { first_unset, .. } = part.kind {
            // SAFETY: the parent's payload (the caller's contract).
            if let Some(name) = unsafe { first_unset((payload as *const u8).add(part.offset)) } {
                return Some(name);
            }
        }
    }
    T::FIELDS
        .iter()
        // SAFETY: the field's storage, valid or unset (the caller's contract).
        .find(|field| unsafe { (field.storage.is_unset)(field_ptr(payload, field.offset)) })
        .map(|field| field.name)
}

/// Drops what is set of an open payload (see [`Reflected::drop_open`]).
///
/// # Safety
/// `payload` points to a payload of `T` whose parts and fields are each valid or unset, and
/// which no one can reach any more.
pub unsafe fn drop_fields<T: Reflected>(payload: *mut T) {
    for part in T::PARTS {
        // SAFETY: the part's storage (the caller's contract).
        unsafe { (part.drop_open)((payload as *mut u8).add(part.offset)) }
    }
    for field in T::FIELDS {
        // SAFETY: the field's storage (the caller's contract).
        unsafe { (field.storage.drop_open)(field_ptr(payload, field.offset) as *mut u8) }
    }
}

/// The Rust-level layout of a type (every part and field with its offset, size and
/// mutability), compared when another library registered the same key: built once, at
/// registration, from the tables.
pub fn layout_fingerprint(
    total_size: usize,
    fields: &[FieldEntry],
    parts: &[PayloadPart],
) -> std::string::String {
    use std::fmt::Write;
    let mut layout = format!("size={total_size};");
    let mut build_written = false;
    for part in parts {
        // Writing to a `String` cannot fail.
        let _ = match &part.kind {
            PartKind::Base { key, .. } => write!(layout, "base={key};"),
            PartKind::Skipped { type_name, build } => {
                if !std::mem::replace(&mut build_written, true) {
                    let _ = write!(layout, "build={build};");
                }
                write!(
                    layout,
                    "skip {}@{}:{}:{};",
                    part.name,
                    part.offset,
                    part.size,
                    type_name()
                )
            }
        };
    }
    for field in fields {
        let _ = write!(
            layout,
            "{}@{}:{}:{}:{};",
            field.name,
            field.offset - std::mem::size_of::<sys::TVMFFIObject>(),
            field.size,
            if field.storage.interior_mutable {
                "rw"
            } else {
                "ro"
            },
            (field.type_schema)()
        );
    }
    layout
}
