//! The striped locks of Rust's shared mutable storage: container stripes (reentrant) serialise
//! Rust's operations on a `List` or `Dict` and on the runtime's global function table; field
//! stripes serialise non-scalar `Rw<T>` fields. The runtime synchronises neither (nor does C++).
//!
//! One table serves every Rust library of the process: the first publishes it while it loads,
//! as an object of a type only this SDK creates, in a type attribute of that type; the others
//! validate what they find. A library finding the key taken or a forgery fails closed: its
//! container, `Rw` and global-function operations raise a `RuntimeError`.
//!
//! **No user code runs while a stripe is held**: releases a runtime write causes are queued
//! until the lock is released, and `Rw<T>` holds only field types whose copies run none. What
//! the runtime runs inside its own write of a dict (a key's hooks, a Python `__del__`) may read
//! any container (the lock re-enters) but not write one being written, and a wait in a cycle
//! of waits between threads is refused (`stripe`).
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::abi::sys::{self, TVMFFIObject};
use crate::base::error::panic::panic_with;
use crate::base::error::{Error, Result};
use crate::base::object::builtin::AnyObject;
use crate::base::object::{
    alloc_object, hold_releases, run_held_releases, type_index_of, ObjectRef, ObjectType,
};
use crate::base::value::Any;

mod stripe;
mod sync;
use stripe::Stripe;

const STRIPES: usize = 64;

/// The table every Rust library of the process uses: the payload of the published object.
#[repr(C)]
pub(crate) struct SharedLocks {
    magic: u64,
    layout: u64,
    containers: [Stripe; STRIPES],
    fields: [Stripe; STRIPES],
}

const MAGIC: u64 = 0x7476_6d5f_6c6f_636b; // "tvm_lock"
/// The layout version (high half) and size (low half) of [`SharedLocks`].
const LAYOUT: u64 = (4 << 32) | std::mem::size_of::<SharedLocks>() as u64;
/// The key of the published object's type: only this SDK creates objects of it.
const TYPE_KEY: &str = "tvm_ffi_rs.StripedLocks.v4";
/// The type attribute (of that type) holding the published object.
const ATTR_NAME: &str = "__tvm_ffi_rs_striped_locks__";

const _: () = assert!(std::mem::size_of::<Stripe>() == 64);

static LOCKS: OnceLock<std::result::Result<&'static SharedLocks, String>> = OnceLock::new();

/// The process-wide table; panics (a `RuntimeError` at the FFI boundary) when there is none.
#[inline]
fn shared_locks() -> &'static SharedLocks {
    match LOCKS.get_or_init(find_or_publish) {
        Ok(locks) => locks,
        Err(why) => panic_with(Error::runtime_error(why)),
    }
}

/// Finds or publishes the table while the library loads, when nothing else runs (registering a
/// type attribute is not thread-safe in the runtime). `Err` says why there is none.
pub(crate) fn publish_at_load() -> std::result::Result<(), String> {
    LOCKS
        .get_or_init(find_or_publish)
        .as_ref()
        .map(drop)
        .map_err(Clone::clone)
}

/// The table published under [`TYPE_KEY`], or this library's, published there now.
fn find_or_publish() -> std::result::Result<&'static SharedLocks, String> {
    let refused = |why: &str| {
        format!(
            "no lock table shared with this process's other Rust libraries ({why}): this \
             library refuses container, `Rw` and global-function operations"
        )
    };
    let index = lock_type_index().map_err(|why| refused(&why))?;
    if let Some(found) = read_published(index).map_err(|why| refused(&why))? {
        return Ok(found);
    }
    // SAFETY: `index` is the SDK's lock-table type, whose objects are `SharedLocks` payloads.
    let obj = unsafe { alloc_object(SharedLocks::new(), index, 0) };
    // SAFETY: a new object of which we own the one reference.
    let ours = Any::new(unsafe { ObjectRef::<AnyObject>::from_raw(obj) });
    let name = sys::TVMFFIByteArray::from_bytes(ATTR_NAME.as_bytes());
    // SAFETY: valid name and value; the runtime takes its own reference on success.
    if unsafe { sys::TVMFFITypeRegisterAttr(index, &name, ours.as_raw()) } != 0 {
        crate::base::object::type_info::discard_raised_error();
        return Err(refused(&format!("cannot publish it under `{TYPE_KEY}`")));
    }
    std::mem::forget(ours); // kept for the process, as the registry's
                            // SAFETY: the payload of our object, alive for the rest of the process.
    Ok(unsafe { payload_of(obj) })
}

