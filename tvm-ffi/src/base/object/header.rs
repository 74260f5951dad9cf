//! The 24-byte object header: reference counts, allocation of Rust objects and their deleter.
//!
//! Reference counting follows the C++ runtime (`tvm/ffi/object.h`) bit for bit: the strong count
//! lives in the low 32 bits of `combined_ref_count`, the weak count in the high 32 bits, and the
//! weak count carries one extra reference on behalf of all strong references. Clone and drop are
//! inline atomic operations; libtvm_ffi is never called on those paths.
use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use crate::abi::sys::{self, TVMFFIObject};
use crate::abi::AllocFailure;

const STRONG_ONE: u64 = 1;
const WEAK_ONE: u64 = 1 << 32;
pub(crate) const BOTH_ONE: u64 = STRONG_ONE | WEAK_ONE;
pub(crate) const STRONG_MASK: u64 = (1 << 32) - 1;

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

/// The header's combined reference count.
///
/// # Safety
/// The object's memory must stay alive for `'a` (the caller holds a strong or weak reference,
/// or runs its deleter).
#[inline(always)]
pub(crate) unsafe fn ref_count<'a>(ptr: NonNull<TVMFFIObject>) -> &'a AtomicU64 {
    // SAFETY: `combined_ref_count` is the first field, 8-byte aligned, and only ever accessed
    // atomically by every runtime (C++ uses __atomic builtins on it); the memory lives for 'a
    // (the caller's contract).
    unsafe { &*(ptr.as_ptr() as *const AtomicU64) }
}

/// The bit of the header's padding word that marks an object allocated with trailing items
/// (`ObjectRef::new_with_items`); the construction state (the low bits) and the key-hash cache
/// (the bits above) keep it.
pub(crate) const WITH_ITEMS: u32 = 1 << 3;

/// The header's padding word, which Rust-defined types use for their construction state (see
/// `reflection::construction`), [`WITH_ITEMS`] and their key-hash cache ([`cached_key_hash`]);
/// other runtimes zero it and never read it. Bits: 0-2 the construction state, 3
/// [`WITH_ITEMS`], 4 `HASHED`, 5-31 the cached hash.
///
/// # Safety
/// As for [`ref_count`]: the object's memory must stay alive for `'a`.
#[inline(always)]
pub(crate) unsafe fn padding_word<'a>(ptr: NonNull<TVMFFIObject>) -> &'a AtomicU32 {
    // SAFETY: `__padding` is a 4-byte aligned u32 at offset 12 of the header; for objects of
    // Rust-defined types only the construction state and the key-hash cache touch it, and only
    // atomically; the memory lives for 'a (the caller's contract).
    unsafe { &*(std::ptr::addr_of!((*ptr.as_ptr()).__padding) as *const AtomicU32) }
}

/// In the header's padding word (see [`padding_word`]), above the construction state's three
/// low bits and [`WITH_ITEMS`]: set once the object's key hash is cached in the bits above it.
const HASHED: u32 = 1 << 4;
const HASH_SHIFT: u32 = 5;

/// The hash of a key object whose type registers its `__any_hash__` through this SDK: the
/// hook's first answer (its low 27 bits), cached in the object's header, so that every later
/// call answers the same without running user code.
///
/// The runtime's hash tables need this: a dense table finds an entry's predecessor by hashing
/// the entry's key again and walking its chain, so a hash that changes (a hook that is not
/// pure) walks off the chain (undefined behaviour); and an error raised while the runtime
/// rebuilds a table (moving the entries one by one, hashing each) leaves the old table holding
/// entries it released. With the cache, the hook runs only for a key's first hash, which the
/// runtime always takes before it changes anything (a key enters a dense table only after it
/// was hashed), so an error there is safe to raise, and no later call can fail or differ.
///
/// # Safety
/// `ptr` is a live object (the caller holds a reference) of a Rust-defined type, or of a
/// type whose header padding no one else uses.
pub(crate) unsafe fn cached_key_hash<E>(
    ptr: NonNull<TVMFFIObject>,
    compute: impl FnOnce() -> Result<i64, E>,
) -> Result<i64, E> {
    // SAFETY: the caller's contract.
    let word = unsafe { padding_word(ptr) };
    let cached = |state: u32| i64::from(state >> HASH_SHIFT);
    let state = word.load(Ordering::Acquire);
    if state & HASHED != 0 {
        return Ok(cached(state));
    }
    let value = (compute()? as u64 as u32) & (u32::MAX >> HASH_SHIFT);
    match word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
        (state & HASHED == 0).then_some(state | HASHED | (value << HASH_SHIFT))
    }) {
        Ok(_) => Ok(i64::from(value)),
        // Another thread cached its answer first: that one counts.
        Err(state) => Ok(cached(state)),
    }
}

