//! [`List<T>`]: the runtime's mutable, shared `ffi.List`.
use super::traits::container_traits;
use std::marker::PhantomData;

use crate::base::error::Result;
use crate::base::lock::{reentrant_write, with_locked, Locked};
use crate::base::object::builtin::ListObj;
use crate::base::object::ObjectRef;
use crate::base::value::{Any, FromAny, TryIntoAny};
use crate::call::function::GlobalCache;

pub(super) static LIST_NEW: GlobalCache = GlobalCache::new("ffi.List");
static LIST_APPEND: GlobalCache = GlobalCache::new("ffi.ListAppend");
static LIST_INSERT: GlobalCache = GlobalCache::new("ffi.ListInsert");
static LIST_SET: GlobalCache = GlobalCache::new("ffi.ListSetItem");
static LIST_POP: GlobalCache = GlobalCache::new("ffi.ListPop");
static LIST_CLEAR: GlobalCache = GlobalCache::new("ffi.ListClear");

/// A mutable sequence shared by reference with every language that holds it (C++
/// `ffi::List<T>`, Python `tvm_ffi.List`).
///
/// **Shared mutation.** A `List` is one object: Rust, C++ and Python all see every write, and
/// any of them may write it at any time (a Python callback that Rust calls, for example), which
/// may move its elements to a new buffer. So Rust never hands out references into its storage
/// (no slices, no `Index`): each read copies one element (one reference count) after reading
/// the list's current length and buffer in place, as C++ does. Writes go through the runtime's
/// own functions (`ffi.ListAppend`, `ffi.ListSetItem`, ...), with `&self`, like a `RefCell`.
/// Element types are checked when a list is converted from an `Any` (as C++ does) and again on
/// every read, because a foreign write may since have stored a value of another type: such a
/// read is a `TypeError`, never a wrong value. Rust's own operations on one list never overlap
/// (each holds a process-wide lock for the list); the runtime has no lock, so as in C++, code
/// in other languages that writes the list from another thread synchronises with Rust itself.
///
/// ```
/// use tvm_ffi::List;
/// let list: List<i64> = List::new([1, 2]).unwrap();
/// let alias = list.clone(); // the same object
/// alias.push(3).unwrap();
/// assert_eq!(list.len(), 3);
/// assert_eq!(list.get(2).unwrap(), 3);
/// assert_eq!(list.get(5), None);
/// let total: i64 = list.iter().sum::<tvm_ffi::Result<i64>>().unwrap();
/// assert_eq!(total, 6);
/// assert_eq!(list.to_string(), "[1, 2, 3]");
/// ```
#[repr(transparent)]
pub struct List<T = Any> {
    obj: ObjectRef<ListObj>,
    _types: PhantomData<fn() -> T>,
}

impl<T> List<T> {
    /// Runs a call of the runtime that changes the list, with its lock held (see `lock`):
    /// refused while the runtime is releasing one of its elements on this thread (the
    /// element's destructor runs this write) or changing it for another Rust write.
    ///
    /// `op` puts in `keep` copies of the elements the call releases: their last release (a
    /// destructor in any language; a Python one takes the GIL) then comes after the lock.
    fn write<R>(
        &self,
        op: impl FnOnce(&Locked<'_, ListObj>, &mut Vec<Any>) -> Result<R>,
    ) -> Result<R> {
        let mut keep = Vec::new();
        let out = with_locked(&self.obj, |list| {
            if list.releasing() {
                return Err(reentrant_write());
            }
            list.write(|| op(list, &mut keep))
        });
        drop(keep);
        out
    }

    /// Number of elements now.
    #[inline]
    pub fn len(&self) -> usize {
        with_locked(&self.obj, |list| list.seq().1)
    }
    /// Whether the list is empty now.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of element `index` now, unconverted; `None` past the end (or while the runtime
    /// releases that element: a destructor reading the list being cleared).
    pub fn get_any(&self, index: usize) -> Option<Any> {
        with_locked(&self.obj, |list| list.get(index))
    }

    /// Copies of all elements now, unconverted (one operation: no Rust write comes between).
    pub fn snapshot(&self) -> Result<Vec<Any>> {
        with_locked(&self.obj, |list| {
            let size = list.seq().1;
            let mut out = Vec::new();
            out.try_reserve_exact(size)?;
            // An element being released (see `get_any`) is left out.
            out.extend((0..size).filter_map(|i| list.get(i)));
            Ok(out)
        })
    }

    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<ListObj> {
        &self.obj
    }
    /// Unwraps into the object.
    pub fn into_object_ref(self) -> ObjectRef<ListObj> {
        self.obj
    }
    /// Wraps a list object without checking element types (reads check them anyway).
    pub fn from_object_ref(obj: ObjectRef<ListObj>) -> Self {
        List {
            obj,
            _types: PhantomData,
        }
    }

    /// Removes every element (`ffi.ListClear`).
    pub fn clear(&self) -> Result<()> {
        let f = LIST_CLEAR.get()?;
        self.write(|list, keep| {
            let size = list.seq().1;
            keep.try_reserve_exact(size)?;
            keep.extend((0..size).filter_map(|i| list.get(i)));
            f.call((&self.obj,)).map(drop)
        })
    }
}

impl<T: TryIntoAny> List<T> {
    /// A new list of `items` (`ffi.List`).
    ///
    /// ```
    /// let list = tvm_ffi::List::new(["a", "b"]).unwrap();
    /// assert_eq!(list.len(), 2);
    /// ```
    pub fn new(items: impl IntoIterator<Item = T>) -> Result<Self> {
        let items: Vec<Any> = super::try_collect(items.into_iter(), T::try_into_any)?;
        let out = LIST_NEW.get()?.call(items.as_slice())?;
        Ok(List::from_object_ref(out.cast::<ObjectRef<ListObj>>()?))
    }

