//! Reference-counted objects: the 24-byte header, [`ObjectRef`] and [`WeakRef`].
//!
//! Reference counting follows the C++ runtime (`tvm/ffi/object.h`) bit for bit: the strong count
//! lives in the low 32 bits of `combined_ref_count`, the weak count in the high 32 bits, and the
//! weak count carries one extra reference on behalf of all strong references. Clone and drop are
//! inline atomic operations; libtvm_ffi is never called on those paths.
//!
//! # Construction state
//!
//! Objects of Rust-defined types carry a state in the header's padding word, so that the
//! runtime's reflected setters (used by its constructor, JSON/pickle loading and deep copy)
//! never write a field under a live Rust reference: an object made by the runtime through the
//! type's creator is *open* until Rust first dereferences it, which *seals* it; read-only
//! fields of a sealed object are immutable, and objects not built by Rust at all (such as
//! Python subclass instances that Python allocated) are refused. See [`crate::reflection`].
use std::ffi::{c_int, c_void};
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicI64, AtomicU32, AtomicU64, Ordering};

use crate::sys::{self, TVMFFIObject};

const STRONG_ONE: u64 = 1;
const WEAK_ONE: u64 = 1 << 32;
const BOTH_ONE: u64 = STRONG_ONE | WEAK_ONE;
const STRONG_MASK: u64 = (1 << 32) - 1;

/// Index and inheritance depth of a type in the runtime's registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuntimeType {
    /// The type index stored in every object header.
    pub index: i32,
    /// Depth in the single-inheritance tree (`ffi.Object` is 0).
    pub depth: i32,
}

/// The [`RuntimeType`] of a type defined or declared by this library, assigned when the
/// library loads (see [`crate::registry`]).
pub struct TypeSlot {
    // index in the low 32 bits, depth in the high 32 bits; 0 means "not yet registered" (index
    // 0 is `None`, never an object type), FAILED that registration failed.
    packed: AtomicI64,
}

const FAILED: i64 = -1;

impl TypeSlot {
    /// An unresolved slot.
    pub const fn new() -> Self {
        TypeSlot {
            packed: AtomicI64::new(0),
        }
    }

    /// Records the runtime type (called by registration).
    pub fn set(&self, ty: RuntimeType) {
        let packed = (ty.index as u32 as i64) | ((ty.depth as i64) << 32);
        self.packed.store(packed, Ordering::Release);
    }

    /// Records that registration failed: using the type is then a clear panic, never a
    /// fallback to whatever else the runtime registered under the key.
    pub fn set_failed(&self) {
        self.packed.store(FAILED, Ordering::Release);
    }

    /// The resolved type, if any.
    #[inline]
    pub fn get(&self) -> Option<RuntimeType> {
        let packed = self.packed.load(Ordering::Acquire);
        if packed <= 0 {
            None
        } else {
            Some(RuntimeType {
                index: packed as i32,
                depth: (packed >> 32) as i32,
            })
        }
    }

    /// The resolved type; registers this library's types first if that has not happened yet.
    ///
    /// # Panics
    /// If the type did not register (see [`crate::registry::load_errors`]), or when called
    /// while this library's registration is running (a field default that makes an object of
    /// a type registered later).
    #[inline]
    pub fn resolve(&self, key: &str) -> RuntimeType {
        match self.get() {
            Some(ty) => ty,
            None => self.resolve_slow(key),
        }
    }

    #[cold]
    fn resolve_slow(&self, key: &str) -> RuntimeType {
        if crate::registry::registering_on_this_thread() {
            panic!(
                "TVM-FFI type `{key}` was used while this library's types are being registered \
                 (for example, by a field default): make such defaults a `default_factory`"
            );
        }
        crate::registry::ensure_registered();
        match self.get() {
            Some(ty) => ty,
            None => panic!(
                "TVM-FFI type `{key}` is not registered by this library: see \
                 tvm_ffi::registry::load_errors() (a conflicting layout, or a parent defined in \
                 a library that was not loaded first)"
            ),
        }
    }
}