/// The type index stored in a live object's header.
///
/// # Safety
/// `ptr` must point to a live object.
#[inline(always)]
pub(crate) unsafe fn type_index_of(ptr: NonNull<TVMFFIObject>) -> i32 {
    // SAFETY: the object is alive and its type index never changes after construction (a
    // plain read of that one field, not a reference to the header).
    unsafe { std::ptr::addr_of!((*ptr.as_ptr()).type_index).read() }
}

/// Increments the strong count of a live object.
///
/// # Safety
/// `ptr` must point to a live object on which the caller holds a strong reference.
#[inline(always)]
pub(crate) unsafe fn inc_ref(ptr: NonNull<TVMFFIObject>) {
    // SAFETY: the caller holds a strong reference: the memory is alive.
    unsafe { ref_count(ptr) }.fetch_add(STRONG_ONE, Ordering::Relaxed);
}

/// Releases one strong reference, running the deleter when counts reach zero.
///
/// # Safety
/// The caller must own one strong reference to `ptr`, which it gives up.
#[inline(always)]
pub(crate) unsafe fn dec_ref(ptr: NonNull<TVMFFIObject>) {
    // SAFETY: the caller owns a strong reference: the memory is alive until it is released.
    let before = unsafe { ref_count(ptr) }.fetch_sub(STRONG_ONE, Ordering::Release);
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

/// Takes a strong reference through a weak one, unless the strong count already reached zero.
///
/// # Safety
/// The object's memory must be alive (the caller holds a weak or strong reference, or a
/// container lock that keeps the slot's reference from being released).
#[inline]
pub(crate) unsafe fn try_inc_strong(ptr: NonNull<TVMFFIObject>) -> bool {
    // SAFETY: the memory is alive (the caller's contract).
    let counter = unsafe { ref_count(ptr) };
    let mut current = counter.load(Ordering::Relaxed);
    while current & STRONG_MASK != 0 {
        match counter.compare_exchange_weak(
            current,
            current + STRONG_ONE,
            Ordering::Acquire,
            Ordering::Relaxed,
        ) {
            Ok(_) => return true,
            Err(actual) => current = actual,
        }
    }
    false
}

/// Takes one more weak reference.
///
/// # Safety
/// The caller holds a strong or weak reference to `ptr` (or runs its deleter).
#[inline]
pub(crate) unsafe fn inc_weak(ptr: NonNull<TVMFFIObject>) {
    // SAFETY: the memory is alive (the caller's contract).
    unsafe { ref_count(ptr) }.fetch_add(WEAK_ONE, Ordering::Relaxed);
}

/// # Safety
/// The caller owns one weak reference to `ptr`, which it gives up.
#[inline]
pub(crate) unsafe fn dec_weak(ptr: NonNull<TVMFFIObject>) {
    // SAFETY: the caller owns a weak reference: the memory is alive until it is released.
    if unsafe { ref_count(ptr) }.fetch_sub(WEAK_ONE, Ordering::Release) == WEAK_ONE {
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

/// How an object allocated by Rust is released: what its strong phase drops, how its weak
/// phase frees the memory. The deleter ([`rust_object_deleter`]) runs them.
pub(crate) trait Release {
    /// Whether the strong phase runs code (drop glue), which may release other objects.
    const NEEDS_DROP: bool;

    /// Drops what the object owns.
    ///
    /// # Safety
    /// The deleter protocol: the strong count of the object at `ptr`, allocated for this
    /// release, just reached zero; this runs once.
    unsafe fn drop_strong(ptr: *mut c_void);

    /// Frees the memory.
    ///
    /// # Safety
    /// The deleter protocol: the weak count of the object at `ptr`, allocated for this
    /// release, just reached zero, after [`Release::drop_strong`].
    unsafe fn free(ptr: *mut c_void);
}

/// The release of an `ObjectCell<T>` whose payload `D` drops.
pub(crate) struct CellRelease<T, D>(std::marker::PhantomData<fn() -> (T, D)>);

impl<T, D: DropPayload<T>> Release for CellRelease<T, D> {
    const NEEDS_DROP: bool = std::mem::needs_drop::<T>();
    #[inline(always)]
    unsafe fn drop_strong(ptr: *mut c_void) {
        // SAFETY: the caller's contract: an `ObjectCell<T>` allocated with drop strategy `D`.
        unsafe { drop_payload::<T, D>(ptr) }
    }
    #[inline(always)]
    unsafe fn free(ptr: *mut c_void) {
        // SAFETY: the caller's contract.
        unsafe { free_cell::<T>(ptr) }
    }
}

/// The deleter of objects allocated by Rust. Releasing an object drops its payload, which may
/// release the last reference to another object, and so on: a graph of any depth is released
/// iteratively, never by unbounded recursion.
///
/// At most `MAX_NESTED_RELEASES` payload drops nest on one thread; a release beyond that is
/// queued, and the outermost release runs the queue before it returns. A chain of a million
/// objects is thus released in a loop at a bounded stack depth (a C++ chain of that depth
/// overflows the stack). A payload without drop glue (it can release nothing) costs nothing
/// extra; one with drop glue costs two updates of a thread-local counter.
pub(crate) unsafe extern "C" fn rust_object_deleter<R: Release>(ptr: *mut c_void, flags: c_int) {
    // A payload without drop glue releases nothing else: no bookkeeping at all.
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 && R::NEEDS_DROP {
        let dropped = RELEASES.with(|state| {
            if state.get() & DEPTH_MASK >= MAX_NESTED_RELEASES {
                return false;
            }
            state.set(state.get() + 1);
            // SAFETY: the strong count reached zero (deleter protocol).
            unsafe { R::drop_strong(ptr) };
            state.set(state.get() - 1);
            // The outermost release runs what deeper ones queued.
            if state.get() == DEFERRED_PENDING {
                run_deferred(state);
            }
            true
        });
        if !dropped {
            if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak == 0 {
                // Weak references remain, and the last of them may go (later in this cascade,
                // on another thread, from C++) before the queue drains: the queued drop holds a
                // weak reference of its own, so the memory outlives it.
                // SAFETY: the caller (strong count zero, weak flag unset) still holds the weak
                // reference of the strong ones: the count is at least one.
                unsafe { inc_weak(NonNull::new_unchecked(ptr as *mut TVMFFIObject)) };
                // SAFETY: the deleter protocol, carried out later by the outermost release,
                // which then gives up the weak reference taken above.
                return unsafe { defer(ptr, flags, release_now_then_dec_weak::<R>) };
            }
            // SAFETY: the deleter protocol, carried out later by the outermost release; no
            // other reference exists, so nothing can free the memory meanwhile.
            return unsafe { defer(ptr, flags, release_now::<R>) };
        }
    } else if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: the strong count reached zero; the payload has no drop glue to run anyway.
        unsafe { R::drop_strong(ptr) };
    }
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: the weak count reached zero (deleter protocol).
        unsafe { R::free(ptr) };
    }
}

/// Drops the payload (strong flag) and frees the memory (weak flag) of an `ObjectCell<T>`: a
/// release deferred by `defer`.
///
/// # Safety
/// The deleter protocol: `ptr` is an object allocated for release `R` whose strong count
/// (strong flag) or weak count (weak flag) just reached zero.
unsafe fn release_now<R: Release>(ptr: *mut c_void, flags: c_int) {
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: the caller's contract.
        unsafe { R::drop_strong(ptr) };
    }
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: the caller's contract.
        unsafe { R::free(ptr) };
    }
}

