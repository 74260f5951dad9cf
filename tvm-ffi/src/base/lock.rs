//! The striped locks of Rust's shared mutable storage, one module for every user: the lock
//! around Rust's operations on a `List` or `Dict` (container stripes: reentrant, owner-tracked),
//! the lock of non-scalar `Rw<T>` fields (field stripes: never re-entered, with readers
//! counted so that a replaced value outlives their snapshots; the holder is recorded too, so
//! that a second acquisition on the holding thread panics with a message instead of waiting
//! for itself), and the lock of Rust's accesses to the runtime's global function table (one
//! container stripe, [`lock_global_functions`]). Both kinds park waiters and
//! live in one process-wide table with one cross-library publication.
//!
//! The runtime does not synchronise its mutable containers (neither does C++): a write may move
//! a list's elements or a dict's table while another thread reads them. Safe Rust code can share
//! a `List` between threads, so every operation Rust performs on one (a read, a write through
//! the runtime's function, one step of an iteration, printing) holds the lock of the object,
//! and the storage is reachable only through [`with_locked`]: Rust's operations on one container
//! never overlap. Foreign code does not take it (C++ and Python writes racing a Rust operation
//! on another thread are as unsynchronised as between two C++ threads). What a locked list or
//! dict reads in place is written next to the containers (`container::locked`).
//!
//! The locks are not stored in the objects but in a small process-wide table indexed by
//! address, shared by every Rust library of the process: the first one publishes its table
//! (while it loads) as an object of a type only this SDK creates, stored in a type attribute
//! of that type (no function is called to find it, and what is found is validated before use).
//! Any code can register a type key first, so the table's key is not one name but a fixed
//! sequence of them (`tvm_ffi_rs.StripedLocks.v2`, then `.v2.1`, `.v2.2`, ...): every library
//! walks it in order and takes the first key that holds a genuine table, or that is free (and
//! publishes there), skipping keys another definition took or whose attribute holds a forgery.
//! So all libraries meet at the same key whatever was registered before them. If every key of
//! the sequence is taken, the library has no table: its container and `Rw` operations raise a
//! `RuntimeError` naming the first key, rather than running unserialised with a private one.
//!
//! **No user code runs while a stripe is held** (it could take another stripe: a deadlock):
//! payload drops of Rust objects that a runtime write releases are queued and run after the
//! lock is released; reads copy a value (a reference count, or a bit copy) under the lock and
//! convert or compare it afterwards; a lookup with a key whose type has custom
//! `__any_hash__`/`__any_equal__` hooks hashes the key before taking the lock, copies the
//! entries of its hash chain under it, and compares them with the hooks after releasing it.
//! What remains: the runtime itself runs those hooks and Python `__del__` inside a write
//! (`ffi.DictSetItem`, `ffi.DictErase`); such code may read the container (the lock re-enters
//! on the same thread) but not write it (refused with an error), and if it waits for another
//! container's stripe whose holder waits, through a chain of holders, for a stripe this thread
//! holds (two such writes on two threads, each reading the other's dict), the wait is refused
//! with a `RuntimeError` instead of deadlocking (holders record what they wait for in the
//! stripes they hold). A thread waiting for a stripe parks (a futex on Linux) after a short
//! spin.
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::abi::sys::{self, TVMFFIAny, TVMFFIObject};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::AnyObject;
use crate::base::object::{
    alloc_object, hold_releases, run_held_releases, type_index_of, ObjectRef, ObjectType,
};

const STRIPES: usize = 64;

/// One lock, one cache line. Shared between libraries (possibly built by other compilers):
/// plain atomics in a fixed C layout, versioned by [`LAYOUT`].
#[repr(C)]
pub(crate) struct Stripe {
    /// 0 free, 1 locked, 2 locked and a thread may be parked on it (the futex word).
    state: AtomicU32,
    _reserved: AtomicU32,
    /// The thread holding it (`pthread_self`), 0 when free: a container lock re-enters.
    owner: AtomicUsize,
    /// The innermost runtime write in progress under this stripe (a [`Writing`] on the
    /// holder's stack, 0: none), linked to the writes it runs inside.
    writing: AtomicUsize,
    /// Field stripes: readers copying a value outside the lock (the count), and
    /// `HAS_GRAVES` while `graveyard` is not empty (one word: a reader's exit sees both).
    readers: AtomicUsize,
    /// Field stripes: values replaced while readers copied them, dropped by the last reader.
    graveyard: AtomicPtr<Grave>,
    /// Container stripes: the stripe the holder of this one waits for (0: none), so that a
    /// waiter can tell a cycle of waits (a deadlock) from a wait that ends.
    blocked_on: AtomicUsize,
    _pad: [AtomicUsize; 2],
}

