//! The 24-byte object header: reference counts, allocation of Rust objects and their deleter.
//!
//! Reference counting follows the C++ runtime (`tvm/ffi/object.h`) bit for bit: the strong count
//! lives in the low 32 bits of `combined_ref_count`, the weak count in the high 32 bits, and the
//! weak count carries one extra reference on behalf of all strong references. Clone and drop are
//! inline atomic operations; libtvm_ffi is never called on those paths.
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

use crate::sys::{self, TVMFFIObject};

const STRONG_ONE: u64 = 1;
const WEAK_ONE: u64 = 1 << 32;
const BOTH_ONE: u64 = STRONG_ONE | WEAK_ONE;
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

#[inline(always)]
pub(crate) fn ref_count(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU64 {
    // SAFETY: `combined_ref_count` is the first field, 8-byte aligned, and only ever accessed
    // atomically by every runtime (C++ uses __atomic builtins on it). The reference never
    // outlives the object in practice: callers hold a strong or weak reference.
    unsafe { &*(ptr.as_ptr() as *const AtomicU64) }
}

/// The header's padding word, which Rust-defined types use for their construction state (see
/// `reflection::construction`); other runtimes zero it and never read it.
#[inline(always)]
pub(crate) fn padding_word(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU32 {
    // SAFETY: `__padding` is a 4-byte aligned u32 at offset 12 of the header; for objects of
    // Rust-defined types only the construction state touches it, and only atomically.
    unsafe { &*(std::ptr::addr_of!((*ptr.as_ptr()).__padding) as *const AtomicU32) }
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

/// Takes a strong reference through a weak one, unless the strong count already reached zero.
#[inline]
pub(crate) fn try_inc_strong(ptr: NonNull<TVMFFIObject>) -> bool {
    let counter = ref_count(ptr);
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
#[inline]
pub(crate) fn inc_weak(ptr: NonNull<TVMFFIObject>) {
    ref_count(ptr).fetch_add(WEAK_ONE, Ordering::Relaxed);
}

/// # Safety
/// The caller owns one weak reference to `ptr`, which it gives up.
#[inline]
pub(crate) unsafe fn dec_weak(ptr: NonNull<TVMFFIObject>) {
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

/// The deleter of objects allocated by Rust.
unsafe extern "C" fn rust_object_deleter<T>(ptr: *mut c_void, flags: c_int) {
    let cell = ptr as *mut ObjectCell<T>;
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // A panic in Drop must not unwind into C; the payload is then leaked, not freed twice.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: strong count reached zero: no one can reach the payload any more.
            unsafe { std::ptr::drop_in_place(std::ptr::addr_of_mut!((*cell).payload)) }
        }));
        if result.is_err() {
            crate::diagnostic::warn(format_args!(
                "a panic in Drop of `{}` was caught in the object deleter",
                std::any::type_name::<T>()
            ));
        }
    }
    if flags & sys::kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: allocated by `alloc_object` with this exact layout; last reference gone.
        unsafe { std::alloc::dealloc(cell as *mut u8, std::alloc::Layout::new::<ObjectCell<T>>()) };
    }
}

/// Allocates `[header][payload]` with strong and weak count 1, the Rust deleter, and
/// `padding` in the header's padding word (0 for every object but those of Rust-defined types,
/// which keep their construction state there).
///
/// The caller is responsible for `type_index` describing a type whose payload layout is `P`.
pub fn alloc_object<P>(payload: P, type_index: i32, padding: u32) -> NonNull<TVMFFIObject> {
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
        std::alloc::handle_alloc_error(layout)
    };
    // SAFETY: freshly allocated, properly aligned memory for an ObjectCell<P>.
    unsafe {
        cell.as_ptr().write(ObjectCell {
            header: TVMFFIObject {
                combined_ref_count: BOTH_ONE,
                type_index,
                __padding: padding,
                deleter: Some(rust_object_deleter::<P>),
            },
            payload,
        });
    }
    cell.cast()
}