/// Drops the payload of a deferred strong-only release, then gives up the weak reference the
/// deferral took (which may free the memory).
///
/// # Safety
/// As for [`release_now`] with the strong flag, and the caller owns one weak reference.
unsafe fn release_now_then_dec_weak<R: Release>(ptr: *mut c_void, flags: c_int) {
    // SAFETY: the caller's contract.
    unsafe { release_now::<R>(ptr, flags) };
    // SAFETY: the weak reference taken by the deferral; the payload is gone.
    unsafe { dec_weak(NonNull::new_unchecked(ptr as *mut TVMFFIObject)) };
}

/// Drops the payload of an `ObjectCell<T>` whose strong count reached zero, the way `D` says.
///
/// # Safety
/// `ptr` is an `ObjectCell<T>` allocated by [`alloc_object_with`] with drop strategy `D` that no
/// one can reach any more.
#[inline(always)]
pub(crate) unsafe fn drop_payload<T, D: DropPayload<T>>(ptr: *mut c_void) {
    let cell = ptr as *mut ObjectCell<T>;
    // A panic in Drop must not unwind into C; the payload is then leaked, not freed twice.
    let dropped = crate::abi::catch_discarding(|| {
        // SAFETY: strong count reached zero: no one can reach the payload any more.
        unsafe {
            D::drop_payload(
                NonNull::new_unchecked(ptr as *mut TVMFFIObject),
                std::ptr::addr_of_mut!((*cell).payload),
            )
        }
    });
    if !dropped {
        crate::abi::warn(format_args!(
            "a panic in Drop of `{}` was caught in the object deleter",
            std::any::type_name::<T>()
        ));
    }
}