/// A runtime write in progress on a container of a stripe: a node on the writing thread's
/// stack, linked to the writes of the same stripe that it runs inside (a key hook or
/// destructor the runtime runs inside one write may start another).
#[repr(C)]
struct Writing {
    container: usize,
    outer: usize,
}

/// A value waiting for the readers of its stripe: the head of a larger allocation that `bury`
/// made in some library, which `free` (that library's code) drops and deallocates.
#[repr(C)]
pub(crate) struct Grave {
    next: *mut Grave,
    free: unsafe extern "C" fn(*mut Grave),
}

/// The flag of `Stripe::readers` telling that values wait in the graveyard.
const HAS_GRAVES: usize = 1 << (usize::BITS - 1);

#[allow(clippy::declare_interior_mutable_const)]
const FREE_STRIPE: Stripe = Stripe {
    state: AtomicU32::new(0),
    _reserved: AtomicU32::new(0),
    owner: AtomicUsize::new(0),
    writing: AtomicUsize::new(0),
    readers: AtomicUsize::new(0),
    graveyard: AtomicPtr::new(std::ptr::null_mut()),
    blocked_on: AtomicUsize::new(0),
    _pad: [AtomicUsize::new(0), AtomicUsize::new(0)],
};

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
const LAYOUT: u64 = (3 << 32) | std::mem::size_of::<SharedLocks>() as u64;
/// The first type key of the published object: only this SDK's code creates objects of it (it
/// has no creator, fields or metadata, so neither Python nor a derived Rust type can). When it
/// is taken by another definition, the next keys of the sequence ([`lock_type_key`]) are tried.
const TYPE_KEY: &str = "tvm_ffi_rs.StripedLocks.v2";
/// How many keys of the sequence a library tries before it gives up (fails closed).
const TYPE_KEY_PROBES: u32 = 64;
/// The type attribute (of that type) holding the published object.
const ATTR_NAME: &str = "__tvm_ffi_rs_striped_locks__";

/// The `probe`-th key of the sequence: [`TYPE_KEY`], then `TYPE_KEY.1`, `TYPE_KEY.2`, ...
fn lock_type_key(probe: u32) -> std::string::String {
    match probe {
        0 => TYPE_KEY.to_owned(),
        n => format!("{TYPE_KEY}.{n}"),
    }
}

impl SharedLocks {
    const fn new() -> SharedLocks {
        SharedLocks {
            magic: MAGIC,
            layout: LAYOUT,
            containers: [FREE_STRIPE; STRIPES],
            fields: [FREE_STRIPE; STRIPES],
        }
    }
}

static LOCKS: OnceLock<std::result::Result<&'static SharedLocks, std::string::String>> =
    OnceLock::new();

/// The process-wide table: the published one, or this library's own, published now. Panics
/// (a `RuntimeError` at the FFI boundary) when none can be found or published.
#[inline(always)]
fn shared_locks() -> &'static SharedLocks {
    match LOCKS.get() {
        Some(Ok(locks)) => locks,
        _ => init_shared_locks(),
    }
}

/// Finds or publishes the table now: called while the library loads, when nothing else runs
/// (registering a type attribute is not thread-safe in the runtime). `Err` says why this
/// library has no table (its container and `Rw` operations will fail with that message).
pub(crate) fn publish_at_load() -> std::result::Result<(), std::string::String> {
    LOCKS
        .get_or_init(find_or_publish)
        .as_ref()
        .map(drop)
        .map_err(Clone::clone)
}

#[cold]
#[inline(never)]
fn init_shared_locks() -> &'static SharedLocks {
    match LOCKS.get_or_init(find_or_publish) {
        Ok(locks) => locks,
        Err(why) => crate::base::error::panic::panic_with(Error::runtime_error(why.clone())),
    }
}

