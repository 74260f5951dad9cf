//! Runtime-checked casts of an [`ObjectRef`] to any type an object converts to without a copy:
//! another `ObjectRef<U>`, or a typed view of the same object (`Array<T>`, `Map<K, V>`,
//! `Function`, ...), checked as C++ `ObjectRef::as<U>` checks (the object's type, and the
//! exact type of every element of a container).
use super::any::{cast_error_named, AnyView, FromAny};
use crate::base::error::Result;
use crate::base::object::{ObjectRef, ObjectType};

impl<T: ObjectType> ObjectRef<T> {
    /// The object as a `B`, or a `TypeError` naming both types ("Cannot convert from type
    /// `Base` to `Derived`"); `self` is consumed either way.
    ///
    /// `B` is an object reference (`ObjectRef<U>` for an ancestor, a subtype or an unrelated
    /// type: the runtime type decides) or a typed view of the object (`Array<T>`, `Map<K, V>`,
    /// `Function`, `Module`, ...). Nothing is converted or copied: a container casts only when
    /// every element is exactly of the element type (`Array<i64>` is no `Array<f64>`, though
    /// `Any::cast` converts one into the other), as C++ `ObjectRef::as<B>` checks. Without a
    /// reference count change when `B` is an `ObjectRef`: [`ObjectRef::try_downcast`] hands the
    /// reference back on failure instead.
    ///
    /// ```
    /// use tvm_ffi::builtin::AnyObject;
    /// use tvm_ffi::{Array, ObjectRef};
    /// let root: ObjectRef<AnyObject> = Array::new([1i64, 2]).unwrap().into_object_ref().into();
    /// let ints: Array<i64> = root.clone().try_cast().unwrap();
    /// assert_eq!(ints.to_vec(), [1, 2]);
    /// let err = root.try_cast::<Array<f64>>().unwrap_err();
    /// assert_eq!(err.to_string(), "TypeError: Cannot convert from type `ffi.Array` to `Array<float>`");
    /// ```
    pub fn try_cast<B: for<'a> FromAny<'a>>(self) -> Result<B> {
        let view = AnyView::of_object(&self);
        match B::from_any_exact(&view) {
            Some(cast) => Ok(cast),
            None => Err(cast_error_named::<B>(&view, &B::type_str())),
        }
    }

    /// The object as a `B` (a new reference), or `None`: the borrowed form of
    /// [`ObjectRef::try_cast`], with the same checks.
    ///
    /// ```
    /// use tvm_ffi::{Array, Map, ObjectRef};
    /// let array = Array::new([1.5f64]).unwrap().into_object_ref();
    /// assert_eq!(array.checked_cast::<Array<f64>>().unwrap().get(0), Some(1.5));
    /// assert!(array.checked_cast::<Array<i64>>().is_none());
    /// assert!(array.checked_cast::<Map<i64, i64>>().is_none());
    /// ```
    pub fn checked_cast<B: for<'a> FromAny<'a>>(&self) -> Option<B> {
        B::from_any_exact(&AnyView::of_object(self))
    }
}
