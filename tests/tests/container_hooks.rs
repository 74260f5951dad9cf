//! Dict keys with hooks (`__any_hash__`, `__any_equal__`: type attributes the runtime calls
//! while it looks a key up or inserts it): user code, which a Rust lookup runs without the
//! dict's lock and the runtime runs inside a write, under it. A binary of its own, with one
//! test: registering type attributes is not thread-safe in the runtime, so nothing else may
//! run meanwhile.
use tvm_ffi::{Any, Dict, Function, IntoAny, ObjectRef};

#[test]
fn key_hooks_and_the_dict_lock() {
    // Registered first, on this one thread.
    register_key_hooks(ObjectRef::new(HookedKey { v: 0 }).type_index());
    register_sleepy_hooks(ObjectRef::new(SleepyKey { v: 0 }).type_index());
    register_cross_hooks(ObjectRef::new(CrossKey { v: 0 }).type_index());
    a_key_hook_that_writes_the_dict_being_written_is_refused();
    a_thread_waiting_for_a_container_lock_sleeps();
    lookups_whose_hooks_read_another_dict_do_not_deadlock();
    writes_whose_hooks_read_another_dict_do_not_deadlock();
}

/// A dict key whose hooks read the dict in this thread's `OTHER` slot.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.CrossKey")]
#[repr(C)]
pub struct CrossKey {
    pub v: i64,
}

thread_local! {
    static OTHER: std::cell::RefCell<Option<Dict<Any, Any>>> = const { std::cell::RefCell::new(None) };
}

fn read_other() {
    OTHER.with(|other| {
        if let Some(other) = other.borrow().as_ref() {
            for _ in 0..4 {
                std::hint::black_box(other.len());
                std::hint::black_box(other.get(1i64));
            }
        }
    });
}

fn register_cross_hooks(index: i32) {
    let hash = Function::from_typed(|key: ObjectRef<CrossKey>| -> i64 {
        read_other();
        key.v % 4
    });
    let equal = Function::from_typed(|a: Any, b: Any| -> bool {
        read_other();
        match (
            a.cast::<ObjectRef<CrossKey>>(),
            b.cast::<ObjectRef<CrossKey>>(),
        ) {
            (Ok(a), Ok(b)) => a.v == b.v,
            _ => false,
        }
    });
    for (name, hook) in [("__any_hash__", hash), ("__any_equal__", equal)] {
        let name = tvm_ffi::sys::TVMFFIByteArray::from_bytes(name.as_bytes());
        let hook = hook.into_any();
        // SAFETY: a valid name and value; the runtime keeps its own reference.
        let rc = unsafe { tvm_ffi::sys::TVMFFITypeRegisterAttr(index, &name, hook.as_raw()) };
        assert_eq!(rc, 0);
    }
}

/// Runs `f` on a thread of its own and fails if it does not finish in time (a deadlock).
fn finishes_in_time(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, wait) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match wait.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(()) => worker.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => worker.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlock"),
    }
}

/// Two dicts on different stripes of the lock table, each holding cross keys 0..8 (`key % 4`
/// hashes: chains of several keys, compared by the equality hook).
fn two_cross_dicts() -> (Dict<Any, Any>, Dict<Any, Any>) {
    let stripe = |d: &Dict<Any, Any>| (d.as_object_ref().as_raw().as_ptr() as usize >> 4) % 64;
    let fill = |d: &Dict<Any, Any>| {
        for v in 0..8 {
            d.insert(ObjectRef::new(CrossKey { v }).into_any(), v.into_any())
                .unwrap();
        }
        d.insert(1i64.into_any(), 1i64.into_any()).unwrap();
    };
    let a: Dict<Any, Any> = Dict::default();
    let mut keep = Vec::new();
    let b = loop {
        let b: Dict<Any, Any> = Dict::default();
        if stripe(&b) != stripe(&a) {
            break b;
        }
        keep.push(b);
    };
    fill(&a);
    fill(&b);
    (a, b)
}

fn lookups_whose_hooks_read_another_dict_do_not_deadlock() {
    // Each thread looks keys up in its dict; the keys' hooks read the other dict. A lookup that
    // ran the hooks under its dict's lock deadlocked (ABBA): they run without it.
    finishes_in_time("lookups", || {
        let (a, b) = two_cross_dicts();
        std::thread::scope(|scope| {
            for (mine, theirs) in [(&a, &b), (&b, &a)] {
                scope.spawn(move || {
                    OTHER.with(|slot| *slot.borrow_mut() = Some(theirs.clone()));
                    for i in 0..3000_i64 {
                        let key = ObjectRef::new(CrossKey { v: i % 10 }).into_any();
                        let found = mine.get(&key).map(|v| v.cast::<i64>().unwrap());
                        assert_eq!(found, (i % 10 < 8).then_some(i % 10));
                        assert_eq!(mine.contains_key(&key), i % 10 < 8);
                    }
                    OTHER.with(|slot| *slot.borrow_mut() = None);
                });
            }
        });
    });
}