impl Default for TypeSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// A payload type of a TVM-FFI object: the part of the object after the 24-byte header.
///
/// # Safety
/// Implementors guarantee that every object whose header carries this type's index (or the index
/// of a subtype) is laid out as `[TVMFFIObject header][Self]`, with `Self` placed at
/// [`ObjectCell::PAYLOAD_OFFSET`], and that `Self` is only ever reached through shared
/// references. Payloads must also be safe to share between threads (`Send + Sync`): foreign
/// code may use an object from any thread. `#[derive(Object)]` implements this trait (and
/// checks `Send + Sync` field by field, so the error points at the offending field); the
/// built-in payloads are in [`crate::builtin`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI object type",
    label = "not an object type",
    note = "define object types with `#[derive(tvm_ffi::Object)]` (or declare a foreign one with `#[ffi_type(key = \"..\", external)]`)"
)]
pub unsafe trait ObjectType: Sized + 'static {
    /// The registry key, e.g. `"my_ext.Point"`.
    const TYPE_KEY: &'static str;
    /// The runtime index and depth of this type.
    fn runtime_type() -> RuntimeType;
    /// Whether objects of this type carry a construction state (see
    /// [`construction`](crate::object#construction-state)); set by `#[derive(Object)]`.
    #[doc(hidden)]
    const TRACKS_CONSTRUCTION: bool = false;
    /// The registry key (`"my_ext.Point"`).
    fn type_key() -> &'static str {
        Self::TYPE_KEY
    }
    /// The runtime type index (assigned when the defining library loaded).
    fn type_index() -> i32 {
        Self::runtime_type().index
    }
}

/// An object type with a parent other than itself (every type but `ffi.Object`).
pub trait DerivedObject: ObjectType {
    /// The parent type; its payload is a prefix of this type's payload.
    type Parent: ObjectType;
}

/// An object type that Rust code may allocate with [`ObjectRef::new`]: a type defined in Rust
/// (by `#[derive(Object)]`), as opposed to a built-in or a type declared from another language.
///
/// # Safety
/// The runtime must be able to destroy such objects with the Rust deleter alone.
pub unsafe trait RustObject: ObjectType {}

/// Marker for the position of an ancestor in the parent chain (see [`IsA`]).
pub struct Here;
/// Marker for an ancestor further up the parent chain (see [`IsA`]).
pub struct There<I>(PhantomData<I>);

/// `Self` is `U` or derives from it. `I` is inferred; it encodes the path up the parent chain so
/// that the implementations do not overlap.
///
/// # Safety
/// Only the two blanket implementations in this crate exist; they are sound because every
/// [`DerivedObject`] payload starts with its parent's payload.
pub unsafe trait IsA<U: ObjectType, I>: ObjectType {}
// SAFETY: reflexive.
unsafe impl<T: ObjectType> IsA<T, Here> for T {}
// SAFETY: the parent's payload is a prefix of T's payload (ObjectType/DerivedObject contract).
unsafe impl<T, U, I> IsA<U, There<I>> for T
where
    T: DerivedObject,
    U: ObjectType,
    T::Parent: IsA<U, I>,
{
}

/// The memory of an object allocated by Rust: the header followed by the payload.
#[repr(C)]
pub struct ObjectCell<T> {
    header: TVMFFIObject,
    payload: T,
}

impl<T> ObjectCell<T> {
    /// Offset of the payload from the start of the header (24 for every supported payload).
    pub const PAYLOAD_OFFSET: usize = std::mem::offset_of!(ObjectCell<T>, payload);
    /// Total size of the object, header included.
    pub const TOTAL_SIZE: usize = std::mem::size_of::<ObjectCell<T>>();
}