    /// [`List::new`] from a `Vec` (the expansion of `container_traits!` calls it).
    fn build_from_vec(items: Vec<T>) -> Result<Self> {
        Self::new(items)
    }

    /// Appends `value` (`ffi.ListAppend`), visible to every holder of the list.
    ///
    /// ```
    /// let list = tvm_ffi::List::<i64>::new([]).unwrap();
    /// let shared = list.clone(); // the same list, as another language would hold it
    /// list.push(1).unwrap();
    /// assert_eq!(shared.to_vec().unwrap(), [1]);
    /// ```
    pub fn push(&self, value: T) -> Result<()> {
        let (value, f) = (value.try_into_any()?, LIST_APPEND.get()?);
        self.write(|_, _| f.call((&self.obj, &value)).map(drop))
    }

    /// Inserts `value` before position `index` (`0..=len`, else `IndexError`).
    pub fn insert(&self, index: usize, value: T) -> Result<()> {
        let (value, f) = (value.try_into_any()?, LIST_INSERT.get()?);
        self.write(|_, _| f.call((&self.obj, index, &value)).map(drop))
    }

    /// Replaces element `index` (`IndexError` past the end).
    pub fn set(&self, index: usize, value: T) -> Result<()> {
        let (value, f) = (value.try_into_any()?, LIST_SET.get()?);
        self.write(|list, keep| {
            keep.try_reserve_exact(1)?;
            keep.extend(list.get(index));
            f.call((&self.obj, index, &value)).map(drop)
        })
    }
}

impl<T: for<'a> FromAny<'a>> List<T> {
    /// Element `index` now, if there is one and it is a `T` (a foreign write may have stored
    /// another type: [`List::try_get`] tells which).
    ///
    /// ```
    /// let list = tvm_ffi::List::new([1i64, 2]).unwrap();
    /// assert_eq!((list.get(1), list.get(2)), (Some(2), None));
    /// ```
    pub fn get(&self, index: usize) -> Option<T> {
        self.try_get(index).ok().flatten()
    }

    /// Element `index` now: `Ok(None)` past the end, a `TypeError` when a foreign write stored
    /// a value that is not a `T`.
    pub fn try_get(&self, index: usize) -> Result<Option<T>> {
        self.get_any(index)
            .map(|value| value.cast::<T>())
            .transpose()
    }

    /// Removes element `index` and returns it (`ffi.ListPop`); `None` past the end.
    pub fn remove(&self, index: usize) -> Result<Option<T>> {
        let f = LIST_POP.get()?;
        // The runtime returns the element it removes: its release comes after the lock.
        let value = self.write(|list, _| match list.seq().1 {
            n if index >= n => Ok(None),
            _ => f.call((&self.obj, index)).map(Some),
        })?;
        value.map(|v| v.cast::<T>()).transpose()
    }

    /// Removes the last element and returns it; `None` when the list is empty.
    pub fn pop(&self) -> Result<Option<T>> {
        let f = LIST_POP.get()?;
        let value = self.write(|list, _| match list.seq().1 {
            0 => Ok(None),
            n => f.call((&self.obj, n - 1)).map(Some),
        })?;
        value.map(|v| v.cast::<T>()).transpose()
    }

    /// The elements, converted, read one at a time: each read sees the list as it is then.
    pub fn iter(&self) -> ListIter<'_, T> {
        ListIter {
            list: self,
            next: 0,
        }
    }

    /// All elements now, converted.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.len())?;
        for item in self.iter() {
            if out.len() == out.capacity() {
                out.try_reserve(1)?;
            }
            out.push(item?);
        }
        Ok(out)
    }
}

/// The elements of a [`List`], converted ([`List::iter`], `for item in &list`).
///
/// ```
/// use tvm_ffi::List;
/// let list = List::new([1i64, 2]).unwrap();
/// list.push(3).unwrap();
/// // Each item is a `Result`: any language may store a value of another type meanwhile.
/// let items: Vec<i64> = list.iter().collect::<tvm_ffi::Result<_>>().unwrap();
/// assert_eq!(items, [1, 2, 3]);
/// ```
pub struct ListIter<'a, T> {
    list: &'a List<T>,
    next: usize,
}

impl<T> Clone for ListIter<'_, T> {
    fn clone(&self) -> Self {
        ListIter {
            list: self.list,
            next: self.next,
        }
    }
}

impl<T> std::fmt::Debug for ListIter<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListIter")
            .field("next", &self.next)
            .field("len", &self.list.len())
            .finish()
    }
}

impl<T: for<'b> FromAny<'b>> Iterator for ListIter<'_, T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        let value = self.list.get_any(self.next)?;
        self.next += 1;
        Some(value.cast::<T>())
    }
}

impl<T> List<T> {
    /// What `{:?}` lists: each element, read under the lock one at a time.
    fn debug_entries(&self) -> impl Iterator<Item = Any> + '_ {
        (0..self.len()).map_while(|i| self.get_any(i))
    }

    /// What `{}` prints: a copy, printed without the lock (printing runs the elements' repr
    /// hooks, user code that must not run under it).
    fn repr_object(&self) -> Result<ObjectRef<ListObj>> {
        self.snapshot()
            .and_then(|items| LIST_NEW.get()?.call(items.as_slice()))
            .and_then(|copy| copy.cast::<ObjectRef<ListObj>>())
    }
}

container_traits!(List<T>, item = T, debug_list, "list", iter = ListIter);