fn writes_whose_hooks_read_another_dict_do_not_deadlock() {
    // The runtime runs the hooks inside its write, under the dict's lock. Two such writes on
    // two threads reading each other's dict wait for each other: one is refused with an
    // error (the write fails, the dict unchanged) instead of deadlocking.
    finishes_in_time("writes", || {
        let (a, b) = two_cross_dicts();
        let refused = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for (mine, theirs) in [(&a, &b), (&b, &a)] {
                let refused = &refused;
                scope.spawn(move || {
                    OTHER.with(|slot| *slot.borrow_mut() = Some(theirs.clone()));
                    for i in 0..3000_i64 {
                        let key = ObjectRef::new(CrossKey { v: i % 8 }).into_any();
                        match mine.insert(key, (i % 8).into_any()) {
                            Ok(()) => {}
                            Err(err) => {
                                assert_eq!(err.kind().as_str(), "RuntimeError");
                                assert!(
                                    err.message().contains("refused instead of deadlocking"),
                                    "{}",
                                    err.message()
                                );
                                refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    }
                    OTHER.with(|slot| *slot.borrow_mut() = None);
                });
            }
        });
        // Every write that went through replaced a value by an equal one.
        for d in [&a, &b] {
            assert_eq!(d.len(), 9);
            for v in 0..8 {
                let key = ObjectRef::new(CrossKey { v }).into_any();
                assert_eq!(d.get(&key).map(|x| x.cast::<i64>().unwrap()), Some(v));
            }
        }
    });
}

/// A dict key whose hash and equality hooks (type attributes the runtime calls while it looks
/// the key up or inserts it) use the dict being written.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.HookedKey")]
#[repr(C)]
pub struct HookedKey {
    pub v: i64,
}

thread_local! {
    static HOOK_DICT: std::cell::RefCell<Option<Dict<Any, Any>>> = const { std::cell::RefCell::new(None) };
}
static HOOK_READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static HOOK_REFUSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static HOOK_WROTE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn register_key_hooks(index: i32) {
    use std::sync::atomic::Ordering::Relaxed;
    let hash = Function::from_typed(|key: ObjectRef<HookedKey>| -> i64 {
        HOOK_DICT.with(|dict| {
            if let Some(dict) = dict.borrow().as_ref() {
                // A read re-enters the lock; a write while the runtime changes the dict (or
                // walks its table) must be refused.
                std::hint::black_box(dict.len());
                HOOK_READS.fetch_add(1, Relaxed);
                match dict.insert(7i64.into_any(), 7i64.into_any()) {
                    // Run by a Rust lookup, without the lock and outside any write: a write
                    // goes through (and is undone).
                    Ok(()) => {
                        dict.remove(7i64).unwrap();
                        HOOK_WROTE.fetch_add(1, Relaxed);
                    }
                    // Run by the runtime inside its write: refused.
                    Err(err) => {
                        assert_eq!(err.kind().as_str(), "RuntimeError", "{}", err.message());
                        HOOK_REFUSED.fetch_add(1, Relaxed);
                    }
                }
            }
        });
        key.v
    });
    let equal = Function::from_typed(|a: Any, b: Any| -> bool {
        match (
            a.cast::<ObjectRef<HookedKey>>(),
            b.cast::<ObjectRef<HookedKey>>(),
        ) {
            (Ok(a), Ok(b)) => a.v == b.v,
            _ => false,
        }
    });
    for (name, hook) in [("__any_hash__", hash), ("__any_equal__", equal)] {
        let name = tvm_ffi::sys::TVMFFIByteArray::from_bytes(name.as_bytes());
        let hook = hook.into_any();
        // SAFETY: a valid name and value; the runtime keeps its own reference.
        let rc = unsafe { tvm_ffi::sys::TVMFFITypeRegisterAttr(index, &name, hook.as_raw()) };
        assert_eq!(rc, 0);
    }
}