#[inline(always)]
fn ref_count(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU64 {
    // SAFETY: `combined_ref_count` is the first field, 8-byte aligned, and only ever accessed
    // atomically by every runtime (C++ uses __atomic builtins on it). The reference never
    // outlives the object in practice: callers hold a strong or weak reference.
    unsafe { &*(ptr.as_ptr() as *const AtomicU64) }
}

/// Increments the strong count of a live object.
///
/// # Safety
/// `ptr` must point to a live object on which the caller holds a strong reference.
#[inline(always)]
pub(crate) unsafe fn inc_ref(ptr: NonNull<TVMFFIObject>) {
    ref_count(ptr).fetch_add(STRONG_ONE, Ordering::Relaxed);
}

/// Releases one strong reference, running the deleter when counts reach zero.
///
/// # Safety
/// The caller must own one strong reference to `ptr`, which it gives up.
#[inline(always)]
pub(crate) unsafe fn dec_ref(ptr: NonNull<TVMFFIObject>) {
    let before = ref_count(ptr).fetch_sub(STRONG_ONE, Ordering::Release);
    if before == BOTH_ONE {
        fence(Ordering::Acquire);
        // SAFETY: last strong and last weak reference: the object may be destroyed and freed.
        unsafe { call_deleter(ptr, sys::kTVMFFIObjectDeleterFlagBitMaskBoth) };
    } else if before & STRONG_MASK == STRONG_ONE {
        // SAFETY: last strong reference while weak references remain.
        unsafe { dec_ref_slow(ptr) };
    }
}

#[cold]
unsafe fn dec_ref_slow(ptr: NonNull<TVMFFIObject>) {
    fence(Ordering::Acquire);
    // SAFETY: strong count reached zero; destroy the payload, keep the memory.
    unsafe { call_deleter(ptr, sys::kTVMFFIObjectDeleterFlagBitMaskStrong) };
    // SAFETY: the strong references collectively held one weak reference; release it.
    unsafe { dec_weak(ptr) };
}

/// # Safety
/// The caller owns one weak reference to `ptr`, which it gives up.
#[inline]
unsafe fn dec_weak(ptr: NonNull<TVMFFIObject>) {
    if ref_count(ptr).fetch_sub(WEAK_ONE, Ordering::Release) == WEAK_ONE {
        fence(Ordering::Acquire);
        // SAFETY: the last weak reference is gone: free the memory.
        unsafe { call_deleter(ptr, sys::kTVMFFIObjectDeleterFlagBitMaskWeak) };
    }
}

#[inline]
unsafe fn call_deleter(ptr: NonNull<TVMFFIObject>, flags: c_int) {
    // SAFETY: the header is valid until the weak-flag deleter call frees it.
    let deleter = unsafe { (*ptr.as_ptr()).deleter };
    if let Some(deleter) = deleter {
        // SAFETY: the deleter protocol of the header: flags tell what to do.
        unsafe { deleter(ptr.as_ptr() as *mut c_void, flags) };
    }
}

/// The deleter of objects allocated by [`ObjectRef::new`].
unsafe extern "C" fn rust_object_deleter<T>(ptr: *mut c_void, flags: c_int) {
    let cell = ptr as *mut ObjectCell<T>;
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // A panic in Drop must not unwind into C; the payload is then leaked, not freed twice.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: strong count reached zero: no one can reach the payload any more.
            unsafe { std::ptr::drop_in_place(std::ptr::addr_of_mut!((*cell).payload)) }
        }));
        if result.is_err() {
            crate::boundary::warn(format_args!(
                "a panic in Drop of `{}` was caught in the object deleter",
                std::any::type_name::<T>()
            ));
        }
    }
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: allocated by ObjectRef::new with this exact layout; last reference gone.
        unsafe { std::alloc::dealloc(cell as *mut u8, std::alloc::Layout::new::<ObjectCell<T>>()) };
    }
}

// ---- construction state ----------------------------------------------------------------
//
// The runtime writes the fields of an object it is constructing (auto-init, JSON and pickle
// loading, deep-copy fix-ups) through the reflected setters, including the setters of fields
// that are read-only once the object is built. For objects of Rust-defined types this must
// never happen under a live Rust `&T`, so such objects carry a state in the header's padding
// word (which other runtimes zero and never read):
//
// - FOREIGN (0): not built by Rust at all, e.g. an instance of a Python `@py_class` subclass
//   that Python allocated (zero-filled, its own fields placed where Rust may keep `skip`
//   fields). Rust refuses to use its payload: `Deref` panics, accessors raise `TypeError`.
// - SEALED (1): immutable except for `Rw` fields. Every object Rust allocates with
//   `ObjectRef::new`, and every object Rust has ever dereferenced, is sealed.
// - OPEN (2): made by the runtime through the type's creator or shallow copy and not yet seen
//   by Rust; reflected getters and setters may touch its fields, one at a time.
// - BUSY (3): a reflected getter or setter is inside an OPEN object right now.
//
// `Deref` seals (waiting out a BUSY accessor), so no `&T` ever coexists with a setter.

/// State value: not built by Rust (see the construction-state notes above).
pub(crate) const FOREIGN: u32 = 0;
/// State value: immutable.
pub(crate) const SEALED: u32 = 1;
/// State value: still being constructed by the runtime.
pub(crate) const OPEN: u32 = 2;
const BUSY: u32 = 3;

#[inline(always)]
fn state_word(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU32 {
    // SAFETY: `__padding` is a 4-byte aligned u32 at offset 12 of the header; for objects of
    // Rust-defined types only this module accesses it, and only atomically.
    unsafe { &*(std::ptr::addr_of!((*ptr.as_ptr()).__padding) as *const AtomicU32) }
}

/// Marks the object immutable (waits while a reflected accessor is inside it).
///
/// # Panics
/// If the object was not built by Rust (FOREIGN): its payload cannot be trusted.
#[inline]
fn seal(ptr: NonNull<TVMFFIObject>) {
    if state_word(ptr).load(Ordering::Acquire) != SEALED {
        seal_slow(ptr);
    }
}

#[cold]
fn seal_slow(ptr: NonNull<TVMFFIObject>) {
    let word = state_word(ptr);
    loop {
        match word.compare_exchange_weak(OPEN, SEALED, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) | Err(SEALED) => return,
            Err(FOREIGN) => panic!("{}", foreign_message(ptr)),
            Err(_) => std::hint::spin_loop(),
        }
    }
}

