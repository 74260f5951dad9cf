//! The protocol of one stripe: a futex mutex (field stripes), made reentrant and
//! cycle-refusing for containers. It names its atomics, parking and thread identity only
//! through `super::sync`, so that `tests/lock-model` runs this file under the `loom` model
//! checker unchanged.
use super::sync::{self, AtomicU32, AtomicUsize, Ordering::*};

/// One lock, one cache line, in a C layout shared by every Rust library of the process.
#[repr(C)]
#[derive(Default)]
pub(crate) struct Stripe {
    /// 0 free, 1 locked, 2 locked and a thread may be parked on it (the futex word).
    state: AtomicU32,
    _reserved: AtomicU32,
    /// The holding thread of a container stripe (0: none): it may re-enter.
    owner: AtomicUsize,
    /// The innermost container write in progress under it (0: none; see `Locked::write`).
    pub(crate) writing: AtomicUsize,
    /// The stripe the holder of this one waits for (0: none): how a cycle of waits is seen.
    blocked_on: AtomicUsize,
    _pad: [AtomicUsize; 4],
}

/// A wait that would never end: the holder waits, through a chain of holders, for this thread.
pub(crate) struct Cycle;

impl Stripe {
    #[inline]
    fn try_lock(&self) -> bool {
        self.state.compare_exchange(0, 1, Acquire, Relaxed).is_ok()
    }

    /// Locks (not reentrant: the field stripes).
    #[inline]
    pub(crate) fn lock(&self) {
        if !self.try_lock() {
            self.lock_contended();
        }
    }

    /// A short spin, then parking (Drepper's "Futexes Are Tricky": state 2 tells the holder
    /// to wake a waiter; taking a free stripe as 2 costs at most one needless wake).
    #[cold]
    fn lock_contended(&self) {
        let mut state = self.spin();
        loop {
            if state != 2 && self.state.swap(2, Acquire) == 0 {
                return;
            }
            sync::wait(&self.state, 2);
            state = self.spin();
        }
    }

    fn spin(&self) -> u32 {
        for _ in 0..sync::SPINS {
            match self.state.load(Relaxed) {
                1 => sync::spin_loop(),
                state => return state,
            }
        }
        self.state.load(Relaxed)
    }

    #[inline]
    pub(crate) fn unlock(&self) {
        if self.state.swap(0, Release) == 2 {
            sync::wake_one(&self.state);
        }
    }

    /// Locks a container stripe of `table`, or re-enters it if this thread holds it
    /// (`Ok(true)`); a wait in a cycle of waits is `Err(Cycle)`.
    #[inline]
    pub(crate) fn lock_reentrant(&self, table: &[Stripe]) -> Result<bool, Cycle> {
        let me = sync::this_thread();
        // Only this thread stores its own identity: equal means it holds the lock already.
        if self.owner.load(Relaxed) == me {
            return Ok(true);
        }
        if !self.try_lock() {
            self.wait_in(table, me)?;
        }
        self.owner.store(me, Relaxed);
        Ok(false)
    }

    /// Unlocks a container stripe that `lock_reentrant` locked (not re-entered).
    #[inline]
    pub(crate) fn unlock_reentrant(&self) {
        self.owner.store(0, Relaxed);
        self.unlock();
    }

    /// Waits for a container stripe that another thread holds. A thread holding stripes itself
    /// (a hook run by a write) records in them what it waits for and follows the chain of
    /// holders: one that leads back to it is a cycle.
    #[cold]
    fn wait_in(&self, table: &[Stripe], me: usize) -> Result<(), Cycle> {
        let mine = || table.iter().filter(move |s| s.owner.load(SeqCst) == me);
        if mine().next().is_none() {
            self.lock_contended();
            return Ok(());
        }
        let clear = || mine().for_each(|s| s.blocked_on.store(0, SeqCst));
        loop {
            if self.try_lock() {
                clear();
                return Ok(());
            }
            mine().for_each(|s| s.blocked_on.store(self as *const Stripe as usize, SeqCst));
            let mut at = self;
            for _ in 0..=table.len() {
                let owner = at.owner.load(SeqCst);
                if owner == me {
                    clear();
                    return Err(Cycle);
                }
                let next = at.blocked_on.load(SeqCst);
                if owner == 0 || next == 0 {
                    break;
                }
                // SAFETY: `blocked_on` holds 0 or the address of a stripe of this table.
                at = unsafe { &*(next as *const Stripe) };
            }
            // Not a cycle now: the holders move on; look again shortly.
            sync::back_off();
        }
    }
}