/// The index of `type_key`, if the key is this SDK's: a root type without metadata, fields or
/// methods (a type defined anywhere else has at least metadata).
fn lock_type_index(type_key: &str) -> std::result::Result<i32, String> {
    let key = sys::TVMFFIByteArray::from_bytes(type_key.as_bytes());
    // SAFETY: a valid key (copied by the runtime); a final root type.
    let index = unsafe {
        sys::TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, sys::type_index::kTVMFFIObject)
    };
    if index < 0 {
        crate::base::object::type_info::discard_raised_error();
        return Err(format!("cannot allocate the type `{type_key}`"));
    }
    let info = crate::base::object::type_info::type_info(index)
        .ok_or_else(|| format!("the type `{type_key}` has no registry entry"))?;
    // SAFETY: `type_ancestors` has `type_depth` entries.
    let parent = (info.type_depth == 1).then(|| unsafe { (**info.type_ancestors).type_index });
    if parent != Some(sys::type_index::kTVMFFIObject)
        || !info.metadata.is_null()
        || info.num_fields != 0
        || info.num_methods != 0
    {
        return Err(format!(
            "the type key `{type_key}` is taken by another definition"
        ));
    }
    Ok(index)
}

/// The table published in the type attribute, validated; `Ok(None)` when none is.
fn read_published(
    type_key: &str,
    index: i32,
) -> std::result::Result<Option<&'static SharedLocks>, String> {
    let name = sys::TVMFFIByteArray::from_bytes(ATTR_NAME.as_bytes());
    // SAFETY: a valid name; the column (if any) lives in the registry.
    let Some(column) = (unsafe { sys::TVMFFIGetTypeAttrColumn(&name).as_ref() }) else {
        return Ok(None);
    };
    let Some(slot) = index
        .checked_sub(column.begin_index)
        .filter(|&i| i < column.size)
    else {
        return Ok(None);
    };
    // SAFETY: `slot` is within the column's `size` values.
    let raw = unsafe { column.data.add(slot as usize).read() };
    if raw.type_index == sys::type_index::kTVMFFINone {
        return Ok(None);
    }
    let forged = || format!("`{ATTR_NAME}` of `{type_key}` holds a value this SDK did not publish");
    if raw.type_index != index {
        return Err(forged());
    }
    // SAFETY: a value of an object type index holds an object pointer.
    let obj = NonNull::new(unsafe { raw.value.v_obj }).ok_or_else(forged)?;
    // SAFETY: the registry holds a reference to the object; only this SDK makes objects of
    // this type (checked by `lock_type_index`), all `ObjectCell<SharedLocks>`: the header
    // check and the magic and layout words guard against a foreign object anyway.
    unsafe {
        if type_index_of(obj) != index {
            return Err(forged());
        }
        let payload = (obj.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>())
            as *const SharedLocks;
        if std::ptr::addr_of!((*payload).magic).read() != MAGIC
            || std::ptr::addr_of!((*payload).layout).read() != LAYOUT
        {
            return Err(forged());
        }
        // Kept alive for the rest of the process: this library's reference is never released.
        crate::base::object::inc_ref(obj);
        Ok(Some(&*payload))
    }
}

/// Walks the key sequence: the first key holding a genuine table, or free (where this
/// library publishes its table), wins; a key taken by another definition, or whose attribute
/// holds a forgery, is skipped. Every library walks the same sequence while it loads (loads
/// are serialised by the dynamic loader), so they all stop at the same key.
fn find_or_publish() -> std::result::Result<&'static SharedLocks, String> {
    let mut skipped = Vec::new();
    for probe in 0..TYPE_KEY_PROBES {
        let key = lock_type_key(probe);
        match lock_type_index(&key).and_then(|index| publish_at(&key, index)) {
            Ok(table) => return Ok(table),
            Err(why) => skipped.push(why),
        }
    }
    Err(format!(
        "no lock table for Rust containers and `Rw` fields: the type keys `{}` to `{}` are all \
         taken by other definitions, so this library cannot share the lock table of the other \
         Rust libraries of this process, and refuses to use containers and `Rw` fields without \
         it (first: {})",
        lock_type_key(0),
        lock_type_key(TYPE_KEY_PROBES - 1),
        skipped
            .first()
            .map(std::string::String::as_str)
            .unwrap_or("")
    ))
}