fn a_key_hook_that_writes_the_dict_being_written_is_refused() {
    use std::sync::atomic::Ordering::Relaxed;
    let key = |v| ObjectRef::new(HookedKey { v }).into_any();
    let dict: Dict<Any, Any> = Dict::default();
    HOOK_DICT.with(|slot| *slot.borrow_mut() = Some(dict.clone()));
    for v in 0..20 {
        dict.insert(key(v), v.into_any()).unwrap();
    }
    assert_eq!(
        dict.try_get(key(3))
            .unwrap()
            .unwrap()
            .cast::<i64>()
            .unwrap(),
        3
    );
    assert_eq!(
        dict.remove(key(4)).unwrap().unwrap().cast::<i64>().unwrap(),
        4
    );
    HOOK_DICT.with(|slot| *slot.borrow_mut() = None);
    assert!(HOOK_REFUSED.load(Relaxed) > 0 && HOOK_WROTE.load(Relaxed) > 0);
    assert_eq!(
        HOOK_REFUSED.load(Relaxed) + HOOK_WROTE.load(Relaxed),
        HOOK_READS.load(Relaxed)
    );
    // No write of a hook inside a write went through, and those outside were undone: the
    // dict holds the 19 keys inserted and kept.
    assert_eq!(dict.len(), 19);
    assert!(!dict.contains_key(7i64));
}

/// A dict key whose hash hook sleeps while `SLEEPY_HOOK_MS` is set: the runtime runs it inside
/// a Rust insert, which holds the dict's lock meanwhile.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.SleepyKey")]
#[repr(C)]
pub struct SleepyKey {
    pub v: i64,
}

static SLEEPY_HOOK_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static SLEEPY_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" {
    fn clock_gettime(clock: i32, out: *mut [i64; 2]) -> i32;
}

/// CPU time the calling thread used so far.
fn thread_cpu_time() -> std::time::Duration {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = [0i64; 2];
    // SAFETY: a valid clock id and output buffer (struct timespec: seconds, nanoseconds).
    assert_eq!(
        unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) },
        0
    );
    std::time::Duration::new(ts[0] as u64, ts[1] as u32)
}

fn a_thread_waiting_for_a_container_lock_sleeps() {
    use std::sync::atomic::Ordering::SeqCst;
    // A key already there: inserting another compares the keys (small tables are searched
    // linearly) and hashes them.
    let dict: Dict<Any, Any> = Dict::default();
    dict.insert(
        ObjectRef::new(SleepyKey { v: 0 }).into_any(),
        0i64.into_any(),
    )
    .unwrap();
    SLEEPY_HOOK_MS.store(300, SeqCst);
    SLEEPY_CALLS.store(0, SeqCst);
    let (entered, wait_entered) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let holder = dict.clone();
        scope.spawn(move || {
            // The runtime's write hashes the key under the dict's lock: it holds the lock
            // 300 ms+.
            entered.send(()).unwrap();
            holder
                .insert(
                    ObjectRef::new(SleepyKey { v: 1 }).into_any(),
                    1i64.into_any(),
                )
                .unwrap();
        });
        wait_entered.recv().unwrap();
        // The insert runs the hooks first without the lock (its lookup of the value it
        // replaces: a hash and an equality), then the runtime runs them in its write, under the
        // lock: wait for the third call.
        while SLEEPY_CALLS.load(SeqCst) < 3 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        // This thread waits for the lock for about 250 ms: parked, not spinning.
        let (cpu, wall) = (thread_cpu_time(), std::time::Instant::now());
        let len = dict.len();
        let (cpu, wall) = (thread_cpu_time() - cpu, wall.elapsed());
        SLEEPY_HOOK_MS.store(0, SeqCst);
        assert!(len <= 2);
        assert!(
            wall >= std::time::Duration::from_millis(100),
            "no wait: {wall:?}"
        );
        assert!(
            cpu < wall / 5,
            "waited {wall:?} for the lock, using {cpu:?} of CPU"
        );
    });
}

fn register_sleepy_hooks(index: i32) {
    use std::sync::atomic::Ordering::SeqCst;
    let nap = || {
        SLEEPY_CALLS.fetch_add(1, SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(
            SLEEPY_HOOK_MS.load(SeqCst),
        ))
    };
    let hash = Function::from_typed(move |key: ObjectRef<SleepyKey>| -> i64 {
        nap();
        key.v
    });
    let equal = Function::from_typed(move |a: Any, b: Any| -> bool {
        nap();
        match (
            a.cast::<ObjectRef<SleepyKey>>(),
            b.cast::<ObjectRef<SleepyKey>>(),
        ) {
            (Ok(a), Ok(b)) => a.v == b.v,
            _ => false,
        }
    });
    for (name, hook) in [("__any_hash__", hash), ("__any_equal__", equal)] {
        let name = tvm_ffi::sys::TVMFFIByteArray::from_bytes(name.as_bytes());
        let hook = hook.into_any();
        // SAFETY: a valid name and value; the runtime keeps its own reference.
        let rc = unsafe { tvm_ffi::sys::TVMFFITypeRegisterAttr(index, &name, hook.as_raw()) };
        assert_eq!(rc, 0);
    }
}
