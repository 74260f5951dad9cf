//! What `stripe` needs of the platform (`tests/lock-model` gives it the model checker's).
pub(crate) use atomic_wait::{wait, wake_one};
pub(crate) use std::hint::spin_loop;
pub(crate) use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
/// Between two looks of a waiter that must not park (it follows a chain of waits).
pub(crate) use std::thread::yield_now as back_off;

/// How many times a waiter looks at a held stripe before it parks.
pub(crate) const SPINS: u32 = 100;

extern "C" {
    fn pthread_self() -> usize;
}

/// The thread's identity, the same in every library (a thread-local's address is not).
pub(crate) fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { pthread_self() }.max(1)
}