/// The table published under `type_key` (of type `index`), or this library's, published
/// there now.
fn publish_at(type_key: &str, index: i32) -> std::result::Result<&'static SharedLocks, String> {
    if let Some(found) = read_published(type_key, index)? {
        return Ok(found);
    }
    // SAFETY: `index` is the SDK's lock-table type, whose objects are `SharedLocks` payloads.
    let obj = unsafe { alloc_object(SharedLocks::new(), index, 0) };
    // SAFETY: a new object of which we own the one reference.
    let ours = unsafe { ObjectRef::<AnyObject>::from_raw(obj) };
    let name = sys::TVMFFIByteArray::from_bytes(ATTR_NAME.as_bytes());
    let value = TVMFFIAny {
        type_index: index,
        zero_padding: 0,
        value: sys::TVMFFIAnyValue {
            v_obj: obj.as_ptr(),
        },
    };
    // SAFETY: valid name and value; the runtime takes its own reference on success.
    if unsafe { sys::TVMFFITypeRegisterAttr(index, &name, &value) } != 0 {
        // Another library published first: use its table.
        crate::base::object::type_info::discard_raised_error();
        return read_published(type_key, index)?
            .ok_or_else(|| format!("cannot publish the table under `{type_key}`"));
    }
    // SAFETY: the payload of our object, which the registry keeps alive for the process.
    let table = unsafe {
        &*((obj.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>())
            as *const SharedLocks)
    };
    // This library's reference is kept too (the registry's is enough, but costs nothing).
    std::mem::forget(ours);
    Ok(table)
}

extern "C" {
    /// The calling thread's identity, the same in every library of the process (unlike the
    /// address of a thread-local, which each library has its own of).
    fn pthread_self() -> usize;
}

#[inline]
fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { pthread_self() }.max(1)
}

/// Parking a thread on a stripe's state word.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod park {
    use std::ffi::{c_int, c_long};
    use std::sync::atomic::AtomicU32;

    extern "C" {
        fn syscall(number: c_long, ...) -> c_long;
    }
    #[cfg(target_arch = "x86_64")]
    const SYS_FUTEX: c_long = 202;
    #[cfg(target_arch = "aarch64")]
    const SYS_FUTEX: c_long = 98;
    const FUTEX_WAIT_PRIVATE: c_int = 128;
    const FUTEX_WAKE_PRIVATE: c_int = 129;

    /// Sleeps while `word` holds `expected` (or until woken; spurious returns are fine).
    pub(super) fn wait(word: &AtomicU32, expected: u32) {
        futex_wait(word, expected, None);
    }

    /// Sleeps while `word` holds `expected`, at most about `timeout`.
    pub(super) fn wait_for(word: &AtomicU32, expected: u32, timeout: std::time::Duration) {
        futex_wait(word, expected, Some(timeout));
    }

    fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<std::time::Duration>) {
        let ts: Option<[c_long; 2]> = timeout.map(|timeout| {
            [
                timeout.as_secs() as c_long,
                c_long::from(timeout.subsec_nanos() as i32),
            ]
        });
        let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |ts| ts.as_ptr());
        // SAFETY: FUTEX_WAIT on a valid, aligned u32, with no timeout or a valid relative one
        // (`ts` outlives the call).
        unsafe {
            syscall(
                SYS_FUTEX,
                word.as_ptr(),
                FUTEX_WAIT_PRIVATE,
                expected,
                ts_ptr,
            )
        };
    }

    /// Wakes one thread sleeping on `word`.
    pub(super) fn wake_one(word: &AtomicU32) {
        // SAFETY: FUTEX_WAKE on a valid, aligned u32.
        unsafe { syscall(SYS_FUTEX, word.as_ptr(), FUTEX_WAKE_PRIVATE, 1 as c_int) };
    }
}

/// Parking without futexes: a short sleep, then the waiter looks again.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod park {
    use std::sync::atomic::{AtomicU32, Ordering};

    pub(super) fn wait(word: &AtomicU32, expected: u32) {
        if word.load(Ordering::Relaxed) == expected {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }

    pub(super) fn wait_for(word: &AtomicU32, expected: u32, _timeout: std::time::Duration) {
        wait(word, expected);
    }

    pub(super) fn wake_one(_word: &AtomicU32) {}
}

