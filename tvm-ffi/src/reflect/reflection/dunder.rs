//! The hooks of `#[ffi_type(eq, hash, ord, str)]`: the runtime's `__ffi_eq__`,
//! `__ffi_hash__`, `__ffi_compare__` and `__ffi_repr__`, made from the payload's `PartialEq`,
//! `Hash`, `PartialOrd` and `Display`, so that Python (`==`, `hash()`, `<`, `repr()`), C++
//! (`ffi.RecursiveEq`/`Hash`/`Lt`/..., `ReprPrint`) and Rust (the payload's own traits) agree.
//!
//! Each hook is a typed [`Function`] (panics are caught and raised as errors, as for every
//! function). The runtime passes its recursion callback as the last argument; the Rust traits
//! recurse on their own, so it is not used. The traits a hook needs are required through the
//! marker traits below, whose messages name the option and the trait to implement.
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::base::error::{Error, Result};
use crate::base::object::{ObjectRef, ObjectType};
use crate::base::value::Any;
use crate::call::function::Function;

/// Required by `#[ffi_type(eq)]`.
#[diagnostic::on_unimplemented(
    message = "`#[ffi_type(eq)]` needs `{Self}: PartialEq`",
    label = "`{Self}` does not implement `PartialEq`",
    note = "derive or implement `PartialEq` for `{Self}`: `__ffi_eq__` (Python `==`, C++ `ffi.RecursiveEq`) compares with it"
)]
pub trait EqHook: PartialEq {}
impl<T: PartialEq> EqHook for T {}

/// Required by `#[ffi_type(hash)]`.
#[diagnostic::on_unimplemented(
    message = "`#[ffi_type(hash)]` needs `{Self}: Hash`",
    label = "`{Self}` does not implement `Hash`",
    note = "derive or implement `Hash` for `{Self}` (consistently with its `PartialEq`): `__ffi_hash__` (Python `hash()`, C++ `ffi.RecursiveHash`) hashes with it"
)]
pub trait HashHook: Hash {}
impl<T: Hash> HashHook for T {}

/// Required by `#[ffi_type(ord)]`.
#[diagnostic::on_unimplemented(
    message = "`#[ffi_type(ord)]` needs `{Self}: PartialOrd`",
    label = "`{Self}` does not implement `PartialOrd`",
    note = "derive or implement `PartialOrd` (or `Ord`) for `{Self}`: `__ffi_compare__` (Python `<`, `<=`, `>`, `>=`, C++ `ffi.RecursiveLt`, ...) orders with it"
)]
pub trait OrdHook: PartialOrd {}
impl<T: PartialOrd> OrdHook for T {}

/// Required by `#[ffi_type(str)]`.
#[diagnostic::on_unimplemented(
    message = "`#[ffi_type(str)]` needs `{Self}: Display`",
    label = "`{Self}` does not implement `std::fmt::Display`",
    note = "implement `std::fmt::Display` for `{Self}`: `__ffi_repr__` (Python `repr()`/`str()`, C++ `ffi.ReprPrint`) prints with it"
)]
pub trait StrHook: std::fmt::Display {}
impl<T: std::fmt::Display> StrHook for T {}

/// `<key>.<attr>`, the name a hook's errors show.
fn hook_name<T: ObjectType>(attr: &str) -> &'static str {
    Box::leak(format!("{}.{attr}", T::TYPE_KEY).into_boxed_str())
}

/// `__ffi_eq__` of `#[ffi_type(eq)]`: `(lhs, rhs, fn_eq) -> bool`, `*lhs == *rhs`.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_eq__` (generated code for `T` itself).
pub unsafe fn eq_hook<T: ObjectType + EqHook>() -> Function {
    Function::from_typed_named(
        hook_name::<T>("__ffi_eq__"),
        |lhs: ObjectRef<T>, rhs: ObjectRef<T>, _fn_eq: Any| -> bool { *lhs == *rhs },
    )
}

/// The hash `#[ffi_type(hash)]` registers: the payload's `Hash` fed to
/// `std::hash::DefaultHasher::new()` (fixed keys: the same for equal values on every call).
pub fn hash_of<T: Hash + ?Sized>(value: &T) -> i64 {
    let mut hasher = std::hash::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish() as i64
}

/// `__ffi_hash__` of `#[ffi_type(hash)]`: `(self, fn_hash) -> int`, `hash_of` the payload.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_hash__` (generated code for `T` itself).
pub unsafe fn hash_hook<T: ObjectType + HashHook>() -> Function {
    Function::from_typed_named(
        hook_name::<T>("__ffi_hash__"),
        |this: ObjectRef<T>, _fn_hash: Any| -> i64 { hash_of(&*this) },
    )
}

/// `__ffi_compare__` of `#[ffi_type(ord)]`: `(lhs, rhs, fn_cmp) -> int`, -1, 0 or 1 from
/// `partial_cmp`; two values it cannot order raise `TypeError`.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_compare__` (generated code for `T` itself).
pub unsafe fn compare_hook<T: ObjectType + OrdHook>() -> Function {
    Function::from_typed_named(
        hook_name::<T>("__ffi_compare__"),
        |lhs: ObjectRef<T>, rhs: ObjectRef<T>, _fn_cmp: Any| -> Result<i32> {
            match (*lhs).partial_cmp(&*rhs) {
                Some(Ordering::Less) => Ok(-1),
                Some(Ordering::Equal) => Ok(0),
                Some(Ordering::Greater) => Ok(1),
                None => Err(Error::type_error(format!(
                    "two `{}` values are unordered (their `PartialOrd::partial_cmp` is `None`)",
                    T::TYPE_KEY
                ))),
            }
        },
    )
}

/// `__ffi_repr__` of `#[ffi_type(str)]`: `(self, fn_repr) -> str`, the payload's `Display`.
///
/// # Safety
/// The result is registered only as `T`'s `__ffi_repr__` (generated code for `T` itself).
pub unsafe fn repr_hook<T: ObjectType + StrHook>() -> Function {
    Function::from_typed_named(
        hook_name::<T>("__ffi_repr__"),
        |this: ObjectRef<T>, _fn_repr: Any| -> std::string::String {
            // The payload's `Display`, not `ObjectRef`'s (which prints through this hook).
            <T as ToString>::to_string(&*this)
        },
    )
}

/// Compile-time check used by generated code for the fields of a `frozen` type: no field is
/// `Rw<T>`, which Rust code (and, with `#[ffi(rw)]`, Python and C++) could write.
pub const fn assert_frozen_field<F: super::field::FieldValue>() {
    assert!(
        !F::INTERIOR_MUTABLE,
        "a field of a `frozen` type cannot be `tvm_ffi::Rw<T>`: no field of a frozen type is writable; store `T` itself, or remove `frozen`"
    );
}
