//! Type attributes (`TVMFFITypeRegisterAttr`): the per-type table of hooks and values such as
//! `__ffi_init__` and `__ffi_shallow_copy__`.
use crate::base::value::{Any, AnyView};

/// A type attribute (`__ffi_init__`, `__ffi_shallow_copy__`, ...) registered for exactly
/// this type index.
///
/// ```
/// use tvm_ffi::{reflection, ObjectType};
/// #[derive(tvm_ffi::Object, Clone)]
/// #[ffi_type(key = "doc_examples.TypeAttr")]
/// #[repr(C)]
/// pub struct Copyable { pub x: i64 }
/// // `Clone` registers the shallow copy that `copy.copy` and deep copies use.
/// assert!(reflection::type_attr(Copyable::type_index(), "__ffi_shallow_copy__").is_some());
/// assert!(reflection::type_attr(Copyable::type_index(), "no_such_attribute").is_none());
/// ```
pub fn type_attr(index: i32, name: &str) -> Option<Any> {
    let raw = crate::base::object::type_info::type_attr_raw(index, name)?;
    // SAFETY: a value the registry holds; AnyView is repr(transparent) over TVMFFIAny.
    let view = unsafe { AnyView::from_raw(raw) };
    Some(view.to_owned().unwrap_or_default())
}

impl crate::call::function::Function {
    /// The function-valued type attribute `name` of exactly the type `index` (its
    /// `__ffi_shallow_copy__`, `__ffi_init__`, ...): `AttributeError` when the type has none,
    /// `TypeError` when the attribute is not a function.
    ///
    /// ```
    /// use tvm_ffi::{Function, ObjectType};
    /// #[derive(tvm_ffi::Object, Clone)]
    /// #[ffi_type(key = "doc_examples.FromTypeAttr")]
    /// #[repr(C)]
    /// pub struct Copyable { pub x: i64 }
    /// assert!(Function::from_type_attr(Copyable::type_index(), "__ffi_shallow_copy__").is_ok());
    /// let missing = Function::from_type_attr(Copyable::type_index(), "no_such_attribute");
    /// assert_eq!(missing.unwrap_err().kind(), "AttributeError");
    /// ```
    pub fn from_type_attr(index: i32, name: &str) -> crate::base::error::Result<Self> {
        let value = type_attr(index, name).ok_or_else(|| {
            crate::base::error::Error::new(
                "AttributeError",
                format!(
                    "the type {} has no attribute `{name}`",
                    crate::base::object::type_info::type_key_of_index(index)
                ),
            )
        })?;
        value.cast()
    }
}