impl Stripe {
    #[inline(always)]
    fn lock_raw(&self) {
        if self
            .state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    /// A short spin, then parking (the futex mutex of std and of Drepper's "Futexes Are
    /// Tricky": state 2 tells the holder to wake a waiter).
    #[cold]
    fn lock_contended(&self) {
        let mut state = self.spin();
        if state == 0 {
            match self
                .state
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
        loop {
            if state != 2 && self.state.swap(2, Ordering::Acquire) == 0 {
                return;
            }
            park::wait(&self.state, 2);
            state = self.spin();
        }
    }

    fn spin(&self) -> u32 {
        let mut spins = 100;
        loop {
            let state = self.state.load(Ordering::Relaxed);
            if state != 1 || spins == 0 {
                return state;
            }
            std::hint::spin_loop();
            spins -= 1;
        }
    }

    #[inline(always)]
    fn unlock_raw(&self) {
        if self.state.swap(0, Ordering::Release) == 2 {
            park::wake_one(&self.state);
        }
    }
}

thread_local! {
    /// Container stripes this thread holds (re-entries not counted).
    static HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Holds a container stripe, or re-enters one this thread holds.
struct ReentrantGuard {
    stripe: &'static Stripe,
    reentered: bool,
}

impl ReentrantGuard {
    #[inline]
    fn lock(stripe: &'static Stripe) -> ReentrantGuard {
        let me = this_thread();
        // Only this thread stores its own identity: equal means it holds the lock already.
        if stripe.owner.load(Ordering::Relaxed) == me {
            return ReentrantGuard {
                stripe,
                reentered: true,
            };
        }
        if stripe
            .state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            lock_container_contended(stripe, me);
        }
        stripe.owner.store(me, Ordering::Relaxed);
        let _ = HELD.try_with(|held| held.set(held.get() + 1));
        ReentrantGuard {
            stripe,
            reentered: false,
        }
    }
}

/// Waits for a container stripe that another thread holds. A thread holding other container
/// stripes meanwhile (a key hook or destructor that a runtime write runs reads another
/// container) records what it waits for in them, and follows the chain of holders: if it
/// leads back to this thread, the wait would never end (two such writes on two threads, each
/// reading the other's container), so it panics with a message (a `RuntimeError` at the FFI
/// boundary, which fails the write that ran the hook) instead of deadlocking.
#[cold]
#[inline(never)]
fn lock_container_contended(stripe: &'static Stripe, me: usize) {
    let table = &shared_locks().containers;
    let mine = || {
        table
            .iter()
            .filter(move |s| s.owner.load(Ordering::SeqCst) == me)
    };
    if mine().next().is_none() {
        stripe.lock_contended();
        return;
    }
    let target = stripe as *const Stripe as usize;
    let clear = || mine().for_each(|s| s.blocked_on.store(0, Ordering::SeqCst));
    loop {
        if stripe
            .state
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            clear();
            return;
        }
        mine().for_each(|s| s.blocked_on.store(target, Ordering::SeqCst));
        // The holder of `stripe` waits for the stripe its own record names, and so on.
        let mut at = stripe;
        for _ in 0..=STRIPES {
            let owner = at.owner.load(Ordering::SeqCst);
            if owner == me {
                clear();
                container_deadlock();
            }
            let next = at.blocked_on.load(Ordering::SeqCst);
            if owner == 0 || next == 0 {
                break;
            }
            // SAFETY: `blocked_on` holds 0 or the address of a stripe of this table.
            at = unsafe { &*(next as *const Stripe) };
        }
        // Not a cycle now: wait a little and look again (the holders move on).
        let state = stripe.state.load(Ordering::Relaxed);
        if state != 0 {
            park::wait_for(&stripe.state, state, std::time::Duration::from_micros(200));
        }
    }
}

#[cold]
#[inline(never)]
fn container_deadlock() -> ! {
    crate::base::error::panic::panic_with(Error::runtime_error(
        "a container is used by a key hook or destructor that a container write runs, while \
         another thread's write, which holds that container, waits for the container this \
         thread is writing: refused instead of deadlocking",
    ))
}

impl Drop for ReentrantGuard {
    #[inline]
    fn drop(&mut self) {
        if self.reentered {
            return;
        }
        self.stripe.owner.store(0, Ordering::Relaxed);
        self.stripe.unlock_raw();
        let last = HELD
            .try_with(|held| {
                held.set(held.get() - 1);
                held.get() == 0
            })
            .unwrap_or(true);
        if last {
            // The payload drops a write queued run now, with no stripe held.
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
    let stripe = &shared_locks().containers[(obj.as_raw().as_ptr() as usize >> 4) % STRIPES];
    let guard = ReentrantGuard::lock(stripe);
    let out = f(&Locked { obj, stripe });
    drop(guard);
    out
}

/// The container stripe that also serialises Rust's accesses to the runtime's global function
/// table, in every Rust library of the process. The runtime does not synchronise the table: a
/// registration may rehash it (moving every entry out of the old table, then freeing it) under
/// a concurrent lookup, which then misses a registered name or reads freed memory. A lookup
/// holds it for one runtime call and a registration for two; no user code runs under it.
const GLOBAL_FUNCTIONS_STRIPE: usize = STRIPES - 1;

/// This library's own lock of the global function table, used only when it has no shared
/// table (every key of the sequence taken): Rust's accesses are then serialised per library.
static LOCAL_GLOBAL_FUNCTIONS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held while Rust reads or changes the runtime's global function table.
pub(crate) struct GlobalFunctionsGuard(#[allow(dead_code)] GlobalFunctionsLock);

/// The lock a [`GlobalFunctionsGuard`] holds (released when dropped).
enum GlobalFunctionsLock {
    /// The process-wide stripe (re-entered if this thread holds it).
    Shared(#[allow(dead_code)] ReentrantGuard),
    /// This library's own lock.
    Local(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>),
}

/// Locks the runtime's global function table against Rust's other accesses, from any Rust
/// library of the process. C++ and Python code that registers a function while Rust looks one
/// up on another thread does not take it (the runtime expects registrations while libraries
/// load, or under a lock of the caller's).
pub(crate) fn lock_global_functions() -> GlobalFunctionsGuard {
    // The thread's record of held stripes exists before a stripe is held: creating a thread
    // local of a loaded library may wait for the dynamic loader's lock, which a thread running
    // a library's initialisers (registering its functions under this stripe) holds.
    let _ = HELD.try_with(|_| ());
    GlobalFunctionsGuard(match LOCKS.get_or_init(find_or_publish) {
        Ok(locks) => GlobalFunctionsLock::Shared(ReentrantGuard::lock(
            &locks.containers[GLOBAL_FUNCTIONS_STRIPE],
        )),
        Err(_) => GlobalFunctionsLock::Local(
            LOCAL_GLOBAL_FUNCTIONS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        ),
    })
}

impl<O: ObjectType> Locked<'_, O> {
    /// The locked object.
    #[inline]
    pub(crate) fn object(&self) -> &ObjectRef<O> {
        self.obj
    }

    /// Runs `write`, a call of the runtime that changes this container. Payload drops of Rust
    /// objects it releases run after the lock is released. Code that the runtime runs meanwhile
    /// on this thread (a key's hash hook, a Python `__del__`) may read the container but not
    /// write it: such a write is refused with a `RuntimeError`.
    pub(crate) fn write<R>(&self, write: impl FnOnce() -> Result<R>) -> Result<R> {
        let me = self.obj.as_raw().as_ptr() as usize;
        // Only the holder of the stripe touches `writing` and the nodes it links, which live
        // on the holder's stack for as long as they are linked. Every write of this container
        // in progress on this thread is in the list: the container hashes to this stripe.
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
        struct Restore<'s>(&'s AtomicUsize, usize);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.store(self.1, Ordering::Relaxed);
            }
        }
        let node = Writing {
            container: me,
            outer,
        };
        self.stripe
            .writing
            .store(&node as *const Writing as usize, Ordering::Relaxed);
        let _restore = Restore(&self.stripe.writing, outer);
        // A key's equality hook that fails inside the runtime's write answers "unequal" (the
        // runtime cannot take an error there, see `key_hook_for_runtime`): this write reports
        // it.
        let earlier = take_hook_failure();
        let out = hold_releases(write);
        let failed = take_hook_failure();
        if let Some(earlier) = earlier {
            record_hook_failure(earlier);
        }
        match (out, failed) {
            (Ok(_), Some(failed)) => Err(hook_failed_in_write(failed)),
            (out, _) => out,
        }
    }
}

thread_local! {
    /// The first failure of a key's equality hook that the runtime ran on this thread since
    /// the current Rust write started (answered "unequal" instead).
    static HOOK_FAILURE: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the failure of a key hook that the runtime ran (the first one counts).
pub(crate) fn record_hook_failure(err: Error) {
    let _ = HOOK_FAILURE.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.get_or_insert(err);
        }
    });
}

