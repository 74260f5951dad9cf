//! [`Array<T>`]: the runtime's immutable `ffi.Array`, typed on the Rust side.
use std::marker::PhantomData;

use crate::error::Result;
use crate::function::{impl_into_arg_borrowed, object_view, GlobalCache};
use crate::object::builtin::ArrayObj;
use crate::object::ObjectRef;
use crate::sys::TVMFFIAny;
use crate::value::{Any, AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};

/// An immutable, reference-counted array (`ffi.Array`, Python `list`/`tuple` on the way in).
///
/// Element types are checked when an array is converted from an `Any` (as C++ does), so
/// [`Array::get`] and iteration cannot fail afterwards.
#[repr(transparent)]
pub struct Array<T> {
    obj: ObjectRef<ArrayObj>,
    _elem: PhantomData<fn() -> T>,
}

impl<T> Clone for Array<T> {
    fn clone(&self) -> Self {
        Array {
            obj: self.obj.clone(),
            _elem: PhantomData,
        }
    }
}

impl<T> Array<T> {
    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.obj.seq.size as usize
    }

    /// Whether the array is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as borrowed views.
    #[inline]
    pub fn as_views(&self) -> &[AnyView<'_>] {
        // SAFETY: ArrayObj's cell points to `size` TVMFFIAny elements owned by the array.
        unsafe { AnyView::slice_from_raw(self.obj.seq.data as *const TVMFFIAny, self.len()) }
    }

    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<ArrayObj> {
        &self.obj
    }
    /// Unwraps into the object.
    pub fn into_object_ref(self) -> ObjectRef<ArrayObj> {
        self.obj
    }
    /// Wraps an array object without checking element types.
    pub fn from_object_ref(obj: ObjectRef<ArrayObj>) -> Self {
        Array {
            obj,
            _elem: PhantomData,
        }
    }
}

impl<T: TryIntoAny> Array<T> {
    /// Builds an array from Rust values.
    ///
    /// ```
    /// let a = tvm_ffi::Array::new([1i64, 2, 3]).unwrap();
    /// assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    /// ```
    pub fn new(items: impl IntoIterator<Item = T>) -> Result<Self> {
        static MAKE: GlobalCache = GlobalCache::new("ffi.Array");
        let items: Vec<Any> = super::try_collect(items.into_iter(), T::try_into_any)?;
        let out = MAKE.get()?.call(items.as_slice())?;
        Ok(Array::from_object_ref(out.cast::<ObjectRef<ArrayObj>>()?))
    }
}

impl<T: for<'a> FromAny<'a>> Array<T> {
    /// Element `index`, converted.
    pub fn get(&self, index: usize) -> Option<T> {
        self.as_views()
            .get(index)
            .map(|v| T::try_cast(v).expect("element type checked on entry"))
    }

    /// Iterates over converted elements.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.as_views()
            .iter()
            .map(|v| T::try_cast(v).expect("element type checked on entry"))
    }
}

impl<T: for<'a> FromAny<'a>> std::fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_views().iter()).finish()
    }
}

impl<T: TypeSchema> TypeSchema for Array<T> {
    fn type_str() -> String {
        format!("Array<{}>", T::type_str())
    }
    fn type_schema() -> String {
        format!(r#"{{"type":"ffi.Array","args":[{}]}}"#, T::type_schema())
    }
}

impl<T> IntoAny for Array<T> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<T> IntoAny for &Array<T> {
    fn into_any(self) -> Any {
        self.obj.clone().into_any()
    }
}

impl<'a, T: for<'b> FromAny<'b>> FromAny<'a> for Array<T> {
    fn try_cast(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&ObjectRef<ArrayObj>>::try_cast(view)?;
        let array = Array::<T>::from_object_ref(obj.clone());
        if T::ACCEPTS_ANY || array.as_views().iter().all(|v| T::try_cast(v).is_some()) {
            Some(array)
        } else {
            None
        }
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        if let Some(obj) = <&ObjectRef<ArrayObj>>::try_cast(view) {
            let array = Array::<Any>::from_object_ref(obj.clone());
            if let Some((i, bad)) = array
                .as_views()
                .iter()
                .enumerate()
                .find(|(_, v)| T::try_cast(v).is_none())
            {
                return format!(
                    "`Array[index {i}: {}]`",
                    T::describe_mismatch(bad).trim_matches('`')
                );
            }
        }
        format!("`{}`", view.type_key())
    }
}

impl_into_arg_borrowed! {
    [T] Array<T> => |h| object_view(h.as_object_ref());
}
