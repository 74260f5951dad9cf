//! The construction state of objects of Rust-defined types.
//!
//! The runtime writes the fields of an object it is constructing (auto-init, JSON and pickle
//! loading, deep-copy fix-ups, a Python subclass's `__init__`) through the reflected setters,
//! including the setters of fields that are read-only once the object is built, and an object
//! it made through the type's creator may lack its required object fields until then. For
//! objects of Rust-defined types neither may ever be seen through a Rust `&T`, so such objects
//! carry a state in the header's padding word (which other runtimes zero and never read):
//!
//! - the *phase*: OPEN (the runtime may still write any field, one accessor at a time; a
//!   required object field may still be unset, its storage null), BUSY (an accessor is inside
//!   an OPEN object right now) or SEALED (immutable except for `Rw` fields, every field set);
//! - whether Rust built the object: objects made by `ObjectRef::new`, the creator or a shallow
//!   copy are Rust-made; an instance of a Python `@py_class` subclass, which Python allocates
//!   zero-filled (state 0: foreign and OPEN), is not: its memory beyond the reflected fields
//!   (where a Rust type keeps its `#[ffi(skip)]` fields) belongs to the Python subclass.
//!
//! `Deref` seals (waiting out a BUSY accessor), after checking that every required field is set
//! and, for a foreign object, that the type has no Rust-only fields: so no `&T` ever coexists
//! with a setter or points at an unset field. Whatever fails that check is a panic, which the
//! FFI boundary raises as an error.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::create::Reflected;
use crate::error::Error;
use crate::object::{padding_word, type_info};
use crate::sys::TVMFFIObject;

const PHASE_MASK: u32 = 0b11;
const OPEN_PHASE: u32 = 0;
const SEALED_PHASE: u32 = 1;
const BUSY_PHASE: u32 = 2;
/// Set in objects Rust allocated.
const RUST_MADE: u32 = 0b100;

/// State value: made by Rust, still being constructed by the runtime.
pub(crate) const OPEN: u32 = RUST_MADE | OPEN_PHASE;
/// State value: made by Rust, immutable. The state of every object `ObjectRef::new` allocates.
pub const SEALED: u32 = RUST_MADE | SEALED_PHASE;

