//! Reference-counted objects: the 24-byte header, [`ObjectRef`] and [`WeakRef`], the object
//! traits, the payloads of the runtime's built-in objects, and queries of the runtime's type
//! registry.
//!
//! This is the lowest layer above the raw ABI: it knows nothing of values, errors, functions
//! or registration. Types defined in Rust hook into it through two hidden items of their
//! [`ObjectType`] / [`RustObject`] impls (the header state they start in and what happens
//! before the first dereference), which `#[derive(Object)]` fills in.
//!
//! An upcast names its path up the parent chain with [`Here`] and [`There`]; it is inferred,
//! and spelled out here only to show it:
//!
//! ```
//! use tvm_ffi::builtin::{ArrayObj, AnyObject};
//! use tvm_ffi::object::{Here, There};
//! use tvm_ffi::{Array, ObjectRef};
//! let array: ObjectRef<ArrayObj> = Array::new([1i64]).unwrap().into_object_ref();
//! let same: ObjectRef<ArrayObj> = array.clone().upcast::<ArrayObj, Here>();
//! let root: ObjectRef<AnyObject> = array.upcast::<AnyObject, There<Here>>(); // one step up
//! assert!(root.ptr_eq(&same) && root.is_instance::<ArrayObj>());
//! ```
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use crate::abi::sys::TVMFFIObject;

pub mod builtin;
pub(crate) mod header;
mod items;
pub(crate) mod type_info;
mod types;

pub(crate) use header::ObjectCell;
pub(crate) use header::{
    alloc_inplace_array, alloc_object, alloc_object_with, cached_key_hash, dec_ref, hold_releases,
    inc_ref, padding_word, run_held_releases, try_alloc_inplace_array, try_inc_strong,
    type_index_of, InplaceArray,
};
use header::{dec_weak, inc_weak, ref_count, STRONG_MASK};
pub use items::ObjectWithItems;
pub(crate) use types::DropRustObject;
pub use types::{
    assert_external_type, DerivedObject, ExternalType, Here, IsA, ObjectType, RuntimeType,
    RustObject, There,
};

/// The strong count of an object whose memory is alive (0 while its release runs).
///
/// # Safety
/// The object's memory must be alive (see [`header::ref_count`]).
#[inline]
pub(crate) unsafe fn strong_count_of(ptr: NonNull<TVMFFIObject>) -> u32 {
    // SAFETY: the caller's contract.
    (unsafe { ref_count(ptr) }.load(Ordering::Relaxed) & STRONG_MASK) as u32
}

/// Whether exactly `strong` strong references and no weak reference hold the object: the rule
/// of an in-place update (as `Arc::get_mut`'s), since a weak reference can be upgraded into
/// another owner at any time. Acquire, so that the other owners' last uses happen before.
///
/// # Safety
/// The object's memory must be alive (see [`header::ref_count`]).
#[inline]
pub(crate) unsafe fn held_only_by(ptr: NonNull<TVMFFIObject>, strong: u32) -> bool {
    // SAFETY: the caller's contract.
    unsafe { ref_count(ptr) }.load(Ordering::Acquire) == (1 << 32) | u64::from(strong)
}

/// A strong reference to an object whose payload is (at least) `T`.
///
/// Pointer-sized and layout-compatible with C++ `ObjectRef`: a non-null pointer to the header.
/// Clone and drop are inline atomic operations on the header.
///
/// ```
/// use tvm_ffi::{builtin::AnyObject, ObjectRef};
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.ObjectRef")]
/// #[repr(C)]
/// pub struct Point { pub x: i64, pub y: i64 }
/// let p = ObjectRef::new(Point { x: 1, y: 2 });
/// assert_eq!(p.x + p.y, 3); // derefs to the payload
/// let q = p.clone(); // the same object, one more reference
/// assert!(q.ptr_eq(&p) && p.strong_count() == 2);
/// let root: ObjectRef<AnyObject> = q.into();
/// assert_eq!(root.type_key(), "doc_examples.ObjectRef");
/// assert_eq!(root.downcast::<Point>().unwrap().y, 2);
/// ```
#[repr(transparent)]
pub struct ObjectRef<T: ObjectType> {
    ptr: NonNull<TVMFFIObject>,
    _marker: PhantomData<T>,
}