/// The index of [`TYPE_KEY`] if the key is this SDK's: a root type without metadata, fields or
/// methods (one defined anywhere else has metadata).
fn lock_type_index() -> std::result::Result<i32, String> {
    let key = sys::TVMFFIByteArray::from_bytes(TYPE_KEY.as_bytes());
    // SAFETY: a valid key (copied by the runtime); a final root type.
    let index = unsafe {
        sys::TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, sys::type_index::kTVMFFIObject)
    };
    let taken = || format!("the type key `{TYPE_KEY}` is taken by another definition");
    if index < 0 {
        crate::base::object::type_info::discard_raised_error();
        return Err(taken());
    }
    let info = crate::base::object::type_info::type_info(index).ok_or_else(taken)?;
    // SAFETY: `type_ancestors` has `type_depth` entries.
    let parent = (info.type_depth == 1).then(|| unsafe { (**info.type_ancestors).type_index });
    if parent != Some(sys::type_index::kTVMFFIObject)
        || !info.metadata.is_null()
        || info.num_fields != 0
        || info.num_methods != 0
    {
        return Err(taken());
    }
    Ok(index)
}

/// The table published in the type attribute, validated; `Ok(None)` when none is.
fn read_published(index: i32) -> std::result::Result<Option<&'static SharedLocks>, String> {
    let Some(raw) = crate::base::object::type_info::type_attr_raw(index, ATTR_NAME) else {
        return Ok(None);
    };
    let forged = || format!("`{ATTR_NAME}` of `{TYPE_KEY}` holds a value this SDK did not publish");
    // SAFETY: a value of an object type index holds an object pointer.
    let obj = NonNull::new(unsafe { raw.value.v_obj }).filter(|_| raw.type_index == index);
    let obj = obj.ok_or_else(forged)?;
    // SAFETY: the registry keeps the object alive; only this SDK makes objects of this type
    // (`lock_type_index`), all `ObjectCell<SharedLocks>`; the checks below guard anyway.
    unsafe {
        let table = payload_of(obj);
        if type_index_of(obj) != index || table.magic != MAGIC || table.layout != LAYOUT {
            return Err(forged());
        }
        crate::base::object::inc_ref(obj); // never released
        Ok(Some(table))
    }
}

/// # Safety
/// `obj` is an `ObjectCell<SharedLocks>` that stays alive for the rest of the process.
unsafe fn payload_of(obj: NonNull<TVMFFIObject>) -> &'static SharedLocks {
    // SAFETY: the caller's contract; the payload follows the 24-byte header.
    unsafe {
        &*((obj.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>())
            as *const SharedLocks)
    }
}

impl SharedLocks {
    fn new() -> SharedLocks {
        SharedLocks {
            magic: MAGIC,
            layout: LAYOUT,
            containers: std::array::from_fn(|_| Stripe::default()),
            fields: std::array::from_fn(|_| Stripe::default()),
        }
    }
}

thread_local! {
    /// Container stripes this thread holds (re-entries not counted).
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Holds a container stripe, or re-enters one this thread holds; the object releases queued
/// meanwhile run when the thread's last stripe is released.
pub(crate) struct ReentrantGuard {
    stripe: &'static Stripe,
    reentered: bool,
}

impl ReentrantGuard {
    #[inline]
    fn lock(table: &'static [Stripe; STRIPES], index: usize) -> ReentrantGuard {
        let stripe = &table[index];
        match stripe.lock_reentrant(table) {
            Ok(reentered) => {
                if !reentered {
                    let _ = HELD.try_with(|held| held.set(held.get() + 1));
                }
                ReentrantGuard { stripe, reentered }
            }
            Err(stripe::Cycle) => panic_with(Error::runtime_error(
                "a hook or destructor run by a container write waits for a container whose \
                 holder waits for this thread: refused instead of deadlocking",
            )),
        }
    }
}

impl Drop for ReentrantGuard {
    #[inline]
    fn drop(&mut self) {
        if self.reentered {
            return;
        }
        self.stripe.unlock_reentrant();
        let last = HELD
            .try_with(|held| {
                held.set(held.get() - 1);
                held.get() == 0
            })
            .unwrap_or(true);
        if last {
            run_held_releases();
        }
    }
}

/// An object whose stripe this thread holds: the only way to a container's storage.
pub(crate) struct Locked<'a, O: ObjectType> {
    obj: &'a ObjectRef<O>,
    stripe: &'static Stripe,
}

