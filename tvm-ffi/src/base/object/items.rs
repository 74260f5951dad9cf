//! Objects with trailing items in the same allocation, as C++'s `make_inplace_array_object`
//! makes them (`ffi.Shape`'s dimensions, `ffi.Array`'s values): [`ObjectWithItems`],
//! [`ObjectRef::new_with_items`], [`ObjectRef::items`].
//!
//! The memory is `[header][payload][count][items]`: the payload right after the header, as
//! every runtime reads it, then the item count, written once, then the items. The count is the
//! allocation's own (the payload cannot misreport it), and the header's padding word marks the
//! objects made so ([`WITH_ITEMS`]): an object of the same type made without items (by
//! [`ObjectRef::new`], or by the runtime's creator for Python or a copy) has none.
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;

use super::header::{
    drop_payload, padding_word, ref_count, rust_object_deleter, ObjectCell, Release, BOTH_ONE,
    WITH_ITEMS,
};
use super::types::{DropRustObject, RustObject};
use super::ObjectRef;
use crate::abi::sys::TVMFFIObject;
use crate::abi::AllocFailure;

/// An object type whose objects may carry items after the payload, in the same allocation
/// (C++'s `make_inplace_array_object`): a variable-length tail fixed when the object is made,
/// with no second allocation and no pointer to follow.
///
/// ```
/// use tvm_ffi::object::ObjectWithItems;
/// use tvm_ffi::ObjectRef;
///
/// /// A polyline: its points follow the object.
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.Polyline")]
/// #[repr(C)]
/// pub struct Polyline { pub closed: bool }
///
/// impl ObjectWithItems for Polyline {
///     type Item = (f64, f64);
/// }
///
/// let line = ObjectRef::new_with_items(Polyline { closed: false }, [(0.0, 0.0), (1.0, 2.0)]);
/// assert_eq!(line.items(), &[(0.0, 0.0), (1.0, 2.0)]);
/// assert!(ObjectRef::new(Polyline { closed: true }).items().is_empty());
/// ```
pub trait ObjectWithItems: RustObject {
    /// The type of the trailing items.
    type Item: Send + Sync;
}

/// Offsets of the count and of the items in `[header][T][count][items]`, and the layout of the
/// whole; `None` when the size overflows.
fn items_layout<T, I>(len: usize) -> Option<(std::alloc::Layout, usize, usize)> {
    let (with_count, count_offset) = std::alloc::Layout::new::<ObjectCell<T>>()
        .extend(std::alloc::Layout::new::<usize>())
        .ok()?;
    let (whole, items_offset) = with_count
        .extend(std::alloc::Layout::array::<I>(len).ok()?)
        .ok()?;
    Some((whole.pad_to_align(), count_offset, items_offset))
}

/// The count and the first item of an object allocated by [`ObjectRef::new_with_items`].
///
/// # Safety
/// `ptr` is such an object of payload `T` and items `I`, whose memory is alive.
unsafe fn count_and_items<T, I>(ptr: *mut c_void) -> (usize, *mut I) {
    // A layout with no items locates the count (items do not move it).
    let (_, count_offset, _) =
        items_layout::<T, I>(0).expect("the layout of an allocated object exists");
    // SAFETY: the count was written at `count_offset` when the object was made, and never
    // changes (the caller's contract).
    let len = unsafe { ((ptr as *const u8).add(count_offset) as *const usize).read() };
    let (_, _, items_offset) =
        items_layout::<T, I>(len).expect("the layout of an allocated object exists");
    // SAFETY: inside the allocation, which holds `len` items at `items_offset`.
    (len, unsafe { (ptr as *mut u8).add(items_offset) } as *mut I)
}

/// The release of an object with items: the payload and the items with the last strong
/// reference, the memory (its layout from the stored count) with the last weak one.
struct ItemsRelease<T>(PhantomData<fn() -> T>);

impl<T: ObjectWithItems> Release for ItemsRelease<T> {
    const NEEDS_DROP: bool = std::mem::needs_drop::<T>() || std::mem::needs_drop::<T::Item>();

