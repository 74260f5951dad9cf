//! The lock around Rust's operations on a `List` or `Dict`.
//!
//! The runtime does not synchronise its mutable containers (neither does C++): a write may move
//! a list's elements or a dict's table while another thread reads them. Safe Rust code can share
//! a `List` between threads, so every operation Rust performs on one (a read, a write through
//! the runtime's function, one step of an iteration, printing) holds this lock for the object:
//! Rust's operations on one container never overlap. Foreign code does not take it (C++ and
//! Python writes racing a Rust operation on another thread are as unsynchronised as between two
//! C++ threads).
//!
//! As for `Rw<T>` fields, the lock is not stored in the object but in a small process-wide table
//! indexed by the object's address, shared by every Rust library of the process (the first one
//! publishes its table through a global function). A thread may take a lock it holds again (a
//! write's key hashing may run code that reads the same dict), so a stripe records its owner.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::function::Function;

const STRIPES: usize = 64;
type LockTable = [AtomicUsize; STRIPES];
#[allow(clippy::declare_interior_mutable_const)]
const FREE: AtomicUsize = AtomicUsize::new(0);
static LOCAL_LOCKS: LockTable = [FREE; STRIPES];
static PROCESS_LOCKS: OnceLock<&'static LockTable> = OnceLock::new();
/// The global function through which the first Rust library of the process shares its table.
const LOCK_TABLE_GLOBAL: &str = "tvm_ffi_rs.container_lock_table.v1";

extern "C" {
    /// The calling thread's identity, the same in every library of the process (unlike the
    /// address of a thread-local, which each library has its own of).
    fn pthread_self() -> usize;
}

fn lock_table() -> &'static LockTable {
    PROCESS_LOCKS.get_or_init(|| {
        for _ in 0..2 {
            if let Some(shared) = Function::get_global(LOCK_TABLE_GLOBAL) {
                if let Ok(ptr) = shared.call_as::<*mut std::ffi::c_void, _>(()) {
                    if !ptr.is_null() {
                        // SAFETY: published below by a library of this SDK (same table type
                        // and size, named by version), never unloaded.
                        return unsafe { &*(ptr as *const LockTable) };
                    }
                }
            }
            let ours = &LOCAL_LOCKS as *const LockTable as usize;
            let publish = Function::from_packed(move |_| {
                // SAFETY: the pointer is the address of this library's lock table, a static
                // valid for the process (libraries are never unloaded), which is what readers
                // of the global expect.
                Ok(unsafe { crate::value::Any::from_opaque_ptr(ours as *mut std::ffi::c_void) })
            });
            // Fails only if another library published first (a race): then use that one.
            if publish.register_global(LOCK_TABLE_GLOBAL, false).is_ok() {
                return &LOCAL_LOCKS;
            }
        }
        &LOCAL_LOCKS
    })
}

/// Holds the lock of one container for the duration of an operation.
pub(crate) struct ContainerGuard(Option<&'static AtomicUsize>);

impl ContainerGuard {
    /// Locks the container at `addr` (an object header), or re-enters a lock this thread holds.
    pub(crate) fn lock(addr: *const std::ffi::c_void) -> ContainerGuard {
        let slot = &lock_table()[((addr as usize) >> 4) % STRIPES];
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { pthread_self() }.max(1);
        if slot.load(Ordering::Relaxed) == me {
            // Only this thread stores its own identity: it holds the lock already.
            return ContainerGuard(None);
        }
        let mut spins = 0u32;
        while slot
            .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        ContainerGuard(Some(slot))
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.0 {
            slot.store(0, Ordering::Release);
        }
    }
}