/// Frees the memory of an `ObjectCell<T>` whose weak count reached zero.
///
/// # Safety
/// `ptr` is an `ObjectCell<T>` allocated by [`alloc_object`], its payload already dropped.
#[inline(always)]
unsafe fn free_cell<T>(ptr: *mut c_void) {
    // SAFETY: allocated by `alloc_object` with this exact layout; last reference gone.
    unsafe { std::alloc::dealloc(ptr as *mut u8, std::alloc::Layout::new::<ObjectCell<T>>()) };
}

/// How many payload drops may nest on one thread before further releases are deferred. Each
/// level costs a few frames (the deleter, the payload's drop glue, a reference's drop), so
/// this bounds the stack a release uses to some tens of kilobytes, whatever the graph's depth.
const MAX_NESTED_RELEASES: u32 = 64;

type ReleaseFn = unsafe fn(*mut c_void, c_int);

/// The low bits of `RELEASES`: the payload drops running on this thread.
const DEPTH_MASK: u32 = DEFERRED_PENDING - 1;
/// The high bit of `RELEASES`: `DEFERRED_RELEASES` may be non-empty.
const DEFERRED_PENDING: u32 = 1 << 31;

thread_local! {
    /// Release depth and the pending flag in one plain `Cell` (no destructor, cheap to reach).
    static RELEASES: Cell<u32> = const { Cell::new(0) };
    /// Releases waiting for the outermost one.
    static DEFERRED_RELEASES: RefCell<Vec<(*mut c_void, c_int, ReleaseFn)>> =
        const { RefCell::new(Vec::new()) };
}

/// Queues a release for the outermost one.
///
/// # Safety
/// As for `now`: the deleter protocol for `ptr` and `flags`.
#[cold]
unsafe fn defer(ptr: *mut c_void, flags: c_int, now: ReleaseFn) {
    let queued = DEFERRED_RELEASES.try_with(|queue| {
        let mut queue = queue.borrow_mut();
        // If even the queue cannot grow, release right away (deeper, but never aborting).
        queue.try_reserve(1).is_ok() && {
            queue.push((ptr, flags, now));
            true
        }
    });
    if queued == Ok(true) {
        RELEASES.with(|state| state.set(state.get() | DEFERRED_PENDING));
    } else {
        // The thread's storage is gone (thread exit) or the queue is full: release now.
        // SAFETY: the caller's contract.
        unsafe { now(ptr, flags) };
    }
}

