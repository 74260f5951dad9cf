//! [`ObjectRef::copy_with`]: a copy of an object with some fields replaced, for objects of any
//! language, as Python's `copy.replace` (`__replace__`) makes one: the type's shallow copy
//! (`__ffi_shallow_copy__`), then the reflected setter of each replaced field.
use super::access::{find_field, no_member};
use super::type_attr::type_attr;
use crate::base::error::{Error, Result};
use crate::base::object::builtin::AnyObject;
use crate::base::object::{type_info, ObjectRef, ObjectType};
use crate::base::value::Any;
use crate::call::function::Function;

/// The type attribute of a copyable type: its shallow copy function.
const SHALLOW_COPY_ATTR: &str = "__ffi_shallow_copy__";

impl<T: ObjectType> ObjectRef<T> {
    /// A new object of the same type, a shallow copy of this one with the fields named in
    /// `replacements` (own or inherited, read-only ones included) set to the given values;
    /// `self` is unchanged.
    ///
    /// Works for objects of any language whose type registers a shallow copy: a `Clone`
    /// Rust type, a copyable C++ type, a Python `@py_class`. Every name is checked before
    /// anything is copied (a missing field raises `AttributeError`); a value the field's setter
    /// refuses raises its error (`TypeError`); a type without a shallow copy raises
    /// `TypeError`.
    ///
    /// ```
    /// use tvm_ffi::{Any, ObjectRef};
    /// #[derive(tvm_ffi::Object, Clone)]
    /// #[ffi_type(key = "doc_examples.CopyWith")]
    /// #[repr(C)]
    /// pub struct Var { pub name: tvm_ffi::String, pub width: i64 }
    /// let x = ObjectRef::new(Var { name: "x".into(), width: 32 });
    /// let y = x.copy_with([("name", Any::new("y"))]).unwrap();
    /// assert_eq!((&*y.name, y.width), ("y", 32));
    /// assert_eq!(&*x.name, "x");
    /// let err = x.copy_with([("depth", Any::new(1))]).unwrap_err();
    /// assert_eq!(err.kind(), "AttributeError");
    /// ```
    pub fn copy_with<'n>(
        &self,
        replacements: impl IntoIterator<Item = (&'n str, Any)>,
    ) -> Result<ObjectRef<T>> {
        let index = self.type_index();
        let replacements: Vec<(&str, Any)> = replacements.into_iter().collect();
        if let Some((name, _)) = replacements
            .iter()
            .find(|(name, _)| find_field(index, name).is_none())
        {
            return Err(no_member("field", name, index));
        }
        let copy = type_attr(index, SHALLOW_COPY_ATTR).ok_or_else(|| {
            Error::type_error(format!(
                "`{}` cannot be copied: its type registers no `{SHALLOW_COPY_ATTR}` (a Rust type \
                 registers one when it derives `Clone`)",
                type_info::type_key_of_index(index)
            ))
        })?;
        let copy: Function = copy.cast()?;
        // As the root type: a copy of a Rust-defined type stays open for its setters until it
        // is cast to `T` below.
        let copy: ObjectRef<AnyObject> = copy.call_as((self.as_object(),))?;
        if copy.ptr_eq(self) || !copy.held_only_by(1) {
            return Err(Error::runtime_error(format!(
                "the `{SHALLOW_COPY_ATTR}` of `{}` did not return a new object",
                type_info::type_key_of_index(index)
            )));
        }
        for (name, value) in replacements {
            // SAFETY: `copy` is a new object that only this function holds (one strong
            // reference, never shared): no other thread can read or write its fields.
            unsafe { copy.set_field(name, value) }?;
        }
        Any::new(copy).cast::<ObjectRef<T>>()
    }
}