#[cold]
fn foreign_message(ptr: NonNull<TVMFFIObject>) -> std::string::String {
    // SAFETY: the object is alive (the caller holds a reference); the type index never changes.
    let index = unsafe { std::ptr::addr_of!((*ptr.as_ptr()).type_index).read() };
    format!(
        "the object of type `{}` was not built by Rust (for example, a Python subclass \
         instance allocated by Python), so Rust cannot use its payload",
        crate::type_info::type_key_of_index(index)
    )
}

/// Why [`with_construction_access`] did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    /// Built and sealed: read-only fields are immutable, reads need no lock.
    Sealed,
    /// Not built by Rust: nothing may be read or written.
    Foreign,
}

impl Closed {
    /// The error an accessor raises for a FOREIGN object.
    pub(crate) fn foreign_error(ptr: NonNull<TVMFFIObject>) -> crate::Error {
        crate::Error::type_error(foreign_message(ptr))
    }
}

/// Runs `access` with exclusive access to the fields of an OPEN object.
///
/// # Safety
/// `ptr` must point to a live object of a type with `TRACKS_CONSTRUCTION`.
pub(crate) unsafe fn with_construction_access<R>(
    ptr: NonNull<TVMFFIObject>,
    access: impl FnOnce() -> R,
) -> Result<R, Closed> {
    struct Reopen(&'static AtomicU32);
    impl Drop for Reopen {
        fn drop(&mut self) {
            self.0.store(OPEN, Ordering::Release);
        }
    }
    let word = state_word(ptr);
    loop {
        match word.compare_exchange_weak(OPEN, BUSY, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => break,
            Err(SEALED) => return Err(Closed::Sealed),
            Err(FOREIGN) => return Err(Closed::Foreign),
            Err(_) => std::hint::spin_loop(),
        }
    }
    let _reopen = Reopen(word);
    Ok(access())
}

/// The construction state of an object, without waiting: `Some(Sealed | Foreign)` when it is
/// closed, `None` while it is OPEN or BUSY.
///
/// # Safety
/// `ptr` must point to a live object.
#[inline]
pub(crate) unsafe fn closed_state(ptr: NonNull<TVMFFIObject>) -> Option<Closed> {
    match state_word(ptr).load(Ordering::Acquire) {
        SEALED => Some(Closed::Sealed),
        FOREIGN => Some(Closed::Foreign),
        _ => None,
    }
}

/// A strong reference to an object whose payload is (at least) `T`.
///
/// Pointer-sized and layout-compatible with C++ `ObjectRef`: a non-null pointer to the header.
/// Clone and drop are inline atomic operations on the header.
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
    /// One allocation: the header and the payload share one block.
    pub fn new(payload: T) -> Self {
        let state = if T::TRACKS_CONSTRUCTION {
            SEALED
        } else {
            FOREIGN
        };
        let ptr = alloc_object_in_state(payload, T::runtime_type().index, state);
        ObjectRef {
            ptr,
            _marker: PhantomData,
        }
    }
}

/// Allocates `[header][payload]` with strong and weak count 1 and the Rust deleter.
///
/// The caller is responsible for `type_index` describing a type whose payload layout is `P`.
pub(crate) fn alloc_object<P>(payload: P, type_index: i32) -> NonNull<TVMFFIObject> {
    // Payloads without construction state (closures, built-in cells) keep the zeroed padding
    // every runtime writes.
    alloc_object_in_state(payload, type_index, FOREIGN)
}