// SAFETY: the reference count is atomic and payloads are only reachable through `&T`, so a
// reference may move or be shared between threads when the payload may.
unsafe impl<T: ObjectType + Send + Sync> Send for ObjectRef<T> {}
// SAFETY: as above.
unsafe impl<T: ObjectType + Send + Sync> Sync for ObjectRef<T> {}

impl<T: RustObject> ObjectRef<T> {
    /// Allocates a new object holding `payload`, with strong and weak count 1.
    ///
    /// One allocation: the header and the payload share one block. Out of memory, it unwinds
    /// with an [`AllocFailure`](crate::AllocFailure) payload, which the FFI boundary
    /// raises as a `MemoryError`; [`ObjectRef::try_new`] returns that error instead.
    ///
    /// ```
    /// use tvm_ffi::ObjectRef;
    /// #[derive(tvm_ffi::Object)]
    /// #[ffi_type(key = "doc_examples.ObjectRefNew")]
    /// #[repr(C)]
    /// pub struct Pair { pub a: i64, pub b: i64 }
    /// let pair = ObjectRef::new(Pair { a: 1, b: 2 });
    /// assert_eq!((pair.a, pair.b, pair.strong_count()), (1, 2, 1));
    /// ```
    pub fn new(payload: T) -> Self {
        // SAFETY: the payload is written in full; its type index is `T`'s.
        let ptr = unsafe {
            alloc_object_with::<T, DropRustObject>(
                T::runtime_type().index,
                T::INITIAL_PADDING,
                |slot| slot.write(payload),
            )
        };
        ObjectRef {
            ptr,
            _marker: PhantomData,
        }
    }

    /// Like [`ObjectRef::new`], but out of memory it returns the [`AllocFailure`] instead of
    /// unwinding (the payload is then dropped); `?` turns it into a `MemoryError` naming the
    /// size.
    ///
    /// [`AllocFailure`]: crate::AllocFailure
    ///
    /// ```
    /// # use tvm_ffi::{Object, ObjectRef};
    /// #[derive(Object)]
    /// #[ffi_type(key = "doc.TryNew")]
    /// #[repr(C)]
    /// pub struct TryNew { pub x: i64 }
    /// let obj = ObjectRef::try_new(TryNew { x: 1 }).unwrap();
    /// assert_eq!(obj.x, 1);
    /// ```
    pub fn try_new(payload: T) -> Result<Self, crate::abi::AllocFailure> {
        // SAFETY: as in `new`.
        let ptr = unsafe {
            header::try_alloc_object_with::<T, DropRustObject>(
                T::runtime_type().index,
                T::INITIAL_PADDING,
                |slot| slot.write(payload),
            )
        }?;
        Ok(ObjectRef {
            ptr,
            _marker: PhantomData,
        })
    }
}

