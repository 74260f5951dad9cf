//! The construction state of objects of Rust-defined types.
//!
//! The runtime writes the fields of an object it is constructing (auto-init, JSON and pickle
//! loading, deep-copy fix-ups) through the reflected setters, including the setters of fields
//! that are read-only once the object is built. For objects of Rust-defined types this must
//! never happen under a live Rust `&T`, so such objects carry a state in the header's padding
//! word (which other runtimes zero and never read):
//!
//! - FOREIGN (0): not built by Rust at all, e.g. an instance of a Python `@py_class` subclass
//!   that Python allocated (zero-filled, its own fields placed where Rust may keep `skip`
//!   fields). Rust refuses to use its payload: `Deref` panics, accessors raise `TypeError`.
//! - SEALED (1): immutable except for `Rw` fields. Every object Rust allocates with
//!   `ObjectRef::new`, and every object Rust has ever dereferenced, is sealed.
//! - OPEN (2): made by the runtime through the type's creator or shallow copy and not yet seen
//!   by Rust; reflected getters and setters may touch its fields, one at a time.
//! - BUSY (3): a reflected getter or setter is inside an OPEN object right now.
//!
//! `Deref` seals (waiting out a BUSY accessor), so no `&T` ever coexists with a setter.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::Error;
use crate::object::{padding_word, type_info};
use crate::sys::TVMFFIObject;

/// State value: not built by Rust (see the module docs).
pub(crate) const FOREIGN: u32 = 0;
/// State value: immutable. The state of every object `ObjectRef::new` allocates.
pub const SEALED: u32 = 1;
/// State value: still being constructed by the runtime.
pub(crate) const OPEN: u32 = 2;
const BUSY: u32 = 3;

#[inline(always)]
fn state_word(ptr: NonNull<TVMFFIObject>) -> &'static AtomicU32 {
    padding_word(ptr)
}

/// Marks the object immutable (waits while a reflected accessor is inside it).
///
/// # Panics
/// If the object was not built by Rust (FOREIGN): its payload cannot be trusted.
#[inline(always)]
pub fn seal(ptr: NonNull<TVMFFIObject>) {
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
        type_info::type_key_of_index(index)
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
    pub(crate) fn foreign_error(ptr: NonNull<TVMFFIObject>) -> Error {
        Error::type_error(foreign_message(ptr))
    }
}

/// Runs `access` with exclusive access to the fields of an OPEN object.
///
/// # Safety
/// `ptr` must point to a live object of a Rust-defined type (one that keeps a construction
/// state).
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