/// [`alloc_object`] with an explicit [construction state](self#construction-state).
pub(crate) fn alloc_object_in_state<P>(
    payload: P,
    type_index: i32,
    state: u32,
) -> NonNull<TVMFFIObject> {
    // Every runtime and every `Deref` reads the payload right after the 24-byte header; a
    // payload aligned above 8 would start later (callers box such payloads; derived object
    // types are rejected at compile time). Constant-folded away for valid payloads.
    assert!(
        ObjectCell::<P>::PAYLOAD_OFFSET == std::mem::size_of::<TVMFFIObject>(),
        "object payload `{}` is aligned above 8 bytes",
        std::any::type_name::<P>()
    );
    {
        let layout = std::alloc::Layout::new::<ObjectCell<P>>();
        // SAFETY: the layout has a non-zero size (the header alone is 24 bytes).
        let raw = unsafe { std::alloc::alloc(layout) } as *mut ObjectCell<P>;
        let Some(cell) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        // SAFETY: freshly allocated, properly aligned memory for an ObjectCell<P>.
        unsafe {
            cell.as_ptr().write(ObjectCell {
                header: TVMFFIObject {
                    combined_ref_count: BOTH_ONE,
                    type_index,
                    __padding: state,
                    deleter: Some(rust_object_deleter::<P>),
                },
                payload,
            });
        }
        cell.cast()
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
        // SAFETY: the object is alive while `self` exists, and its type index never changes
        // after construction (a plain read of that one field, not a reference to the header).
        unsafe { std::ptr::addr_of!((*self.ptr.as_ptr()).type_index).read() }
    }

    /// The registry key of the object's dynamic type.
    pub fn type_key(&self) -> &'static str {
        crate::type_info::type_key_of_index(self.type_index())
    }

    /// Current strong reference count.
    #[inline]
    pub fn strong_count(&self) -> u32 {
        (ref_count(self.ptr).load(Ordering::Relaxed) & STRONG_MASK) as u32
    }

    /// Current weak reference count (including the one held by the strong references).
    #[inline]
    pub fn weak_count(&self) -> u32 {
        (ref_count(self.ptr).load(Ordering::Relaxed) >> 32) as u32
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
        crate::type_info::is_instance_index(self.type_index(), U::runtime_type())
    }

    /// A new reference typed as `U` when the object is an instance of `U`.
    pub fn downcast<U: ObjectType>(&self) -> Option<ObjectRef<U>> {
        if self.is_instance::<U>() {
            Some(self.clone().cast_unchecked())
        } else {
            None
        }
    }

    /// Like [`ObjectRef::downcast`], consuming `self` (no reference count change), and handing
    /// `self` back on mismatch.
    pub fn try_downcast<U: ObjectType>(self) -> Result<ObjectRef<U>, Self> {
        if self.is_instance::<U>() {
            Ok(self.cast_unchecked())
        } else {
            Err(self)
        }
    }

    /// Upcasts to an ancestor type (checked at compile time, free at run time).
    #[inline]
    pub fn upcast<U: ObjectType, I>(self) -> ObjectRef<U>
    where
        T: IsA<U, I>,
    {
        self.cast_unchecked()
    }

    /// Upcasts to the root object type.
    #[inline]
    pub fn into_object(self) -> ObjectRef<crate::builtin::Object> {
        self.cast_unchecked()
    }

    /// Borrows as a reference to the root object type.
    #[inline]
    pub fn as_object(&self) -> &ObjectRef<crate::builtin::Object> {
        // SAFETY: ObjectRef is repr(transparent) over the pointer for every T; every object is
        // an instance of the root type.
        unsafe { &*(self as *const Self as *const ObjectRef<crate::builtin::Object>) }
    }

    /// Creates a weak reference.
    pub fn downgrade(&self) -> WeakRef<T> {
        ref_count(self.ptr).fetch_add(WEAK_ONE, Ordering::Relaxed);
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
        if T::TRACKS_CONSTRUCTION {
            seal(self.ptr);
        }
        // SAFETY: ObjectType contract: the payload of an instance of T sits at PAYLOAD_OFFSET.
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

impl<T: ObjectType> fmt::Debug for ObjectRef<T> {
    /// Prints through the runtime's reflection printer (the same text as Python's `repr`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match crate::type_info::repr_of(self.as_object()) {
            Some(text) => f.write_str(&text),
            None => write!(f, "{}({:p})", self.type_key(), self.ptr),
        }
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

/// A weak reference: keeps the memory, not the payload, alive.
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
        let counter = ref_count(self.ptr);
        let mut current = counter.load(Ordering::Relaxed);
        while current & STRONG_MASK != 0 {
            match counter.compare_exchange_weak(
                current,
                current + STRONG_ONE,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    return Some(ObjectRef {
                        ptr: self.ptr,
                        _marker: PhantomData,
                    })
                }
                Err(actual) => current = actual,
            }
        }
        None
    }

    /// Current strong reference count (0 once the payload is gone).
    pub fn strong_count(&self) -> u32 {
        (ref_count(self.ptr).load(Ordering::Relaxed) & STRONG_MASK) as u32
    }
}

impl<T: ObjectType> Clone for WeakRef<T> {
    fn clone(&self) -> Self {
        ref_count(self.ptr).fetch_add(WEAK_ONE, Ordering::Relaxed);
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