impl<T: ObjectType> ObjectRef<T> {
    /// Takes ownership of one strong reference held in a raw handle.
    ///
    /// # Safety
    /// `ptr` must point to a live object that is an instance of `T`, and the caller gives up
    /// one strong reference to it.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<TVMFFIObject>) -> Self {
        ObjectRef {
            ptr,
            _marker: PhantomData,
        }
    }

    /// Makes a new strong reference from a borrowed raw handle (increments the count).
    ///
    /// # Safety
    /// `ptr` must point to a live object that is an instance of `T`.
    #[inline]
    pub unsafe fn from_raw_borrowed(ptr: NonNull<TVMFFIObject>) -> Self {
        // SAFETY: the caller guarantees the object is alive.
        unsafe { inc_ref(ptr) };
        ObjectRef {
            ptr,
            _marker: PhantomData,
        }
    }

    /// Gives up ownership without decrementing; pair with [`ObjectRef::from_raw`].
    #[inline]
    pub fn into_raw(self) -> NonNull<TVMFFIObject> {
        ManuallyDrop::new(self).ptr
    }

    /// The raw handle, still owned by `self`.
    #[inline]
    pub fn as_raw(&self) -> NonNull<TVMFFIObject> {
        self.ptr
    }

    /// The header of the object, as a raw pointer: its reference counts and state word change
    /// atomically under other threads, so no `&TVMFFIObject` is handed out.
    #[inline]
    pub fn header_ptr(&self) -> *const TVMFFIObject {
        self.ptr.as_ptr()
    }

    /// The runtime type index of the object (its dynamic type, maybe a subtype of `T`).
    #[inline]
    pub fn type_index(&self) -> i32 {
        // SAFETY: the object is alive while `self` exists.
        unsafe { type_index_of(self.ptr) }
    }

    /// The registry key of the object's dynamic type.
    pub fn type_key(&self) -> &'static str {
        type_info::type_key_of_index(self.type_index())
    }

    /// Current strong reference count.
    #[inline]
    pub fn strong_count(&self) -> u32 {
        // SAFETY: `self` holds a strong reference.
        unsafe { strong_count_of(self.ptr) }
    }

    /// Whether exactly `strong` strong references (this one among them) and no weak reference
    /// hold the object (see [`held_only_by`]).
    #[inline]
    pub(crate) fn held_only_by(&self, strong: u32) -> bool {
        // SAFETY: `self` holds a strong reference.
        unsafe { held_only_by(self.ptr, strong) }
    }

    /// Current weak reference count (including the one held by the strong references).
    #[inline]
    pub fn weak_count(&self) -> u32 {
        // SAFETY: `self` holds a strong reference.
        (unsafe { ref_count(self.ptr) }.load(Ordering::Relaxed) >> 32) as u32
    }

    /// Whether two references point to the same object.
    #[inline]
    pub fn ptr_eq<U: ObjectType>(&self, other: &ObjectRef<U>) -> bool {
        self.ptr == other.ptr
    }

    /// Whether the object is an instance of `U` (its type or a subtype). O(1): the runtime
    /// stores each type's ancestors in an array indexed by depth.
    #[inline]
    pub fn is_instance<U: ObjectType>(&self) -> bool {
        type_info::is_instance_index(self.type_index(), U::runtime_type())
    }

    /// A new reference typed as `U` when the object is an instance of `U` (and, for a
    /// Rust-defined `U`, fully constructed: every required field set).
    ///
    /// ```
    /// use tvm_ffi::builtin::{ArrayObj, MapObj, AnyObject};
    /// use tvm_ffi::{Array, ObjectRef};
    /// let root: ObjectRef<AnyObject> = Array::new([1i64]).unwrap().into_object_ref().into();
    /// assert!(root.downcast::<ArrayObj>().is_some());
    /// assert!(root.downcast::<MapObj>().is_none());
    /// ```
    pub fn downcast<U: ObjectType>(&self) -> Option<ObjectRef<U>> {
        if self.usable_as::<U>() {
            Some(self.clone().cast_unchecked())
        } else {
            None
        }
    }

    /// A borrowed reference typed as `U` when the object is an instance of `U` (and, for a
    /// Rust-defined `U`, fully constructed), without touching the reference count: the
    /// borrowed form of [`ObjectRef::downcast`].
    ///
    /// ```
    /// use tvm_ffi::builtin::{AnyObject, ArrayObj, MapObj};
    /// use tvm_ffi::{Array, ObjectRef};
    /// let root: ObjectRef<AnyObject> = Array::new([1i64]).unwrap().into_object_ref().into();
    /// let array: &ObjectRef<ArrayObj> = root.downcast_ref().unwrap();
    /// assert_eq!((array.type_key(), root.strong_count()), ("ffi.Array", 1));
    /// assert!(root.downcast_ref::<MapObj>().is_none());
    /// ```
    #[inline]
    pub fn downcast_ref<U: ObjectType>(&self) -> Option<&ObjectRef<U>> {
        if self.usable_as::<U>() {
            // SAFETY: checked just above: the object is a (usable) instance of `U`.
            Some(unsafe { self.cast_ref_unchecked() })
        } else {
            None
        }
    }

    /// Like [`ObjectRef::downcast`], consuming `self` (no reference count change), and handing
    /// `self` back on mismatch.
    pub fn try_downcast<U: ObjectType>(self) -> Result<ObjectRef<U>, Self> {
        if self.usable_as::<U>() {
            Ok(self.cast_unchecked())
        } else {
            Err(self)
        }
    }

    /// Whether the object is an instance of `U` that an `ObjectRef<U>` may point to (sealed,
    /// see [`ObjectType::seal_for_use`]).
    #[inline]
    pub(crate) fn usable_as<U: ObjectType>(&self) -> bool {
        // SAFETY: `self` holds a reference to a live instance of `U` (checked first).
        self.is_instance::<U>() && unsafe { U::seal_for_use(self.ptr) }.is_ok()
    }

    /// Upcasts to an ancestor type (checked at compile time, free at run time).
    ///
    /// ```
    /// use tvm_ffi::builtin::{ArrayObj, AnyObject};
    /// use tvm_ffi::{Array, ObjectRef};
    /// let array: ObjectRef<ArrayObj> = Array::new([1i64]).unwrap().into_object_ref();
    /// let root: ObjectRef<AnyObject> = array.upcast(); // `ObjectRef<MapObj>` would not compile
    /// assert_eq!(root.type_key(), "ffi.Array");
    /// ```
    #[inline]
    pub fn upcast<U: ObjectType, I>(self) -> ObjectRef<U>
    where
        T: IsA<U, I>,
    {
        self.cast_unchecked()
    }

    /// Upcasts to the root object type.
    #[inline]
    pub fn into_object(self) -> ObjectRef<builtin::AnyObject> {
        self.cast_unchecked()
    }

    /// Borrows as a reference to the root object type.
    #[inline]
    pub fn as_object(&self) -> &ObjectRef<builtin::AnyObject> {
        // SAFETY: ObjectRef is repr(transparent) over the pointer for every T; every object is
        // an instance of the root type.
        unsafe { &*(self as *const Self as *const ObjectRef<builtin::AnyObject>) }
    }

    /// Creates a weak reference.
    pub fn downgrade(&self) -> WeakRef<T> {
        // SAFETY: `self` holds a strong reference.
        unsafe { inc_weak(self.ptr) };
        WeakRef {
            ptr: self.ptr,
            _marker: PhantomData,
        }
    }

    #[inline]
    fn cast_unchecked<U: ObjectType>(self) -> ObjectRef<U> {
        ObjectRef {
            ptr: self.into_raw(),
            _marker: PhantomData,
        }
    }

    /// Reinterprets a borrowed reference.
    ///
    /// # Safety
    /// The object must be an instance of `U`.
    #[inline]
    pub unsafe fn cast_ref_unchecked<U: ObjectType>(&self) -> &ObjectRef<U> {
        // SAFETY: same representation; instance-ness guaranteed by the caller.
        unsafe { &*(self as *const Self as *const ObjectRef<U>) }
    }
}

