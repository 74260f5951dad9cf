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
//!
//! The state belongs to the whole object, so the check is that of the object's *dynamic* type,
//! not of the `T` it is dereferenced as: a `Child` dereferenced as its `Parent` is sealed only
//! once the child's own required fields are set too (otherwise the child's later dereference
//! would find it sealed and skip its check). Each Rust-defined type registers its check as the
//! type attribute [`SEAL_CHECK_ATTR`] (a C function, so that any copy of any Rust library
//! reaches it); an object of a type without one (a Python subclass) is checked as its nearest
//! ancestor that has one. A Python subclass whose own fields lie inside the Rust type's layout
//! (Python places them right after the parent's last field, possibly in the Rust payload's tail
//! padding, which a `&T` covers) is refused likewise.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::reflected::Reflected;
use crate::abi::sys::{TVMFFIByteArray, TVMFFIObject};
use crate::base::error::Error;
use crate::base::object::{padding_word, type_info};

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

/// # Safety
/// `ptr` is a live object (the caller holds a reference) for `'a`.
#[inline(always)]
unsafe fn state_word<'a>(ptr: NonNull<TVMFFIObject>) -> &'a AtomicU32 {
    // SAFETY: the caller's contract.
    unsafe { padding_word(ptr) }
}

/// Stores `phase`, keeping the other bits (the key hash may be cached in the word meanwhile,
/// see `base::object::cached_key_hash`).
#[inline]
fn set_phase(word: &AtomicU32, phase: u32) {
    let _ = word.fetch_update(Ordering::Release, Ordering::Relaxed, |state| {
        Some((state & !PHASE_MASK) | phase)
    });
}

/// Seals the object before Rust makes an `ObjectRef<T>` of it (see the module docs); a no-op
/// when sealed. `Err` with the reason when the object cannot be used yet: a required field is
/// unset, or the object is a foreign (Python subclass) instance of a type with Rust-only
/// fields.
///
/// # Safety
/// `ptr` is a live instance of `T` (the caller holds a reference).
#[inline(always)]
pub unsafe fn seal<T: Reflected>(ptr: NonNull<TVMFFIObject>) -> Result<(), std::string::String> {
    // SAFETY: the caller's contract.
    if unsafe { state_word(ptr) }.load(Ordering::Acquire) & PHASE_MASK != SEALED_PHASE {
        // SAFETY: the caller's contract.
        return unsafe { seal_slow::<T>(ptr) };
    }
    Ok(())
}

/// # Safety
/// As for [`seal`].
#[cold]
unsafe fn seal_slow<T: Reflected>(ptr: NonNull<TVMFFIObject>) -> Result<(), std::string::String> {
    // SAFETY: the caller's contract.
    let word = unsafe { state_word(ptr) };
    loop {
        let state = word.load(Ordering::Acquire);
        match state & PHASE_MASK {
            SEALED_PHASE => return Ok(()),
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
                let phase = if problem.is_none() {
                    SEALED_PHASE
                } else {
                    OPEN_PHASE
                };
                set_phase(word, phase);
                return problem.map_or(Ok(()), Err);
            }
            _ => std::hint::spin_loop(),
        }
    }
}

/// The type attribute under which each Rust-defined type registers its [`SealCheck`] (an
/// opaque pointer to the function).
pub(crate) const SEAL_CHECK_ATTR: &str = "__tvm_ffi_rs_seal_check__";

/// The check of a Rust-defined type's payload before sealing, as registered per type index:
/// `check(object, rust_made, out)` returns 0 (usable), 1 (a foreign object of a type with
/// Rust-only fields; the type's key is written to `out`), 2 (a required field is unset; its
/// name is written to `out`) or 3 (a foreign object of a type with an `Rw` field holding a
/// reference, which the runtime's copy of the object reads without Rust's lock; its name is
/// written to `out`).
/// A C function: a copy of another Rust library (another build) may call it.
pub type SealCheck = unsafe extern "C" fn(
    object: *mut TVMFFIObject,
    rust_made: i32,
    out: *mut TVMFFIByteArray,
) -> i32;

const SEAL_OK: i32 = 0;
const SEAL_FOREIGN: i32 = 1;
const SEAL_UNSET: i32 = 2;
const SEAL_COPY_RACY: i32 = 3;

