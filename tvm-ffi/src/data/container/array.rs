//! [`Array<T>`]: the runtime's immutable `ffi.Array`, typed on the Rust side.
use std::marker::PhantomData;

use crate::abi::sys::TVMFFIAny;
use crate::base::error::Result;
use crate::base::object::builtin::{ArrayObj, ListObj, Object};
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};
use crate::call::function::{impl_into_arg_borrowed, object_view, GlobalCache};

/// An immutable, reference-counted array (`ffi.Array`, Python `list`/`tuple` on the way in).
///
/// An array never changes while a reference to it exists (C++ `Array` mutators copy unless
/// they hold the only reference), so elements are read in place and their types are checked
/// once, when an array is converted from an `Any` (as C++ does): [`Array::get`] and iteration
/// cannot fail afterwards.
///
/// ```
/// use tvm_ffi::{Any, Array};
/// let squares: Array<i64> = (1..=4).map(|x| x * x).collect();
/// let mut total = 0;
/// for x in &squares {
///     total += x;
/// }
/// assert_eq!(total, 30);
/// assert_eq!(squares.get(1), Some(4));
/// assert_eq!(squares.to_string(), "(1, 4, 9, 16)");
/// let mixed: Array<Any> = vec![Any::new(1i64), Any::new("two")].into();
/// assert_eq!(mixed[1].cast::<&str>().unwrap(), "two");
/// ```
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
    /// Wraps an array object whose elements are known to convert to `T`.
    fn wrap(obj: ObjectRef<ArrayObj>) -> Self {
        Array {
            obj,
            _elem: PhantomData,
        }
    }
}

impl<T: for<'a> FromAny<'a>> Array<T> {
    /// Wraps an array object, checking that every element converts to `T` (as converting it
    /// from an `Any` does).
    ///
    /// # Panics
    /// When an element does not convert to `T`; [`Array::try_from_object_ref`] and
    /// [`Any::cast`] report that as an error.
    pub fn from_object_ref(obj: ObjectRef<ArrayObj>) -> Self {
        let array = Array::wrap(obj);
        if let Some(i) = array.first_mismatch() {
            panic!(
                "Array::from_object_ref: element {i} is a `{}`, not a `{}`",
                array.as_views()[i].type_key(),
                T::type_str()
            );
        }
        array
    }

    /// Wraps an array object, or fails with a `TypeError` naming the first element that does
    /// not convert to `T` (never panics).
    ///
    /// ```
    /// use tvm_ffi::{Any, Array};
    /// let mixed = Array::<Any>::new([Any::new(1), Any::new("x")]).unwrap();
    /// let err = Array::<i64>::try_from_object_ref(mixed.into_object_ref()).unwrap_err();
    /// assert_eq!(err.message(), "Array::try_from_object_ref: element 1 is a `ffi.SmallStr`, not a `int`");
    /// ```
    pub fn try_from_object_ref(obj: ObjectRef<ArrayObj>) -> Result<Self> {
        let array = Array::wrap(obj);
        match array.first_mismatch() {
            None => Ok(array),
            Some(i) => Err(crate::base::error::Error::type_error(format!(
                "Array::try_from_object_ref: element {i} is a `{}`, not a `{}`",
                array.as_views()[i].type_key(),
                T::type_str()
            ))),
        }
    }

    /// The index of the first element that does not convert to `T`.
    fn first_mismatch(&self) -> Option<usize> {
        if T::ACCEPTS_ANY {
            return None;
        }
        self.as_views()
            .iter()
            .position(|v| T::try_cast(v).is_none())
    }
}

static MAKE: GlobalCache = GlobalCache::new("ffi.Array");

impl<T: TryIntoAny> Array<T> {
    /// Builds an array from Rust values.
    ///
    /// ```
    /// let a = tvm_ffi::Array::new([1i64, 2, 3]).unwrap();
    /// assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    /// ```
    pub fn new(items: impl IntoIterator<Item = T>) -> Result<Self> {
        let items: Vec<Any> = super::try_collect(items.into_iter(), T::try_into_any)?;
        let out = MAKE.get()?.call(items.as_slice())?;
        // Each element is a `T` converted into an `Any`, which converts back.
        Ok(Array::wrap(out.cast::<ObjectRef<ArrayObj>>()?))
    }
}

impl<T: for<'a> FromAny<'a>> Array<T> {
    /// Element `index`, converted; `None` past the end.
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        let view = self.as_views().get(index)?;
        match T::from_checked(view) {
            Some(value) => Some(value),
            None => unchecked_element(),
        }
    }

    /// Iterates over converted elements.
    #[inline]
    pub fn iter(&self) -> ArrayIter<'_, T> {
        ArrayIter {
            views: self.as_views().iter(),
            _elem: PhantomData,
        }
    }

    /// All elements, converted.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