/// Runs `f` with the lock of `obj` held (re-entered if this thread holds it).
#[inline]
pub(crate) fn with_locked<O: ObjectType, R>(
    obj: &ObjectRef<O>,
    f: impl FnOnce(&Locked<'_, O>) -> R,
) -> R {
    let table = &shared_locks().containers;
    let index = (obj.as_raw().as_ptr() as usize >> 4) % STRIPES;
    let guard = ReentrantGuard::lock(table, index);
    let out = f(&Locked {
        obj,
        stripe: guard.stripe,
    });
    drop(guard);
    out
}

/// Locks the runtime's global function table against every Rust library's other accesses (a
/// registration may rehash it under a lookup): the last container stripe, no user code under it.
pub(crate) fn lock_global_functions() -> ReentrantGuard {
    // The thread's record of held stripes exists before a stripe is held: creating a thread
    // local of a loaded library may wait for the dynamic loader's lock, which a thread running
    // a library's initialisers (registering its functions under this stripe) holds.
    let _ = HELD.try_with(|_| ());
    ReentrantGuard::lock(&shared_locks().containers, STRIPES - 1)
}

/// A runtime write in progress: a node on the writer's stack, linked to the writes it runs in.
struct Writing {
    container: usize,
    outer: usize,
}

impl<O: ObjectType> Locked<'_, O> {
    /// The locked object.
    #[inline]
    pub(crate) fn object(&self) -> &ObjectRef<O> {
        self.obj
    }

    /// Runs `write`, a runtime call that changes this container (releases it causes run after
    /// the lock). Code the runtime runs meanwhile (a key hook, a Python `__del__`) may read the
    /// container but not write it, however deeply nested: that is a `RuntimeError`.
    pub(crate) fn write<R>(&self, write: impl FnOnce() -> Result<R>) -> Result<R> {
        let me = self.obj.as_raw().as_ptr() as usize;
        // Only the stripe's holder touches `writing` and the nodes it links (on its stack while
        // linked); every write of this container in progress is in the list (same stripe).
        let outer = self.stripe.writing.load(Ordering::Relaxed);
        let mut at = outer;
        while at != 0 {
            // SAFETY: a node linked by a write still running on this thread (see above).
            let node = unsafe { &*(at as *const Writing) };
            if node.container == me {
                return Err(reentrant_write());
            }
            at = node.outer;
        }
        struct Unlink<'s>(&'s AtomicUsize, usize);
        impl Drop for Unlink<'_> {
            fn drop(&mut self) {
                self.0.store(self.1, Ordering::Relaxed);
            }
        }
        let node = Writing {
            container: me,
            outer,
        };
        let link = &node as *const Writing as usize;
        self.stripe.writing.store(link, Ordering::Relaxed);
        let _unlink = Unlink(&self.stripe.writing, outer);
        hold_releases(write)
    }
}

#[cold]
pub(crate) fn reentrant_write() -> Error {
    Error::runtime_error(
        "cannot write a container while the runtime is changing it (a write from a hook or \
         destructor that the change runs)",
    )
}

/// Holds a field stripe (not reentrant: only a copy or a swap of a field value runs under it).
pub(crate) struct FieldGuard(&'static Stripe);

impl FieldGuard {
    /// Locks the stripe of the field at `addr`.
    #[inline]
    pub(crate) fn lock(addr: *const std::ffi::c_void) -> FieldGuard {
        // Fields are at least 4-byte aligned and usually 8: drop the low bits before hashing.
        let stripe = &shared_locks().fields[((addr as usize) >> 3) % STRIPES];
        stripe.lock();
        FieldGuard(stripe)
    }
}

impl Drop for FieldGuard {
    #[inline]
    fn drop(&mut self) {
        self.0.unlock();
    }
}
