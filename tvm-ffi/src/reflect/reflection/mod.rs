//! Reflection: how the runtime sees and reaches the fields of Rust-defined object types, and
//! queries of what the runtime knows about any registered type.
//!
//! For Rust-defined types (what `#[derive(Object)]` and `#[ffi_methods]` generate code for):
//! - [`Rw<T>`]: the storage of a field that foreign code may write after construction;
//! - the construction state that keeps the runtime's setters away from objects Rust has seen
//!   (`construction`);
//! - the field storage types and the generic getter and setter (`field`);
//! - the field table generated code declares, and what is derived from it (`field_table`);
//! - the creator, defaults, explicit constructors and shallow copy (`create`);
//! - the hooks of `#[ffi_type(eq, hash, ord, str)]` and the check of `frozen` (`dunder`).
//!
//! The generic functions are instantiated by generated code through `tvm_ffi::__private`;
//! [`crate::registry`] hands them to libtvm_ffi when the library loads.
//!
//! For every registered type, Rust-defined or not: [`lookup_type`], [`type_key_of_index`],
//! [`fields`], [`methods`], [`type_attr`]; and for any object, its fields and methods by name
//! ([`ObjectRef::get_field`](crate::ObjectRef::get_field), `set_field`, `call_method`,
//! `method`), own or inherited.
mod access;
pub(crate) mod construction;
mod copy_with;
pub(crate) mod create;
pub(crate) mod dunder;
pub(crate) mod field;
pub(crate) mod field_table;
pub(crate) mod member;
pub(crate) mod reflected;
mod rw;
mod type_attr;
pub(crate) mod type_table;

pub use crate::base::object::type_info::lookup_type;
pub use access::{method, method_of_type, FieldGetter};
pub use rw::Rw;
pub use type_attr::type_attr;
pub use type_table::{fields, is_instance_index, methods, type_key_of_index};