/// The seal check of type `T` (registered for `T`'s index by `#[derive(Object)]`).
///
/// # Safety
/// `object` is a live object of (a subtype of) `T` whose construction lock the caller holds;
/// `out` is valid for a write.
pub unsafe extern "C" fn seal_check<T: Reflected>(
    object: *mut TVMFFIObject,
    rust_made: i32,
    out: *mut TVMFFIByteArray,
) -> i32 {
    if rust_made == 0 && !T::FOREIGN_COMPATIBLE {
        // SAFETY: the caller's contract; the key is `'static`.
        unsafe { out.write(TVMFFIByteArray::from_bytes(T::TYPE_KEY.as_bytes())) };
        return SEAL_FOREIGN;
    }
    if let (0, Some(field)) = (rust_made, T::COPY_RACY_FIELD) {
        // SAFETY: the caller's contract; the name is `'static`.
        unsafe { out.write(TVMFFIByteArray::from_bytes(field.as_bytes())) };
        return SEAL_COPY_RACY;
    }
    let Some(ptr) = NonNull::new(object) else {
        return SEAL_OK;
    };
    // SAFETY: the payload sits at offset 24 of a live object of (a subtype of) `T`, and the
    // caller holds the construction lock, so no setter writes it meanwhile.
    match unsafe { T::unset_required_field(payload_of::<T>(ptr)) } {
        None => SEAL_OK,
        Some(field) => {
            // SAFETY: the caller's contract; the name is `'static`.
            unsafe { out.write(TVMFFIByteArray::from_bytes(field.as_bytes())) };
            SEAL_UNSET
        }
    }
}

/// The seal check of the object's dynamic type: its own, or its nearest ancestor's (a Python
/// subclass registers none). `None` when no type in the chain registered one.
fn dynamic_seal_check(ptr: NonNull<TVMFFIObject>) -> Option<(i32, SealCheck)> {
    // SAFETY: the object is alive (the caller holds a reference); the type index never changes.
    let index = unsafe { std::ptr::addr_of!((*ptr.as_ptr()).type_index).read() };
    let info = type_info::type_info(index)?;
    let ancestors = (0..info.type_depth.max(0)).rev().map(|depth| {
        // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
        unsafe { (**info.type_ancestors.add(depth as usize)).type_index }
    });
    std::iter::once(index).chain(ancestors).find_map(|index| {
        let pointer = super::type_attr::type_attr(index, SEAL_CHECK_ATTR)?
            .checked_cast::<*mut std::ffi::c_void>()?;
        if pointer.is_null() {
            return None;
        }
        // SAFETY: only `seal_check::<T>` pointers are registered under this attribute (the name
        // is reserved to this crate, and to the SDK's macros), as `SealCheck`s.
        let check = unsafe { std::mem::transmute::<*mut std::ffi::c_void, SealCheck>(pointer) };
        Some((index, check))
    })
}

/// For an object of a foreign subclass (a Python `@py_class`) of the Rust-defined type
/// `rust_index`: the subclass field that lies inside the Rust type's layout, if any. Python
/// places a subclass's fields at the end of the parent's last field, so a field of one byte may
/// land in the tail padding of the Rust payload (`{ x: i64, flag: bool }` ends at 9 bytes but
/// spans 16), which a Rust `&T` covers: Rust may not use such an object.
fn field_in_rust_layout(ptr: NonNull<TVMFFIObject>, rust_index: i32) -> Option<String> {
    // SAFETY: the object is alive (the caller holds a reference); the type index never changes.
    let index = unsafe { std::ptr::addr_of!((*ptr.as_ptr()).type_index).read() };
    if index == rust_index {
        return None;
    }
    let rust_info = type_info::type_info(rust_index)?;
    // SAFETY: metadata is null or points into the registry.
    let total_size = i64::from(unsafe { rust_info.metadata.as_ref() }?.total_size);
    let info = type_info::type_info(index)?;
    let below = (rust_info.type_depth + 1..info.type_depth).map(|depth| {
        // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
        unsafe { (**info.type_ancestors.add(depth as usize)).type_index }
    });
    below.chain(std::iter::once(index)).find_map(|subclass| {
        let field = type_info::fields(subclass)
            .into_iter()
            .find(|f| f.offset < total_size)?;
        // SAFETY: registry strings live for the process.
        let name = String::from_utf8_lossy(unsafe { field.name.as_bytes() }).into_owned();
        Some(format!(
            "the object of type `{}` has the field `{name}` at offset {}, inside the {total_size} \
             bytes of its Rust-defined parent `{}` (in its tail padding), so Rust cannot use its \
             payload; give the subclass's first field an 8-byte type, or pad the Rust type",
            key_of(ptr),
            field.offset,
            type_info::type_key_of_index(rust_index),
        ))
    })
}