/// The converted elements of an [`Array`] ([`Array::iter`], `for x in &array`).
pub struct ArrayIter<'a, T> {
    views: std::slice::Iter<'a, AnyView<'a>>,
    _elem: PhantomData<fn() -> T>,
}

/// An element that does not convert: impossible, as every `Array<T>` is checked when made.
#[cold]
#[inline(never)]
fn unchecked_element() -> ! {
    panic!("element type checked on entry")
}

impl<T: for<'b> FromAny<'b>> Iterator for ArrayIter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        let view = self.views.next()?;
        // The element converted when the array was checked, and arrays never change.
        match T::from_checked(view) {
            Some(value) => Some(value),
            None => unchecked_element(),
        }
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.views.size_hint()
    }
}
impl<T: for<'b> FromAny<'b>> DoubleEndedIterator for ArrayIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        let view = self.views.next_back()?;
        match T::from_checked(view) {
            Some(value) => Some(value),
            None => unchecked_element(),
        }
    }
}
impl<T: for<'b> FromAny<'b>> ExactSizeIterator for ArrayIter<'_, T> {}

impl<'a, T: for<'b> FromAny<'b>> IntoIterator for &'a Array<T> {
    type Item = T;
    type IntoIter = ArrayIter<'a, T>;
    #[inline]
    fn into_iter(self) -> ArrayIter<'a, T> {
        self.iter()
    }
}

impl std::ops::Index<usize> for Array<Any> {
    type Output = Any;
    /// Element `index`, borrowed in place (an array never changes while shared); panics past
    /// the end, as slices do. A typed `Array<T>` stores `Any` values, not `T`s, so it has no
    /// `&T` to lend: use [`Array::get`].
    #[inline]
    fn index(&self, index: usize) -> &Any {
        let views = self.as_views();
        // SAFETY: Any and AnyView are both repr(transparent) over TVMFFIAny; the element is
        // owned by the array, which `self` keeps alive and which never changes while shared.
        unsafe { &*(&views[index] as *const AnyView<'_> as *const Any) }
    }
}

impl<T: IntoAny> FromIterator<T> for Array<T> {
    /// Collects into a new array. Fails only when memory runs out, which raises `MemoryError`
    /// at the FFI boundary (as `ObjectRef::new` does); [`Array::new`] returns a `Result`
    /// (and takes `u64` elements, whose conversion can fail).
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        super::built(Array::new(items))
    }
}

impl<T: IntoAny> From<Vec<T>> for Array<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

impl<T: IntoAny> Default for Array<T> {
    /// The empty array.
    fn default() -> Self {
        std::iter::empty().collect()
    }
}

impl<T> std::fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_views().iter()).finish()
    }
}

impl<T> std::fmt::Display for Array<T> {
    /// The runtime's repr (`ffi.ReprPrint`), as Python prints the array: `(1, 2, 3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.obj, f)
    }
}

impl<T> From<Array<T>> for ObjectRef<Object> {
    fn from(array: Array<T>) -> Self {
        array.obj.into_object()
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
    /// An `Array` whose elements convert to `T`; a `List` is copied into a new `Array` (as C++
    /// converts one).
    fn try_cast(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<ArrayObj>>::try_cast(view) {
            let array = Array::<T>::wrap(obj.clone());
            return array.first_mismatch().is_none().then_some(array);
        }
        let list = <&ObjectRef<ListObj>>::try_cast(view)?;
        let items = super::List::<Any>::from_object_ref(list.clone())
            .snapshot()
            .ok()?;
        if !(T::ACCEPTS_ANY || items.iter().all(|v| T::try_cast(v.as_view()).is_some())) {
            return None;
        }
        let out = MAKE.get().ok()?.call(items.as_slice()).ok()?;
        Some(Array::wrap(out.cast::<ObjectRef<ArrayObj>>().ok()?))
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        let items: Vec<Any> = if let Some(obj) = <&ObjectRef<ArrayObj>>::try_cast(view) {
            Array::<Any>::from_object_ref(obj.clone()).iter().collect()
        } else if let Some(obj) = <&ObjectRef<ListObj>>::try_cast(view) {
            super::List::<Any>::from_object_ref(obj.clone())
                .snapshot()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        match items
            .iter()
            .enumerate()
            .find(|(_, v)| T::try_cast(v.as_view()).is_none())
        {
            Some((i, bad)) => format!(
                "`Array[index {i}: {}]`",
                T::describe_mismatch(bad.as_view()).trim_matches('`')
            ),
            None => format!("`{}`", view.type_key()),
        }
    }
}

impl_into_arg_borrowed! {
    [T] Array<T> => |h| object_view(h.as_object_ref());
}