fn take_hook_failure() -> Option<Error> {
    HOOK_FAILURE
        .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut slot| slot.take()))
        .ok()
        .flatten()
}

/// Runs `build`, a runtime call that makes a new container from caller-given keys (`ffi.Map`,
/// `ffi.Dict`): a key's equality hook that failed meanwhile answered "unequal" there (see
/// `key_hook_for_runtime`), so the container built may hold two keys the hook would have
/// called equal. Nothing else holds it yet: it is dropped, and the failure returned.
pub(crate) fn build_reporting_hook_failures<R>(build: impl FnOnce() -> Result<R>) -> Result<R> {
    let earlier = take_hook_failure();
    let out = build();
    let failed = take_hook_failure();
    if let Some(earlier) = earlier {
        record_hook_failure(earlier);
    }
    match (out, failed) {
        (Ok(_), Some(failed)) => Err(Error::new(
            failed.kind(),
            format!(
                "a key's `__any_equal__` failed while the runtime built the container, where it \
                 cannot take an error; nothing was built: {}",
                failed.message()
            ),
        )),
        (out, _) => out,
    }
}

#[cold]
fn hook_failed_in_write(err: Error) -> Error {
    Error::new(
        err.kind(),
        format!(
            "a key's `__any_equal__` failed while the runtime changed the container, where it \
             cannot take an error; the change took effect with the keys taken as unequal: {}",
            err.message()
        ),
    )
}