/// Why Rust may not use the payload of an object that is being sealed, if anything: the check
/// of the object's dynamic type (`T`'s when no type in its chain registered one).
fn unusable_reason<T: Reflected>(ptr: NonNull<TVMFFIObject>, rust_made: bool) -> Option<String> {
    let registered = dynamic_seal_check(ptr);
    // No type in the chain registered a check: `T` is a declaration of a type defined
    // elsewhere (C++), whose objects C++ allocates and copies.
    let declared_elsewhere = registered.is_none();
    let (rust_index, check) =
        registered.unwrap_or_else(|| (T::runtime_type().index, seal_check::<T>));
    let mut out = TVMFFIByteArray::from_bytes(&[]);
    // SAFETY: a live object of (a subtype of) the checked type, whose construction lock the
    // caller holds; `out` is a valid output.
    let outcome = match unsafe { check(ptr.as_ptr(), rust_made as i32, &mut out) } {
        SEAL_COPY_RACY if declared_elsewhere => SEAL_OK,
        outcome => outcome,
    };
    // SAFETY: the check wrote a `'static` name, or left the empty array.
    let name = String::from_utf8_lossy(unsafe { out.as_bytes() });
    match outcome {
        SEAL_OK if rust_made => None,
        SEAL_OK => field_in_rust_layout(ptr, rust_index),
        SEAL_FOREIGN => Some(format!(
            "the object of type `{}` was allocated outside Rust (for example, a Python subclass \
             instance) and `{name}` keeps Rust-only fields (`#[ffi(skip)]`) it never \
             initialised, so Rust cannot use its payload",
            key_of(ptr),
        )),
        SEAL_COPY_RACY => Some(format!(
            "the object of type `{}` was allocated outside Rust (a Python subclass instance), \
             and its `Rw` field `{name}` holds a reference: the runtime's shallow copy of such \
             an instance (`copy.copy`) reads the field without Rust's lock, so a Rust write \
             could free the value a copy is taking; Rust does not use such an instance (use \
             an instance of the Rust type itself, or declare the field without `Rw`)",
            key_of(ptr),
        )),
        _ => Some(format!(
            "the object of type `{}` is not fully constructed: its required field `{name}` is \
             not set",
            key_of(ptr),
        )),
    }
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
    struct Reopen<'a>(&'a AtomicU32, u32);
    impl Drop for Reopen<'_> {
        fn drop(&mut self) {
            set_phase(self.0, self.1 & PHASE_MASK);
        }
    }
    // SAFETY: the caller's contract.
    let word = unsafe { state_word(ptr) };
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
    // SAFETY: the caller's contract.
    unsafe { state_word(ptr) }.load(Ordering::Acquire) & PHASE_MASK == SEALED_PHASE
}

/// Whether Rust allocated the object (else it is, for example, a Python subclass instance).
///
/// # Safety
/// `ptr` must point to a live object of a Rust-defined type or of a Python subclass of one.
#[inline]
pub(crate) unsafe fn is_rust_made(ptr: NonNull<TVMFFIObject>) -> bool {
    // SAFETY: the caller's contract.
    unsafe { state_word(ptr) }.load(Ordering::Acquire) & RUST_MADE != 0
}

/// The error a setter raises when asked to replace a reference held by a field of an object
/// allocated outside Rust.
#[cold]
pub(crate) fn set_once_error(key: &str, offset: usize) -> Error {
    Error::new(
        "AttributeError",
        format!(
            "Cannot replace the value of the field of `{key}` at offset {offset} in a Python \
             subclass instance: the runtime's shallow copy of such an instance (`copy.copy`) \
             reads its fields without Rust's lock, so a replaced value could be freed while a \
             copy takes it; such a field is set once, when the instance is constructed"
        ),
    )
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