impl<T: ObjectType> std::ops::Deref for ObjectRef<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: ObjectType contract: the payload of an instance of T sits at PAYLOAD_OFFSET;
        // every `ObjectRef<T>` passed `T::seal_for_use` when it was made (or was made sealed,
        // by `ObjectRef::new`), so the payload is complete and no setter writes it.
        unsafe {
            &*((self.ptr.as_ptr() as *const u8).add(ObjectCell::<T>::PAYLOAD_OFFSET) as *const T)
        }
    }
}

impl<T: ObjectType> Clone for ObjectRef<T> {
    #[inline]
    fn clone(&self) -> Self {
        // SAFETY: self holds a strong reference.
        unsafe { inc_ref(self.ptr) };
        ObjectRef {
            ptr: self.ptr,
            _marker: PhantomData,
        }
    }
}

impl<T: ObjectType> Drop for ObjectRef<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: self owns one strong reference.
        unsafe { dec_ref(self.ptr) }
    }
}

impl<T: ObjectType> PartialEq for ObjectRef<T> {
    /// Identity comparison, like C++ `ObjectRef::same_as`.
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}
impl<T: ObjectType> Eq for ObjectRef<T> {}
impl<T: ObjectType> std::hash::Hash for ObjectRef<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ptr.hash(state)
    }
}