#[inline(always)]
fn state_word(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU32 {
    padding_word(ptr)
}

/// Seals the object before Rust dereferences it (see the module docs); a no-op when sealed.
///
/// # Panics
/// If a required field of the object is unset, or the object is a foreign (Python subclass)
/// instance of a type with Rust-only fields.
#[inline(always)]
pub fn seal<T: Reflected>(ptr: NonNull<TVMFFIObject>) {
    if state_word(ptr).load(Ordering::Acquire) & PHASE_MASK != SEALED_PHASE {
        seal_slow::<T>(ptr);
    }
}

#[cold]
fn seal_slow<T: Reflected>(ptr: NonNull<TVMFFIObject>) {
    let word = state_word(ptr);
    loop {
        let state = word.load(Ordering::Acquire);
        match state & PHASE_MASK {
            SEALED_PHASE => return,
            OPEN_PHASE => {
                let busy = (state & !PHASE_MASK) | BUSY_PHASE;
                if word
                    .compare_exchange_weak(state, busy, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                // Exclusive: no accessor is inside the object until the state is stored back.
                let problem = unusable_reason::<T>(ptr, state & RUST_MADE != 0);
                let next = (state & !PHASE_MASK)
                    | if problem.is_none() {
                        SEALED_PHASE
                    } else {
                        OPEN_PHASE
                    };
                word.store(next, Ordering::Release);
                if let Some(problem) = problem {
                    crate::error::panic::panic_with("RuntimeError", problem);
                }
                return;
            }
            _ => std::hint::spin_loop(),
        }
    }
}

/// Why Rust may not use the payload of an object that is being sealed, if anything.
fn unusable_reason<T: Reflected>(ptr: NonNull<TVMFFIObject>, rust_made: bool) -> Option<String> {
    if !rust_made && !T::FOREIGN_COMPATIBLE {
        return Some(format!(
            "the object of type `{}` was allocated outside Rust (for example, a Python subclass \
             instance) and `{}` keeps Rust-only fields (`#[ffi(skip)]`) it never initialised, \
             so Rust cannot use its payload",
            key_of(ptr),
            T::TYPE_KEY
        ));
    }
    // SAFETY: the payload sits at offset 24 of a live object of (a subtype of) `T`, and the
    // caller holds the construction lock, so no setter writes it meanwhile.
    let unset = unsafe { T::unset_required_field(payload_of::<T>(ptr)) };
    unset.map(|field| {
        format!(
            "the object of type `{}` is not fully constructed: its required field `{field}` is \
             not set",
            key_of(ptr)
        )
    })
}

/// The payload of an object of (a subtype of) `T`.
fn payload_of<T>(ptr: NonNull<TVMFFIObject>) -> *const T {
    (ptr.as_ptr() as *const u8).wrapping_add(std::mem::size_of::<TVMFFIObject>()) as *const T
}

fn key_of(ptr: NonNull<TVMFFIObject>) -> &'static str {
    // SAFETY: the object is alive (the caller holds a reference); the type index never changes.
    let index = unsafe { std::ptr::addr_of!((*ptr.as_ptr()).type_index).read() };
    type_info::type_key_of_index(index)
}

/// Runs `access` with exclusive access to the fields of an OPEN object; `Err(())` when the
/// object is sealed.
///
/// # Safety
/// `ptr` must point to a live object of a Rust-defined type or of a Python subclass of one.
pub(crate) unsafe fn with_construction_access<R>(
    ptr: NonNull<TVMFFIObject>,
    access: impl FnOnce() -> R,
) -> Result<R, ()> {
    struct Reopen(&'static AtomicU32, u32);
    impl Drop for Reopen {
        fn drop(&mut self) {
            self.0.store(self.1, Ordering::Release);
        }
    }
    let word = state_word(ptr);
    loop {
        let state = word.load(Ordering::Acquire);
        match state & PHASE_MASK {
            SEALED_PHASE => return Err(()),
            OPEN_PHASE => {
                let busy = (state & !PHASE_MASK) | BUSY_PHASE;
                if word
                    .compare_exchange_weak(state, busy, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    let _reopen = Reopen(word, state);
                    return Ok(access());
                }
            }
            _ => std::hint::spin_loop(),
        }
    }
}

/// Whether the object is sealed (immutable but for `Rw` fields, every field set), without
/// waiting.
///
/// # Safety
/// `ptr` must point to a live object.
#[inline]
pub(crate) unsafe fn is_sealed(ptr: NonNull<TVMFFIObject>) -> bool {
    state_word(ptr).load(Ordering::Acquire) & PHASE_MASK == SEALED_PHASE
}

/// The error a setter raises for a sealed object's read-only field.
#[cold]
pub(crate) fn read_only_error(key: &str, offset: usize) -> Error {
    Error::new(
        "AttributeError",
        format!(
            "Cannot set read-only field of `{key}` at offset {offset}: it can only be written \
             while the object is being constructed; declare it `#[ffi(rw)] field: \
             tvm_ffi::Rw<T>` to make it writable"
        ),
    )
}

/// Drops the payload of a Rust-made object whose strong count reached zero: a sealed payload is
/// a valid `T`; an open one (abandoned by a failed constructor) may still have unset required
/// fields, which are skipped (and `T`'s own `Drop`, if any, with them: it was never a `T`).
///
/// # Safety
/// `payload` is the payload of the Rust-made object `ptr` of type `T`, which no one can reach
/// any more.
pub unsafe fn drop_payload<T: Reflected>(ptr: NonNull<TVMFFIObject>, payload: *mut T) {
    // SAFETY: the caller's contract; unreachable, so the state no longer changes. A payload
    // with every field set is a valid `T` (its own `Drop` runs); one with an unset field never
    // was, and only its set fields are dropped.
    let complete = unsafe { is_sealed(ptr) || T::unset_required_field(payload).is_none() };
    if complete {
        // SAFETY: a valid `T`.
        unsafe { std::ptr::drop_in_place(payload) }
    } else {
        // SAFETY: an open Rust-made payload: every field valid or unset.
        unsafe { T::drop_open(payload) }
    }
}