/// Runs `f` with every payload drop of a Rust object released meanwhile (by Rust, C++ or the
/// runtime) queued instead of run: the caller holds a lock that user `Drop` code must not
/// run under. [`run_held_releases`] runs the queue once the lock is released (or the
/// thread's outermost release does, when this one is nested in a payload drop).
pub(crate) fn hold_releases<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            let depth = self.0;
            let _ = RELEASES.try_with(|state| state.set((state.get() & DEFERRED_PENDING) | depth));
        }
    }
    let Ok(saved) = RELEASES.try_with(|state| {
        let saved = state.get() & DEPTH_MASK;
        // At the nesting limit every release with drop glue is queued.
        state.set((state.get() & DEFERRED_PENDING) | MAX_NESTED_RELEASES);
        saved
    }) else {
        return f(); // thread exit: releases run in place, as everywhere then
    };
    let _restore = Restore(saved);
    f()
}

/// Runs the releases [`hold_releases`] queued, unless a payload drop of this thread is in
/// progress (its outermost release runs them when it returns).
#[inline]
pub(crate) fn run_held_releases() {
    let _ = RELEASES.try_with(|state| {
        if state.get() == DEFERRED_PENDING {
            run_deferred(state);
        }
    });
}

/// Runs the queued releases (and those they queue in turn), each from depth 1 again.
#[cold]
fn run_deferred(state: &Cell<u32>) {
    loop {
        let next = DEFERRED_RELEASES
            .try_with(|queue| queue.borrow_mut().pop())
            .ok()
            .flatten();
        let Some((ptr, flags, now)) = next else { break };
        state.set(1);
        // SAFETY: queued by `defer` with its own deleter-protocol arguments.
        unsafe { now(ptr, flags) };
    }
    state.set(0);
}

/// How the payload of an object allocated by Rust is dropped when its strong count reaches
/// zero.
pub trait DropPayload<P> {
    /// Drops `payload`, the payload of `object`.
    ///
    /// # Safety
    /// The object's strong count reached zero: no one can reach the payload any more.
    unsafe fn drop_payload(object: NonNull<TVMFFIObject>, payload: *mut P);
}

/// Drops the payload as a plain Rust value (closures, built-in cells).
pub struct DropInPlace;

impl<P> DropPayload<P> for DropInPlace {
    #[inline(always)]
    unsafe fn drop_payload(_object: NonNull<TVMFFIObject>, payload: *mut P) {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::drop_in_place(payload) }
    }
}

/// Allocates `[header][payload]` with strong and weak count 1, the Rust deleter, and
/// `padding` in the header's padding word (0 for every object but those of Rust-defined types,
/// which keep their construction state there).
///
/// # Safety
/// `type_index` must describe a type whose payload layout is `P` (every reader of an object of
/// that index trusts it), and `padding` must be a state its readers accept.
pub(crate) unsafe fn alloc_object<P>(
    payload: P,
    type_index: i32,
    padding: u32,
) -> NonNull<TVMFFIObject> {
    // SAFETY: the payload is written in full; the index is the caller's contract.
    unsafe { alloc_object_with::<P, DropInPlace>(type_index, padding, |slot| slot.write(payload)) }
}

/// [`alloc_object`] whose payload `init` writes in place, dropped by `D` when the strong count
/// reaches zero. If `init` panics, the memory is freed and the panic goes on.
///
/// # Safety
/// `init` must leave the payload in a state `D::drop_payload` accepts (for `DropInPlace`: a
/// valid `P`), and `type_index` must describe a type whose payload layout is `P`.
pub(crate) unsafe fn alloc_object_with<P, D: DropPayload<P>>(
    type_index: i32,
    padding: u32,
    init: impl FnOnce(*mut P),
) -> NonNull<TVMFFIObject> {
    // SAFETY: the caller's contract.
    match unsafe { try_alloc_object_with::<P, D>(type_index, padding, init) } {
        Ok(ptr) => ptr,
        // Not `handle_alloc_error`, which aborts the host: unwind to the FFI boundary, which
        // raises a `MemoryError`.
        Err(failure) => AllocFailure::raise(failure.bytes),
    }
}

