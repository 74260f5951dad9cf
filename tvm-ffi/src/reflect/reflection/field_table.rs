//! The field table of a Rust-defined object type: one const entry per field, built by the
//! generic constructors below from the field's type and offset, so that `#[derive(Object)]`
//! writes one line per field instead of accessors, checks and match arms of its own. The
//! table's types and what is derived from them live in `reflected`.
use super::field::{field_getter, field_setter, FieldValue};
use super::reflected::{FieldEntry, FieldStorage, PartKind, PayloadPart, Reflected};
use crate::abi::sys;
use crate::base::object::ObjectType;
use crate::base::value::{Any, TypeSchema};
use crate::call::function::metadata::MetadataValue;

/// The entry of a field of type `S` of object type `T`, `OFFSET` bytes from the header (its
/// payload offset plus the 24-byte header). Evaluating it refuses `Rw<Rw<T>>` (two locks for
/// one value, which nothing needs) and a storage whose static type index misdescribes its size
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
        "a field cannot be `Rw<Rw<T>>`: one `Rw` already makes it writable from every language; declare it `Rw<T>`"
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
        getter: field_getter::<T, S, OFFSET>,
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
        copy_racy_field: P::COPY_RACY_FIELD,
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
        copy_racy_field: None,
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