#[cold]
pub(crate) fn reentrant_write() -> Error {
    Error::runtime_error(
        "cannot write a container while the runtime is changing it (a write from a hook or \
         destructor that the change runs)",
    )
}

/// Holds a field stripe (no re-entry: no code but a bit copy or swap runs under it). The
/// holder is recorded, so that a second acquisition on the same thread, which could only wait
/// for itself, panics with a message (a `RuntimeError` at the FFI boundary) instead of hanging.
pub(crate) struct FieldGuard(&'static Stripe);

impl FieldGuard {
    /// Locks the stripe of the field at `addr`.
    #[inline]
    pub(crate) fn lock(addr: *const c_void) -> FieldGuard {
        // Fields are at least 4-byte aligned and usually 8: drop the low bits before hashing.
        let stripe = &shared_locks().fields[((addr as usize) >> 3) % STRIPES];
        stripe.lock_field();
        FieldGuard(stripe)
    }

    /// Counts a reader that copies a value of this stripe after the lock is released.
    #[inline]
    pub(crate) fn enter_reader(&self) -> ReaderToken {
        // Entered under the lock only, so a writer holding it sees every reader.
        self.0.readers.fetch_add(1, Ordering::Relaxed);
        ReaderToken(self.0)
    }

    /// Whether readers copy values of this stripe now (a replaced value must then wait).
    #[inline]
    pub(crate) fn has_readers(&self) -> bool {
        self.0.readers.load(Ordering::Acquire) & !HAS_GRAVES != 0
    }

    /// Leaves `value`, just replaced under this lock, to the last reader of this stripe if
    /// readers copy values now (they may copy this one); else hands it back to be dropped
    /// once the lock is released.
    #[inline]
    pub(crate) fn bury_if_read<T>(&self, value: T) -> Option<T> {
        // The flag is set in the same step that sees the readers: a reader leaving after it
        // finds the flag (and the last one frees the graves); one that left before is not seen.
        let before = self.0.readers.fetch_or(HAS_GRAVES, Ordering::AcqRel);
        if before & !HAS_GRAVES == 0 {
            if before & HAS_GRAVES == 0 {
                self.0.readers.fetch_and(!HAS_GRAVES, Ordering::Relaxed);
            }
            return Some(value);
        }
        self.push_grave(Grave::new(value));
        None
    }

    /// Leaves `value` to the last reader of this stripe; the caller is counted as a reader
    /// (so the flag set here is seen by a reader leaving later).
    #[inline]
    pub(crate) fn bury<T>(&self, value: T, _reader: &ReaderToken) {
        self.0.readers.fetch_or(HAS_GRAVES, Ordering::Relaxed);
        self.push_grave(Grave::new(value));
    }

    fn push_grave(&self, grave: *mut Grave) {
        // SAFETY: a new grave, owned by the stripe from now on; the graveyard is only touched
        // with the lock held.
        unsafe { (*grave).next = self.0.graveyard.load(Ordering::Relaxed) };
        self.0.graveyard.store(grave, Ordering::Relaxed);
    }
}

impl Drop for FieldGuard {
    #[inline]
    fn drop(&mut self) {
        self.0.unlock_field();
    }
}

impl Stripe {
    /// Locks a field stripe, recording the holder; panics if this thread holds it already.
    #[inline]
    fn lock_field(&self) {
        let me = this_thread();
        // Only this thread stores its own identity: equal means it holds the lock already.
        if self.owner.load(Ordering::Relaxed) == me {
            field_reentered();
        }
        self.lock_raw();
        self.owner.store(me, Ordering::Relaxed);
    }

    #[inline]
    fn unlock_field(&self) {
        self.owner.store(0, Ordering::Relaxed);
        self.unlock_raw();
    }
}

#[cold]
#[inline(never)]
fn field_reentered() -> ! {
    crate::base::error::panic::panic_with(Error::runtime_error(
        "an Rw field's lock is taken again by the thread that holds it (a field read or \
         written while the same lock stripe is held): refused instead of waiting forever",
    ))
}

/// A reader of a field stripe, counted until it is dropped; the last reader frees what was
/// buried meanwhile (after releasing the lock).
pub(crate) struct ReaderToken(&'static Stripe);

impl Drop for ReaderToken {
    #[inline]
    fn drop(&mut self) {
        // Release: this reader's use of its snapshot happens before a writer, seeing no
        // reader, drops the value.
        if self.0.readers.fetch_sub(1, Ordering::Release) == HAS_GRAVES | 1 {
            self.0.free_graves();
        }
    }
}

impl Stripe {
    /// Frees the graveyard if no reader is left (the last one left just now; another may
    /// have come since: it frees them when it leaves). Graves are buried under the lock while
    /// readers are counted, and readers are counted under it, so with the lock held and no
    /// reader counted, no snapshot of a buried value exists.
    #[cold]
    fn free_graves(&self) {
        self.lock_field();
        let graves = if self.readers.load(Ordering::Acquire) == HAS_GRAVES {
            self.readers.fetch_and(!HAS_GRAVES, Ordering::Relaxed);
            self.graveyard.swap(std::ptr::null_mut(), Ordering::Relaxed)
        } else {
            std::ptr::null_mut()
        };
        self.unlock_field();
        let mut grave = graves;
        while !grave.is_null() {
            // SAFETY: buried by `bury`, no reader left; `free` releases the whole allocation.
            unsafe {
                let next = (*grave).next;
                ((*grave).free)(grave);
                grave = next;
            }
        }
    }
}

impl Grave {
    /// A grave for `value`, released by `free_grave::<T>` (this library's code).
    pub(crate) fn new<T>(value: T) -> *mut Grave {
        Box::into_raw(Box::new(GraveOf {
            grave: Grave {
                next: std::ptr::null_mut(),
                free: free_grave::<T>,
            },
            value,
        })) as *mut Grave
    }
}

#[repr(C)]
struct GraveOf<T> {
    grave: Grave,
    value: T,
}

unsafe extern "C" fn free_grave<T>(grave: *mut Grave) {
    // A panic in the value's Drop must not unwind into another library's frame.
    crate::abi::catch_discarding(|| {
        // SAFETY: made by `Grave::new::<T>` (the first field of a `GraveOf<T>`).
        drop(unsafe { Box::from_raw(grave as *mut GraveOf<T>) });
    });
}

const _: () = assert!(std::mem::size_of::<Stripe>() == 64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_stripe_taken_twice_on_one_thread_panics_instead_of_hanging() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let field = 0_u64;
            let addr = &field as *const u64 as *const c_void;
            let outer = FieldGuard::lock(addr);
            let again = std::panic::catch_unwind(|| drop(FieldGuard::lock(addr)));
            drop(outer);
            // Released: the stripe is free again for this thread and others.
            drop(FieldGuard::lock(addr));
            let _ = done.send(again.map_err(|payload| {
                payload
                    .downcast_ref::<Error>()
                    .map(|err| err.message().to_owned())
                    .unwrap_or_default()
            }));
        });
        let again = finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the second acquisition hangs");
        let message = again.expect_err("the second acquisition is refused");
        assert!(
            message.starts_with("an Rw field's lock is taken again by the thread that holds it"),
            "{message}"
        );
    }
}