/// [`alloc_object_with`], returning an [`AllocFailure`] instead of unwinding when the memory
/// cannot be allocated (`init` is then dropped without being called).
///
/// # Safety
/// As for [`alloc_object_with`].
pub(crate) unsafe fn try_alloc_object_with<P, D: DropPayload<P>>(
    type_index: i32,
    padding: u32,
    init: impl FnOnce(*mut P),
) -> Result<NonNull<TVMFFIObject>, AllocFailure> {
    // Every runtime and every `Deref` reads the payload right after the 24-byte header; a
    // payload aligned above 8 would start later (callers box such payloads; derived object
    // types are rejected at compile time). Constant-folded away for valid payloads.
    assert!(
        ObjectCell::<P>::PAYLOAD_OFFSET == std::mem::size_of::<TVMFFIObject>(),
        "object payload `{}` is aligned above 8 bytes",
        std::any::type_name::<P>()
    );
    let layout = std::alloc::Layout::new::<ObjectCell<P>>();
    // SAFETY: the layout has a non-zero size (the header alone is 24 bytes).
    let raw = unsafe { std::alloc::alloc(layout) } as *mut ObjectCell<P>;
    let Some(cell) = NonNull::new(raw) else {
        return Err(AllocFailure {
            bytes: layout.size(),
        });
    };
    struct FreeOnUnwind(*mut u8, std::alloc::Layout);
    impl Drop for FreeOnUnwind {
        fn drop(&mut self) {
            // SAFETY: allocated above with this layout; nothing else refers to it yet.
            unsafe { std::alloc::dealloc(self.0, self.1) }
        }
    }
    let guard = FreeOnUnwind(raw as *mut u8, layout);
    // SAFETY: freshly allocated, properly aligned memory for an ObjectCell<P>; the payload
    // field is written by `init` (the caller's contract).
    unsafe {
        std::ptr::addr_of_mut!((*raw).header).write(TVMFFIObject {
            combined_ref_count: BOTH_ONE,
            type_index,
            __padding: padding,
            deleter: Some(rust_object_deleter::<CellRelease<P, D>>),
        });
        init(std::ptr::addr_of_mut!((*raw).payload));
    }
    std::mem::forget(guard);
    Ok(cell.cast())
}

/// A payload followed, in the same allocation, by a variable number of elements (C++'s
/// `make_inplace_array_object`: a `Shape`'s dimensions, an `Array`'s values after its cell).
///
/// # Safety
/// `inplace_len` must return the element count the object was allocated with, for as long as
/// the memory lives (also after [`InplaceArray::release`]): the deleter frees the allocation
/// with the layout computed from it.
pub(crate) unsafe trait InplaceArray {
    /// The trailing element type.
    type Elem: Copy;
    /// The alignment the trailing elements start at (at least `Elem`'s): an `Array` asks 16
    /// so that each 16-byte value is written with one store that never spans two cache lines.
    const ELEM_START_ALIGN: usize = std::mem::align_of::<Self::Elem>();
    /// The number of trailing elements, read back from the payload.
    fn inplace_len(&self) -> usize;
    /// Releases what the object owns (an `Array`'s element references) when its strong count
    /// reaches zero; the payload itself is never dropped. Plain data owns nothing.
    ///
    /// # Safety
    /// `payload` is the payload of an object whose strong count reached zero: no one can reach
    /// it any more, and this runs once.
    #[inline]
    unsafe fn release(payload: *mut Self) {
        let _ = payload;
    }
}

/// Where an [`alloc_inplace_array`] object lies in its allocation
/// `[lead][header][P][Elem; len]`.
struct InplacePlacement {
    /// The allocation's layout.
    layout: std::alloc::Layout,
    /// Bytes before the header, so that the elements start at `P::ELEM_START_ALIGN`.
    lead: usize,
    /// The elements' offset from the header.
    elems: usize,
}

/// The placement of an object of `len` elements, or `None` when the size overflows.
fn inplace_placement<P: InplaceArray>(len: usize) -> Option<InplacePlacement> {
    let elems = std::alloc::Layout::array::<P::Elem>(len).ok()?;
    let (object, offset) = std::alloc::Layout::new::<ObjectCell<P>>()
        .extend(elems)
        .ok()?;
    let align = object.align().max(P::ELEM_START_ALIGN);
    // The header's offset in an allocation aligned to `align` that puts the elements there
    // (`offset` is a multiple of the object's alignment, and so is the lead).
    let lead = (align - offset % align) % align;
    let layout = std::alloc::Layout::from_size_align(lead.checked_add(object.size())?, align)
        .ok()?
        .pad_to_align();
    Some(InplacePlacement {
        layout,
        lead,
        elems: offset,
    })
}

