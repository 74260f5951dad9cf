//! The trait of a Rust-defined object type with reflected fields, below everything that
//! builds, seals or drops such objects (construction state, creators, field accessors).
use crate::base::object::ObjectType;

/// A Rust-defined object type with reflected fields (or a declaration of a type defined
/// elsewhere); implemented by `#[derive(Object)]`.
///
/// # Safety
/// `init_empty` must leave every field valid or (for `MAY_BE_UNSET` storage) unset;
/// `unset_required_field` must find every unset field; `drop_open` must drop every field that
/// is set and no other; `FOREIGN_COMPATIBLE` may only be true when every byte of the payload
/// is a reflected field whose all-zero pattern is valid or unset.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI object type",
    label = "`#[ffi(base)]` needs a `#[derive(Object)]` struct (or an `external` declaration)",
    note = "the base field holds the parent type's payload; declare the parent with `#[derive(Object)]`"
)]
pub unsafe trait Reflected: ObjectType {
    /// `final`: no subtypes allowed.
    const IS_FINAL: bool;
    /// Whether the payload consists of reflected fields only, so that an instance allocated
    /// outside Rust (a Python subclass) is a valid payload once its required fields are set.
    const FOREIGN_COMPATIBLE: bool;
    /// Writes the payload of a fresh object the runtime is about to fill: `Default` when the
    /// type implements it (so `init = false` fields keep the author's values), else each
    /// field's empty value, with required references unset.
    ///
    /// # Safety
    /// `payload` points to uninitialised memory for `Self`.
    unsafe fn init_empty(payload: *mut Self);
    /// The name of the first required field that is unset, if any.
    ///
    /// # Safety
    /// `payload` points to a payload whose fields are each valid or unset.
    unsafe fn unset_required_field(payload: *const Self) -> Option<&'static str>;
    /// Drops the fields that are set.
    ///
    /// # Safety
    /// `payload` points to a payload whose fields are each valid or unset, and which no one
    /// can reach any more.
    unsafe fn drop_open(payload: *mut Self);
}
