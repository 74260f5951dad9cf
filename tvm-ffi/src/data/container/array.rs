//! [`Array<T>`]: the runtime's immutable `ffi.Array`, typed on the Rust side.
use super::traits::container_traits;
use std::marker::PhantomData;

use super::array_build::{array_from_iter, array_from_vec};
use crate::abi::sys::{type_index as ti, TVMFFIAny};
use crate::base::error::Result;
use crate::base::object::builtin::ArrayObj;
use crate::base::object::{InplaceArray, ObjectRef};
use crate::base::value::{Any, AnyView, FromAny, TryIntoAny};
use crate::call::function::GlobalCache;

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
    _types: PhantomData<fn() -> T>,
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
    pub(super) fn wrap(obj: ObjectRef<ArrayObj>) -> Self {
        Array {
            obj,
            _types: PhantomData,
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
    pub(super) fn first_mismatch(&self) -> Option<usize> {
        if T::ACCEPTS_ANY {
            return None;
        }
        let views = self.as_views();
        if let Some(index) = T::CONVERTS_FROM_EVERY {
            // No branch per element (it vectorises): the common case, all of one type.
            if views
                .iter()
                .fold(true, |all, v| all & (v.type_index() == index))
            {
                return None;
            }
        }
        views.iter().position(|v| !T::converts(v))
    }
}

pub(super) static ARRAY_NEW: GlobalCache = GlobalCache::new("ffi.Array");

// SAFETY: an array allocated by Rust (`array_build::unfilled_array`) keeps `capacity` element slots right after
// its cell, `data` pointing at them, and nothing changes `capacity` in place (C++ mutators of
// a uniquely held array write within it, or make a new array). `release` drops the `size`
// elements the array holds then, and calls a `data_deleter` if C++ installed one, as C++'s
// `~SeqBaseObj` does.
unsafe impl InplaceArray for ArrayObj {
    type Elem = TVMFFIAny;
    const ELEM_START_ALIGN: usize = 16;
    #[inline]
    fn inplace_len(&self) -> usize {
        self.seq.capacity as usize
    }
    unsafe fn release(payload: *mut ArrayObj) {
        // SAFETY: the caller's contract: the last reference is gone, so the cell is ours.
        let seq = unsafe { &mut (*payload).seq };
        let len = seq.size.max(0) as usize;
        // SAFETY: the first `size` slots hold owned values, no one else reaches them.
        let elems = unsafe { std::slice::from_raw_parts(seq.data as *const TVMFFIAny, len) };
        // Only objects own something. One branch-free scan first, so that an array of plain
        // values costs no test and jump per element; an array with objects pays the scan
        // beside its atomic releases. Plain type indices are below 64
        // (`kTVMFFIStaticObjectBegin`), so the OR of all indices has a bit at 64 or above iff
        // some element is an object (or carries a forged negative index, which the
        // per-element path handles as well).
        const _: () = assert!(ti::kTVMFFIStaticObjectBegin == 64);
        let ored = or_of_type_indices(elems);
        if ored & !63 != 0 {
            for value in elems {
                // SAFETY: an owned value of the array, released once, here.
                drop(unsafe { Any::from_raw(*value) });
            }
        }
        if let Some(deleter) = seq.data_deleter {
            // SAFETY: installed by C++ for `data`, called once, as `~SeqBaseObj` does.
            unsafe { deleter(seq.data) };
        }
    }
}

/// The bitwise OR of the values' type indices (the release scan of an array).
#[inline]
fn or_of_type_indices(values: &[TVMFFIAny]) -> u32 {
    // The first 8 bytes of each value into four independent accumulators: one 8-byte load and
    // one OR per value, never split across cache lines whatever the values' alignment (a
    // 4-byte OR vectorises into shuffles, a 16-byte one splits loads: both cost 2x).
    let word = |v: &TVMFFIAny| {
        // SAFETY: a value starts with its type index and a 4-byte padding word or small
        // string length: 8 bytes of plain data.
        unsafe { (v as *const TVMFFIAny as *const u64).read() }
    };
    let mut acc = [0u64; 4];
    let mut chunks = values.chunks_exact(4);
    for chunk in chunks.by_ref() {
        for (lane, value) in acc.iter_mut().zip(chunk) {
            *lane |= word(value);
        }
    }
    for value in chunks.remainder() {
        acc[0] |= word(value);
    }
    let all = acc[0] | acc[1] | acc[2] | acc[3];
    // The type index is the first 4 bytes of the word, in memory order.
    let index_bytes = all.to_ne_bytes();
    u32::from_ne_bytes([
        index_bytes[0],
        index_bytes[1],
        index_bytes[2],
        index_bytes[3],
    ])
}

impl<T: TryIntoAny> Array<T> {
    /// Builds an array from Rust values (moved into a `Vec` first: for a `Vec` you already
    /// have, [`Array::from_vec`] skips that copy).
    ///
    /// ```
    /// let a = tvm_ffi::Array::new([1i64, 2, 3]).unwrap();
    /// assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    /// ```
    pub fn new(items: impl IntoIterator<Item = T>) -> Result<Self> {
        // Each element is a `T` converted into an `Any`, which converts back.
        Ok(Array::wrap(array_from_iter(items.into_iter())?))
    }

    /// [`Array::new`] from a `Vec`, taken as it is: each value is converted straight into its
    /// slot (`Array::from(vec)` for infallible element types).
    ///
    /// ```
    /// let a = tvm_ffi::Array::from_vec(vec![1i64, 2, 3]).unwrap();
    /// assert_eq!(a.to_vec(), [1, 2, 3]);
    /// ```
    pub fn from_vec(items: Vec<T>) -> Result<Self> {
        // As for `new`.
        Ok(Array::wrap(array_from_vec(items)?))
    }

    /// [`Array::from_vec`] (the expansion of `container_traits!` calls it).
    fn build_from_vec(items: Vec<T>) -> Result<Self> {
        Self::from_vec(items)
    }
}

impl<T: for<'a> FromAny<'a>> Array<T> {
    /// Element `index`, converted; `None` past the end.
    ///
    /// ```
    /// let array = tvm_ffi::Array::new([10i64, 20]).unwrap();
    /// assert_eq!((array.get(1), array.get(2)), (Some(20), None));
    /// ```
    #[inline]
    pub fn get(&self, index: usize) -> Option<T> {
        let view = self.as_views().get(index)?;
        match T::from_checked(view) {
            Some(value) => Some(value),
            None => unchecked_element(),
        }
    }

    /// [`Array::get`] in the shape of [`List::try_get`](crate::List::try_get) (an array's
    /// elements are checked when it is made, so this never fails).
    #[inline]
    pub fn try_get(&self, index: usize) -> Result<Option<T>> {
        Ok(self.get(index))
    }

    /// Iterates over converted elements.
    #[inline]
    pub fn iter(&self) -> ArrayIter<'_, T> {
        ArrayIter {
            views: self.as_views().iter(),
            _types: PhantomData,
        }
    }

    /// All elements, converted.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

/// The converted elements of an [`Array`] ([`Array::iter`], `for x in &array`).
///
/// ```
/// use tvm_ffi::Array;
/// let array = Array::new([1i64, 2, 3]).unwrap();
/// let doubled: Vec<i64> = array.iter().map(|x| 2 * x).collect();
/// assert_eq!(doubled, [2, 4, 6]);
/// let mut sum = 0;
/// for x in &array {
///     sum += x;
/// }
/// assert_eq!(sum, 6);
/// ```
pub struct ArrayIter<'a, T> {
    views: std::slice::Iter<'a, AnyView<'a>>,
    _types: PhantomData<fn() -> T>,
}

impl<T> Clone for ArrayIter<'_, T> {
    fn clone(&self) -> Self {
        ArrayIter {
            views: self.views.clone(),
            _types: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for ArrayIter<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayIter")
            .field("remaining", &self.views.len())
            .finish()
    }
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

impl<T> Array<T> {
    /// What `{:?}` lists: the elements, read in place.
    fn debug_entries(&self) -> impl Iterator<Item = &AnyView<'_>> {
        self.as_views().iter()
    }

    /// What `{}` prints: the array itself (immutable: no lock is needed).
    fn repr_object(&self) -> Result<ObjectRef<ArrayObj>> {
        Ok(self.obj.clone())
    }
}

container_traits!(Array<T>, item = T, debug_list, "array", iter = ArrayIter);