/// Upcast to the root type through `From`/`Into`: `let any: ObjectRef<AnyObject> = point.into()`.
///
/// Only the root has a `From` impl: Rust's coherence rules forbid one per parent (an impl
/// `From<ObjectRef<Child>> for ObjectRef<Parent>` in the crate defining `Child` implements a
/// foreign trait for a foreign type, E0117, and a blanket impl over
/// `DerivedObject::Parent` overlaps with `From<T> for T`, E0119). [`ObjectRef::upcast`] goes
/// to any ancestor.
impl<T: DerivedObject> From<ObjectRef<T>> for ObjectRef<builtin::AnyObject> {
    #[inline]
    fn from(value: ObjectRef<T>) -> Self {
        value.into_object()
    }
}

/// A weak reference: keeps the memory, not the payload, alive.
///
/// ```
/// use tvm_ffi::ObjectRef;
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.WeakRef")]
/// #[repr(C)]
/// pub struct Node { pub value: i64 }
/// let node = ObjectRef::new(Node { value: 7 });
/// let weak = node.downgrade();
/// assert_eq!(weak.upgrade().unwrap().value, 7);
/// drop(node);
/// assert!(weak.upgrade().is_none());
/// assert_eq!(weak.strong_count(), 0);
/// ```
pub struct WeakRef<T: ObjectType> {
    ptr: NonNull<TVMFFIObject>,
    _marker: PhantomData<T>,
}

// SAFETY: only atomic operations on the header happen through a WeakRef.
unsafe impl<T: ObjectType + Send + Sync> Send for WeakRef<T> {}
// SAFETY: as above.
unsafe impl<T: ObjectType + Send + Sync> Sync for WeakRef<T> {}

impl<T: ObjectType> WeakRef<T> {
    /// A strong reference if the object is still alive.
    pub fn upgrade(&self) -> Option<ObjectRef<T>> {
        // Lazily: an `ObjectRef` built for nothing would release a reference it never took.
        // SAFETY: `self` holds a weak reference: the memory is alive.
        unsafe { try_inc_strong(self.ptr) }.then(|| ObjectRef {
            ptr: self.ptr,
            _marker: PhantomData,
        })
    }

    /// Current strong reference count (0 once the payload is gone).
    pub fn strong_count(&self) -> u32 {
        // SAFETY: `self` holds a weak reference: the memory is alive.
        unsafe { strong_count_of(self.ptr) }
    }
}

/// Identity: two weak references are equal when they refer to the same object.
impl<T: ObjectType> PartialEq for WeakRef<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}

impl<T: ObjectType> Eq for WeakRef<T> {}

impl<T: ObjectType> std::hash::Hash for WeakRef<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.ptr.hash(state);
    }
}

impl<T: ObjectType> Clone for WeakRef<T> {
    fn clone(&self) -> Self {
        // SAFETY: `self` holds a weak reference.
        unsafe { inc_weak(self.ptr) };
        WeakRef {
            ptr: self.ptr,
            _marker: PhantomData,
        }
    }
}

impl<T: ObjectType> Drop for WeakRef<T> {
    fn drop(&mut self) {
        // SAFETY: self owns one weak reference.
        unsafe { dec_weak(self.ptr) }
    }
}

impl<T: ObjectType> fmt::Debug for WeakRef<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WeakRef<{}>({:p})", T::TYPE_KEY, self.ptr)
    }
}