    unsafe fn drop_strong(ptr: *mut c_void) {
        // SAFETY: the deleter protocol: an object with items of `T` that no one can reach; its
        // payload is dropped the way `ObjectRef::new`'s are.
        unsafe { drop_payload::<T, DropRustObject>(ptr) };
        if std::mem::needs_drop::<T::Item>() {
            // SAFETY: as above; the items were all written when the object was made.
            let (len, items) = unsafe { count_and_items::<T, T::Item>(ptr) };
            // A panic in Drop must not unwind into C: the remaining items are leaked.
            let dropped = crate::abi::catch_discarding(|| {
                // SAFETY: `len` initialised items no one can reach, dropped once.
                unsafe { std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(items, len)) }
            });
            if !dropped {
                crate::abi::warn(format_args!(
                    "a panic in Drop of an item of `{}` was caught in the object deleter",
                    std::any::type_name::<T>()
                ));
            }
        }
    }

    unsafe fn free(ptr: *mut c_void) {
        // SAFETY: the deleter protocol: the memory is alive until freed here.
        let (len, _) = unsafe { count_and_items::<T, T::Item>(ptr) };
        if let Some((layout, _, _)) = items_layout::<T, T::Item>(len) {
            // SAFETY: allocated by `try_new_with_items` with exactly this layout.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }
}

impl<T: ObjectWithItems> ObjectRef<T> {
    /// Allocates a new object holding `payload` followed by `items`, in one block (as C++'s
    /// `make_inplace_array_object`), with strong and weak count 1.
    ///
    /// Out of memory it unwinds with an [`AllocFailure`], which the FFI boundary raises as a
    /// `MemoryError`; [`ObjectRef::try_new_with_items`] returns it instead.
    ///
    /// ```
    /// use tvm_ffi::object::ObjectWithItems;
    /// use tvm_ffi::ObjectRef;
    /// #[derive(tvm_ffi::Object)]
    /// #[ffi_type(key = "doc_examples.NewWithItems")]
    /// #[repr(C)]
    /// pub struct Row { pub id: i64 }
    /// impl ObjectWithItems for Row {
    ///     type Item = i64;
    /// }
    /// let row = ObjectRef::new_with_items(Row { id: 7 }, 1..=3);
    /// assert_eq!((row.id, row.items()), (7, &[1, 2, 3][..]));
    /// ```
    pub fn new_with_items(payload: T, items: impl IntoIterator<Item = T::Item>) -> Self {
        match Self::try_new_with_items(payload, items) {
            Ok(obj) => obj,
            Err(failure) => AllocFailure::raise(failure.bytes),
        }
    }

    /// Like [`ObjectRef::new_with_items`], but out of memory (or for a size beyond the address
    /// space) it returns the [`AllocFailure`] instead of unwinding.
    ///
    /// ```
    /// use tvm_ffi::object::ObjectWithItems;
    /// use tvm_ffi::ObjectRef;
    /// #[derive(tvm_ffi::Object)]
    /// #[ffi_type(key = "doc_examples.TryNewWithItems")]
    /// #[repr(C)]
    /// pub struct Tag {}
    /// impl ObjectWithItems for Tag {
    ///     type Item = u8;
    /// }
    /// let tag = ObjectRef::try_new_with_items(Tag {}, *b"abc").unwrap();
    /// assert_eq!(tag.items(), b"abc");
    /// ```
    pub fn try_new_with_items(
        payload: T,
        items: impl IntoIterator<Item = T::Item>,
    ) -> Result<Self, AllocFailure> {
        // Every runtime reads the payload right after the 24-byte header.
        assert!(
            ObjectCell::<T>::PAYLOAD_OFFSET == std::mem::size_of::<TVMFFIObject>(),
            "object payload `{}` is aligned above 8 bytes",
            std::any::type_name::<T>()
        );
        // Collected first: the allocation is sized by what the iterator really yields.
        let mut items: Vec<T::Item> = items.into_iter().collect();
        let len = items.len();
        let Some((layout, count_offset, items_offset)) = items_layout::<T, T::Item>(len) else {
            return Err(AllocFailure { bytes: usize::MAX });
        };
        // SAFETY: the layout has a non-zero size (the header alone is 24 bytes).
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw as *mut TVMFFIObject) else {
            return Err(AllocFailure {
                bytes: layout.size(),
            });
        };
        // SAFETY: fresh memory of `layout`: the header and payload of an `ObjectCell<T>`, the
        // count at `count_offset` and `len` items at `items_offset`, all inside it and aligned
        // (by construction of the layout). The items move out of the vector, which forgets
        // them (`set_len(0)`) and frees only its buffer. Nothing here can unwind.
        unsafe {
            ptr.as_ptr().write(TVMFFIObject {
                combined_ref_count: BOTH_ONE,
                type_index: T::runtime_type().index,
                __padding: T::INITIAL_PADDING | WITH_ITEMS,
                deleter: Some(rust_object_deleter::<ItemsRelease<T>>),
            });
            (raw.add(ObjectCell::<T>::PAYLOAD_OFFSET) as *mut T).write(payload);
            (raw.add(count_offset) as *mut usize).write(len);
            std::ptr::copy_nonoverlapping(
                items.as_ptr(),
                raw.add(items_offset) as *mut T::Item,
                len,
            );
            items.set_len(0);
        }
        Ok(ObjectRef {
            ptr,
            _marker: PhantomData,
        })
    }

    /// Whether this object was made with items, as a `T` (not as one of its subtypes, whose
    /// items and layout are their own).
    fn has_own_items(&self) -> bool {
        // SAFETY: we hold a strong reference: the header is alive; the padding word is only
        // ever accessed atomically.
        let padding = unsafe { padding_word(self.ptr) }.load(Ordering::Relaxed);
        padding & WITH_ITEMS != 0 && self.type_index() == T::runtime_type().index
    }

    /// The items the object was made with ([`ObjectRef::new_with_items`]); none for an
    /// object made without (by [`ObjectRef::new`], or by the runtime: from Python, or as a
    /// copy), and none through a reference to a parent type (downcast to the object's own type
    /// to read them).
    ///
    /// ```
    /// use tvm_ffi::object::ObjectWithItems;
    /// use tvm_ffi::ObjectRef;
    /// #[derive(tvm_ffi::Object)]
    /// #[ffi_type(key = "doc_examples.Items")]
    /// #[repr(C)]
    /// pub struct Word {}
    /// impl ObjectWithItems for Word {
    ///     type Item = char;
    /// }
    /// let word = ObjectRef::new_with_items(Word {}, "hey".chars());
    /// assert_eq!(word.items().iter().collect::<String>(), "hey");
    /// ```
    pub fn items(&self) -> &[T::Item] {
        if !self.has_own_items() {
            return &[];
        }
        // SAFETY: made by `try_new_with_items` as a `T` (the padding bit and the exact type
        // index), alive while `self` is borrowed; the items are initialised and only ever
        // mutated through `items_mut`, which needs the only reference.
        unsafe {
            let (len, items) = count_and_items::<T, T::Item>(self.ptr.as_ptr() as *mut c_void);
            std::slice::from_raw_parts(items, len)
        }
    }

    /// The items, mutably, when this is the only reference to the object (no other strong or
    /// weak reference, in any language): as `Arc::get_mut`. `None` otherwise, and for an
    /// object without items of its own ([`ObjectRef::items`]).
    ///
    /// ```
    /// use tvm_ffi::object::ObjectWithItems;
    /// use tvm_ffi::ObjectRef;
    /// #[derive(tvm_ffi::Object)]
    /// #[ffi_type(key = "doc_examples.ItemsMut")]
    /// #[repr(C)]
    /// pub struct Counts {}
    /// impl ObjectWithItems for Counts {
    ///     type Item = u32;
    /// }
    /// let mut counts = ObjectRef::new_with_items(Counts {}, [0, 0]);
    /// counts.items_mut().unwrap()[1] += 5;
    /// assert_eq!(counts.items(), &[0, 5]);
    /// let shared = counts.clone();
    /// assert!(counts.items_mut().is_none()); // no longer the only reference
    /// # drop(shared);
    /// ```
    pub fn items_mut(&mut self) -> Option<&mut [T::Item]> {
        // SAFETY: we hold a strong reference: the header is alive. Acquire: every release by
        // another holder (their last use of the items) happens before our writes.
        let count = unsafe { ref_count(self.ptr) }.load(Ordering::Acquire);
        if count != BOTH_ONE || !self.has_own_items() {
            return None;
        }
        // SAFETY: as in `items`, and this is the only reference (one strong, no weak besides
        // the strong ones'): nothing else can reach the items while `self` is borrowed
        // mutably (a new reference needs this one).
        unsafe {
            let (len, items) = count_and_items::<T, T::Item>(self.ptr.as_ptr() as *mut c_void);
            Some(std::slice::from_raw_parts_mut(items, len))
        }
    }
}
