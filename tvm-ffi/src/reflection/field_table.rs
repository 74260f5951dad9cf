//! The field table of a Rust-defined object type: one const entry per field, built by the
//! generic constructors below from the field's type and offset, so that `#[derive(Object)]`
//! writes one line per field instead of accessors, checks and match arms of its own.
//!
//! Everything the runtime and [`Reflected`] do with a payload is derived from the table: the
//! registered fields ([`FieldEntry`]), setting up, inspecting and dropping an open payload
//! (the fields' [`FieldStorage`] and the other [`PayloadPart`]s: the parent's payload and
//! Rust-only fields), and the layout fingerprint compared across libraries
//! ([`layout_fingerprint`]).
use super::create::Reflected;
use super::field::{field_getter, field_setter, FieldValue};
use crate::metadata::MetadataValue;
use crate::object::{ObjectCell, ObjectType};
use crate::sys;
use crate::value::{Any, TypeSchema};

/// How a payload's open state treats one reflected field (see [`Reflected`]).
pub struct FieldStorage {
    /// Writes the field's empty value, or unset for a required reference.
    init_empty: unsafe fn(*mut u8),
    /// Whether the field is unset.
    is_unset: unsafe fn(*const u8) -> bool,
    /// Drops the field unless it is unset.
    drop_open: unsafe fn(*mut u8),
    /// Whether foreign code may write it after construction (an `Rw<T>`).
    interior_mutable: bool,
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

/// The entry of a field of type `S` of object type `T`, `OFFSET` bytes from the header (its
/// payload offset plus the 24-byte header). Evaluating it refuses `Rw<Rw<T>>` (a read would
/// take the same lock twice) and a storage whose static type index misdescribes its size
/// (`-1`, "any", exactly for a 16-byte `Any`).
///
/// The entry is trusted only through [`Reflected`] and the registry's `Trusted`, whose
/// implementor states that `OFFSET` is the field's.
#[allow(clippy::too_many_arguments)]
pub const fn field<T: ObjectType, S: FieldValue, const OFFSET: usize>(
    name: &'static str,
    doc: &'static str,
    flags: i64,
    default: Option<fn() -> Any>,
    metadata: &'static [(&'static str, MetadataValue)],
) -> FieldEntry {
    assert!(
        !S::NESTED_INTERIOR_MUTABILITY,
        "a field cannot be `Rw<Rw<T>>`: reading it would take the same lock twice; declare it `Rw<T>`"
    );
    // The runtime and Python subclasses copy and destroy a field of index -1 as a 16-byte Any.
    let is_any = std::mem::size_of::<S>() == std::mem::size_of::<sys::TVMFFIAny>();
    assert!(
        (S::STATIC_TYPE_INDEX == sys::type_index::kTVMFFIAny) == is_any,
        "a field storage reports the static type index -1 (\"any\") exactly when it is a 16-byte `Any`: the runtime copies and destroys such fields as one"
    );
    FieldEntry {
        name,
        doc,
        flags,
        offset: OFFSET,
        size: std::mem::size_of::<S>(),
        alignment: std::mem::align_of::<S>(),
        static_type_index: S::STATIC_TYPE_INDEX,
        getter: field_getter::<S, OFFSET>,
        setter: field_setter::<T, S, OFFSET>,
        type_schema: <S::Value as TypeSchema>::type_schema,
        default,
        metadata,
        storage: FieldStorage {
            init_empty: init_empty_field::<S>,
            is_unset: is_unset_field::<S>,
            drop_open: drop_open_field::<S>,
            interior_mutable: S::INTERIOR_MUTABLE,
        },
    }
}

/// # Safety
/// `field` points to uninitialised storage for `S`.
unsafe fn init_empty_field<S: FieldValue>(field: *mut u8) {
    let field = field.cast::<S>();
    match S::empty() {
        // SAFETY: the caller's contract.
        Some(value) => unsafe { field.write(value) },
        // SAFETY: a required reference (`empty` is `None` only for `MAY_BE_UNSET` storage).
        None => unsafe { S::write_unset(field) },
    }
}

/// # Safety
/// `field` points to storage for `S` that is valid or unset.
unsafe fn is_unset_field<S: FieldValue>(field: *const u8) -> bool {
    // SAFETY: the caller's contract.
    S::MAY_BE_UNSET && unsafe { S::is_unset(field.cast::<S>()) }
}

/// # Safety
/// `field` points to storage for `S` that is valid or unset, reachable by no one else.
unsafe fn drop_open_field<S: FieldValue>(field: *mut u8) {
    // SAFETY: the caller's contract.
    if !unsafe { is_unset_field::<S>(field) } {
        // SAFETY: a set field is a valid `S`.
        unsafe { std::ptr::drop_in_place(field.cast::<S>()) }
    }
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
    init_empty: unsafe fn(*mut u8),
    /// Drops what is set of the part.
    drop_open: unsafe fn(*mut u8),
    /// Whether an instance allocated outside Rust (all zero, then filled through the
    /// setters) holds a valid part.
    foreign_compatible: bool,
}

/// The parent payload `P` of a type, at payload offset `OFFSET` (zero, as generated code
/// checks).
pub const fn base_part<P: Reflected, const OFFSET: usize>(name: &'static str) -> PayloadPart {
    PayloadPart {
        name,
        offset: OFFSET,
        size: std::mem::size_of::<P>(),
        kind: PartKind::Base {
            key: P::TYPE_KEY,
            first_unset: base_first_unset::<P>,
        },
        init_empty: base_init_empty::<P>,
        drop_open: base_drop_open::<P>,
        foreign_compatible: P::FOREIGN_COMPATIBLE,
    }
}

/// # Safety
/// As [`Reflected::unset_required_field`], for `part` pointing to a `P`.
unsafe fn base_first_unset<P: Reflected>(part: *const u8) -> Option<&'static str> {
    // SAFETY: the caller's contract.
    unsafe { P::unset_required_field(part.cast::<P>()) }
}

/// # Safety
/// As [`Reflected::init_empty`], for `part` pointing to a `P`.
unsafe fn base_init_empty<P: Reflected>(part: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { P::init_empty(part.cast::<P>()) }
}

/// # Safety
/// As [`Reflected::drop_open`], for `part` pointing to a `P`.
unsafe fn base_drop_open<P: Reflected>(part: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { P::drop_open(part.cast::<P>()) }
}

/// A Rust-only field of type `S` at payload offset `OFFSET`, written as `S::default()` in a
/// fresh payload. `build` names the expansion (see `PartKind::Skipped`).
pub const fn skipped_part<S: Default + Send + Sync + 'static, const OFFSET: usize>(
    name: &'static str,
    build: &'static str,
) -> PayloadPart {
    PayloadPart {
        name,
        offset: OFFSET,
        size: std::mem::size_of::<S>(),
        kind: PartKind::Skipped {
            type_name: std::any::type_name::<S>,
            build,
        },
        init_empty: skipped_init::<S>,
        drop_open: skipped_drop::<S>,
        // Rust-only memory that an instance allocated outside Rust never initialises.
        foreign_compatible: false,
    }
}

/// # Safety
/// `part` points to uninitialised storage for `S`.
unsafe fn skipped_init<S: Default>(part: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { part.cast::<S>().write(S::default()) }
}

/// # Safety
/// `part` points to a valid `S` that no one can reach any more.
unsafe fn skipped_drop<S>(part: *mut u8) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::drop_in_place(part.cast::<S>()) }
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