/// Allocates `[header][payload][len elements]` in one block, with strong and weak count 1 and
/// a deleter that frees it; `init` receives the payload slot and the first element slot and
/// must write the payload and every element. An impossible size or a refused allocation
/// unwinds with [`AllocFailure`] (a `MemoryError` at the boundary).
///
/// # Safety
/// `type_index` must describe a type whose payload layout is `P`; `init` must write the
/// payload (whose `inplace_len` is then `len`) and the elements that the payload says are
/// there (all `len` of them, or for an `Array` the first `size`), and must not unwind.
pub(crate) unsafe fn alloc_inplace_array<P: InplaceArray>(
    type_index: i32,
    len: usize,
    init: impl FnOnce(*mut P, *mut P::Elem),
) -> NonNull<TVMFFIObject> {
    // SAFETY: the caller's contract.
    match unsafe { try_alloc_inplace_array(type_index, len, init) } {
        Ok(ptr) => ptr,
        Err(failure) => AllocFailure::raise(failure.bytes),
    }
}

/// [`alloc_inplace_array`], returning the [`AllocFailure`] instead of unwinding (`init` is not
/// called then).
///
/// # Safety
/// As for [`alloc_inplace_array`].
pub(crate) unsafe fn try_alloc_inplace_array<P: InplaceArray>(
    type_index: i32,
    len: usize,
    init: impl FnOnce(*mut P, *mut P::Elem),
) -> Result<NonNull<TVMFFIObject>, AllocFailure> {
    assert!(
        ObjectCell::<P>::PAYLOAD_OFFSET == std::mem::size_of::<TVMFFIObject>(),
        "object payload `{}` is aligned above 8 bytes",
        std::any::type_name::<P>()
    );
    let Some(placement) = inplace_placement::<P>(len) else {
        return Err(AllocFailure { bytes: usize::MAX });
    };
    // SAFETY: the layout has a non-zero size (the header alone is 24 bytes).
    let base = unsafe { std::alloc::alloc(placement.layout) };
    if base.is_null() {
        return Err(AllocFailure {
            bytes: placement.layout.size(),
        });
    }
    // SAFETY: `lead` bytes into the allocation, which holds the object after them.
    let raw = unsafe { base.add(placement.lead) };
    let offset = placement.elems;
    // SAFETY: not null (`base` is not, and `lead` stays inside its allocation).
    let cell = unsafe { NonNull::new_unchecked(raw as *mut ObjectCell<P>) };
    // SAFETY: fresh memory of the placement, which holds the header, the payload and, at
    // `offset` (inside the allocation by construction of the layout), `len` elements; `init`
    // writes the payload and the elements (the caller's contract).
    unsafe {
        std::ptr::addr_of_mut!((*cell.as_ptr()).header).write(TVMFFIObject {
            combined_ref_count: BOTH_ONE,
            type_index,
            __padding: 0,
            deleter: Some(inplace_array_deleter::<P>),
        });
        init(
            std::ptr::addr_of_mut!((*cell.as_ptr()).payload),
            raw.add(offset) as *mut P::Elem,
        );
    }
    Ok(cell.cast())
}

/// The deleter of [`alloc_inplace_array`] objects: what the payload owns is released with the
/// last strong reference ([`InplaceArray::release`]), the memory is freed with the last weak
/// one, with the layout its payload reports.
unsafe extern "C" fn inplace_array_deleter<P: InplaceArray>(ptr: *mut c_void, flags: c_int) {
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        let cell = ptr as *mut ObjectCell<P>;
        // SAFETY: the strong count reached zero (the runtime calls the strong phase once).
        unsafe { P::release(std::ptr::addr_of_mut!((*cell).payload)) };
    }
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        let cell = ptr as *const ObjectCell<P>;
        // SAFETY: the weak count reached zero; the payload (plain data, never dropped) still
        // holds the length the object was allocated with (InplaceArray contract).
        let len = unsafe { (*cell).payload.inplace_len() };
        if let Some(placement) = inplace_placement::<P>(len) {
            // SAFETY: allocated by `alloc_inplace_array` with exactly this placement: the
            // allocation starts `lead` bytes before the header.
            unsafe { std::alloc::dealloc((ptr as *mut u8).sub(placement.lead), placement.layout) };
        }
    }
}
