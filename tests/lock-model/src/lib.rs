//! The protocol of the SDK's lock stripes (`tvm-ffi/src/base/lock/stripe.rs`, compiled here
//! unchanged) under the `loom` model checker, which runs every interleaving of the threads of
//! each test (up to a bound of preemptions) and fails on a data race, a deadlock or a failed
//! assertion. `sync` gives the file loom's atomics, a model of the futex (a waiter sleeps only
//! while the word holds the value it expects, checked under the same lock as a wake) and
//! thread identities.
#![cfg(test)]

#[path = "../../../tvm-ffi/src/base/lock/stripe.rs"]
#[allow(dead_code)]
mod stripe;

mod sync {
    pub(crate) use loom::hint::spin_loop;
    pub(crate) use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
    use loom::sync::{Condvar, Mutex};
    pub(crate) use loom::thread::yield_now as back_off;

    /// One look before parking: the parking path runs in every test.
    pub(crate) const SPINS: u32 = 1;

    loom::lazy_static! {
        static ref FUTEX: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }

    pub(crate) fn wait(word: &AtomicU32, expected: u32) {
        let (lock, parked) = &*FUTEX;
        let guard = lock.lock().unwrap();
        if word.load(Ordering::SeqCst) == expected {
            drop(parked.wait(guard).unwrap());
        }
    }

    pub(crate) fn wake_one(_word: *const AtomicU32) {
        let (lock, parked) = &*FUTEX;
        let _guard = lock.lock().unwrap();
        // One condition for every word: waking all over-approximates a wake of one waiter.
        parked.notify_all();
    }

    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    loom::thread_local! {
        static ID: usize = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn this_thread() -> usize {
        ID.with(|id| *id)
    }
}

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use stripe::{Cycle, Stripe};

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// A stripe table and a counter it protects (loom reports any unsynchronised access).
struct Shared {
    stripes: [Stripe; 2],
    counter: UnsafeCell<u32>,
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        stripes: [Stripe::default(), Stripe::default()],
        counter: UnsafeCell::new(0),
    })
}

fn bump(shared: &Shared) {
    // SAFETY (of the model): the caller holds stripe 0, which guards the counter.
    shared.counter.with_mut(|n| unsafe { *n += 1 });
}

#[test]
fn a_field_stripe_excludes_and_wakes_its_parked_waiters() {
    model(|| {
        let shared = shared();
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let shared = shared.clone();
                loom::thread::spawn(move || {
                    shared.stripes[0].lock();
                    bump(&shared);
                    shared.stripes[0].unlock();
                })
            })
            .collect();
        shared.stripes[0].lock();
        bump(&shared);
        shared.stripes[0].unlock();
        for thread in threads {
            thread.join().unwrap();
        }
        // SAFETY (of the model): every thread is joined.
        assert_eq!(shared.counter.with(|n| unsafe { *n }), 3);
    });
}

#[test]
fn a_container_stripe_reenters_on_its_holder_and_excludes_others() {
    model(|| {
        let shared = shared();
        let other = {
            let shared = shared.clone();
            loom::thread::spawn(move || {
                let reentered = shared.stripes[0].lock_reentrant(&shared.stripes);
                assert!(matches!(reentered, Ok(false)));
                bump(&shared);
                shared.stripes[0].unlock_reentrant();
            })
        };
        let table = &shared.stripes;
        assert!(matches!(table[0].lock_reentrant(table), Ok(false)));
        bump(&shared);
        // Again on the holding thread: re-entered, not a wait for itself.
        assert!(matches!(table[0].lock_reentrant(table), Ok(true)));
        bump(&shared);
        table[0].unlock_reentrant();
        other.join().unwrap();
        // SAFETY (of the model): every thread is joined.
        assert_eq!(shared.counter.with(|n| unsafe { *n }), 3);
    });
}

#[test]
fn a_cycle_of_waits_is_refused_instead_of_deadlocking() {
    model(|| {
        let shared = shared();
        // Each thread holds one stripe and then waits for the other's: a hook run by a write
        // reading another container that is being written on the other thread.
        let take_both = |shared: &Shared, first: usize| -> Result<(), Cycle> {
            let table = &shared.stripes;
            assert!(matches!(table[first].lock_reentrant(table), Ok(false)));
            let second = table[1 - first].lock_reentrant(table);
            if second.is_ok() {
                bump(shared); // both held: stripe 0 among them
                table[1 - first].unlock_reentrant();
            }
            table[first].unlock_reentrant();
            second.map(drop)
        };
        let other = {
            let shared = shared.clone();
            loom::thread::spawn(move || take_both(&shared, 1).is_ok())
        };
        let mine = take_both(&shared, 0).is_ok();
        let theirs = other.join().unwrap();
        // SAFETY (of the model): every thread is joined.
        let bumps = shared.counter.with(|n| unsafe { *n });
        assert_eq!(bumps, u32::from(mine) + u32::from(theirs));
    });
}
