//! Dict keys with hooks (`__any_hash__`, `__any_equal__`: type attributes the runtime calls
//! while it looks a key up or inserts it): user code, which a Rust lookup runs without the
//! dict's lock and the runtime runs inside a write, under it. A binary of its own, whose tests
//! run one at a time (`serial`): registering type attributes is not thread-safe in the runtime,
//! so nothing else may run meanwhile.
use tvm_ffi::{Any, Dict, Function, IntoAny, ObjectRef};

/// Runs one scenario at a time, the hooks registered first: registering type attributes is not
/// thread-safe in the runtime, and the scenarios share the keys' failure switches.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static HOOKS: std::sync::Once = std::sync::Once::new();
    let guard = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    HOOKS.call_once(|| {
        register_key_hooks(ObjectRef::new(HookedKey { v: 0 }).type_index());
        register_sleepy_hooks(ObjectRef::new(SleepyKey { v: 0 }).type_index());
        register_cross_hooks(ObjectRef::new(CrossKey { v: 0 }).type_index());
    });
    guard
}

/// A dict key whose hooks are registered by the SDK (`#[ffi(type_attr = ..)]`); its hash fails
/// for the key `FAIL_HASH_OF` names.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.FallibleKey")]
#[repr(C)]
pub struct FallibleKey {
    pub v: i64,
}

static FAIL_HASH_OF: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

#[tvm_ffi::ffi_methods]
impl FallibleKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> tvm_ffi::Result<i64> {
        if FAIL_HASH_OF.load(std::sync::atomic::Ordering::SeqCst) == self.v {
            return Err(tvm_ffi::Error::new("ValueError", "no hash for this key"));
        }
        Ok(self.v)
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<FallibleKey>) -> bool {
        self.v == other.v
    }
}

#[test]
fn a_key_hook_failing_while_the_runtime_rebuilds_a_table_frees_nothing() {
    let _serial = serial();
    use std::sync::atomic::Ordering::SeqCst;
    // A growing dict is rebuilt by the runtime, which moves its entries to a new table one by
    // one, hashing each. An error raised for the third entry unwound the new table, releasing
    // the two entries already moved, which the old table (kept) still held: keys freed while
    // stored (a use after free, then a double free). A key's hash is now its hook's first
    // answer, cached: the rebuild runs no user code.
    let keys: Vec<ObjectRef<FallibleKey>> = (0..200)
        .map(|v| ObjectRef::new(FallibleKey { v }))
        .collect();
    let dict: Dict<Any, Any> = Dict::default();
    let mut failed = Vec::new();
    for key in &keys {
        if key.v == 3 {
            FAIL_HASH_OF.store(2, SeqCst);
        }
        if let Err(err) = dict.insert(key.clone().into_any(), key.v.into_any()) {
            failed.push(err.message().to_owned());
        }
    }
    // Each key is held by `keys` and by the dict, once.
    for key in &keys {
        assert_eq!(key.strong_count(), 2, "key {}", key.v);
    }
    assert_eq!(failed, Vec::<String>::new());
    assert_eq!(dict.len(), 200);
    for key in &keys {
        let found = dict.get(key.clone().into_any());
        assert_eq!(found.map(|v| v.cast::<i64>().unwrap()), Some(key.v));
    }
    // A key never hashed before whose hook fails: the lookup and the write raise.
    let fresh = ObjectRef::new(FallibleKey { v: 2 });
    assert_eq!(
        dict.try_get(fresh.clone().into_any())
            .unwrap_err()
            .message(),
        "no hash for this key"
    );
    let err = dict.insert(fresh.into_any(), 0i64.into_any()).unwrap_err();
    assert_eq!(err.message(), "no hash for this key");
    FAIL_HASH_OF.store(-1, SeqCst);
    drop(dict);
    for key in &keys {
        assert_eq!(key.strong_count(), 1, "key {}", key.v);
    }
}

/// A dict key whose SDK-registered hash hook answers differently at every call.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.DriftingKey")]
#[repr(C)]
pub struct DriftingKey {
    pub v: i64,
}

static DRIFT: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

#[tvm_ffi::ffi_methods]
impl DriftingKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        DRIFT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<DriftingKey>) -> bool {
        self.v == other.v
    }
}

#[test]
fn a_key_hash_that_changes_between_calls_is_taken_once() {
    let _serial = serial();
    // A dense table finds an entry's predecessor (to erase it, or to move it out of another
    // chain) by hashing its key again and walking that chain: a hash that changed walked off
    // the chain's end (a wild read). The runtime gets each key's first hash at every call.
    let keys: Vec<ObjectRef<DriftingKey>> = (0..300)
        .map(|v| ObjectRef::new(DriftingKey { v }))
        .collect();
    let dict: Dict<Any, Any> = Dict::default();
    for round in 0..3 {
        for key in &keys {
            dict.insert(key.clone().into_any(), (key.v + round).into_any())
                .unwrap();
        }
        assert_eq!(dict.len(), 300);
        for key in &keys {
            let found = dict.get(key.clone().into_any());
            assert_eq!(found.map(|v| v.cast::<i64>().unwrap()), Some(key.v + round));
        }
        for key in keys.iter().filter(|key| key.v % 3 != 0) {
            let removed = dict.remove(key.clone().into_any()).unwrap();
            assert_eq!(
                removed.map(|v| v.cast::<i64>().unwrap()),
                Some(key.v + round)
            );
        }
        assert_eq!(dict.len(), 100);
    }
}

/// A dict key whose SDK-registered hooks read and write the dict in `CROSS_OTHER`.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.CrossWriteKey")]
#[repr(C)]
pub struct CrossWriteKey {
    pub v: i64,
    pub side: i64,
}

thread_local! {
    static CROSS_OTHER: std::cell::RefCell<Option<Dict<Any, Any>>> = const { std::cell::RefCell::new(None) };
}

fn touch_cross_other(side: i64) {
    CROSS_OTHER.with(|other| {
        if let Some(other) = other.borrow().as_ref() {
            std::hint::black_box(other.len());
            std::hint::black_box(other.get(12345i64));
            // Refused (a cycle of waits, or a write inside the runtime's write) or not: the
            // hook goes on either way.
            let _ = other.insert((side * 1000 + 7).into_any(), 1i64.into_any());
        }
    });
}

#[tvm_ffi::ffi_methods]
impl CrossWriteKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        touch_cross_other(self.side);
        self.v
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<CrossWriteKey>) -> bool {
        touch_cross_other(self.side);
        self.v == other.v
    }
}

#[test]
fn writes_whose_registered_hooks_write_each_others_dict_free_nothing() {
    let _serial = serial();
    // Two threads, two dicts; the hooks of each dict's keys write the other dict. The runtime
    // runs them inside its writes, under the dict's lock; two such writes waiting for each
    // other are refused (in a hook), and a refusal while the runtime rebuilt a table freed
    // keys the table still held (seen under AddressSanitizer). Repeated: the tables are
    // rebuilt at different moments each round.
    finishes_in_time("registered hooks writing each other's dict", || {
        for _round in 0..40 {
            let (a, b): (Dict<Any, Any>, Dict<Any, Any>) = (Dict::default(), Dict::default());
            std::thread::scope(|scope| {
                for (side, mine, theirs) in [(0, &a, &b), (1, &b, &a)] {
                    scope.spawn(move || {
                        CROSS_OTHER.with(|slot| *slot.borrow_mut() = Some(theirs.clone()));
                        let mut kept = Vec::new();
                        for i in 0..400_i64 {
                            let key = ObjectRef::new(CrossWriteKey { v: i % 64, side });
                            if let Err(err) = mine.insert(key.clone().into_any(), i.into_any()) {
                                assert_eq!(
                                    err.kind().as_str(),
                                    "RuntimeError",
                                    "{}",
                                    err.message()
                                );
                            }
                            let _ = mine.get(key.clone().into_any());
                            if i % 5 == 0 {
                                let _ = mine.remove(key.clone().into_any());
                            }
                            kept.push(key);
                        }
                        CROSS_OTHER.with(|slot| *slot.borrow_mut() = None);
                        // Every entry left is a live key of this side, or the other side's
                        // integer.
                        for (key, _) in mine.snapshot().unwrap() {
                            if let Ok(key) = key.cast::<ObjectRef<CrossWriteKey>>() {
                                assert_eq!(key.side, side);
                            }
                        }
                    });
                }
            });
        }
    });
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

#[test]
fn lookups_whose_hooks_read_another_dict_do_not_deadlock() {
    let _serial = serial();
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

#[test]
fn writes_whose_hooks_read_another_dict_do_not_deadlock() {
    let _serial = serial();
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

#[test]
fn a_key_hook_that_writes_the_dict_being_written_is_refused() {
    let _serial = serial();
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

#[test]
fn a_thread_waiting_for_a_container_lock_sleeps() {
    let _serial = serial();
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

/// A dict key with trailing items (`ObjectRef::new_with_items`) and an SDK-registered hash:
/// both marks live in the header's padding word, beside the construction state.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.ItemsKey")]
#[repr(C)]
pub struct ItemsKey {
    pub v: i64,
}

impl tvm_ffi::object::ObjectWithItems for ItemsKey {
    type Item = u64;
}

#[tvm_ffi::ffi_methods]
impl ItemsKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        // Keys from 1000 on hash with many bits set, the others with few: the cached hash and
        // the items' mark must not read as each other.
        if self.v >= 1000 {
            !self.v
        } else {
            self.v
        }
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<ItemsKey>) -> bool {
        self.v == other.v
    }
}

#[test]
fn a_key_with_trailing_items_keeps_them_and_its_cached_hash() {
    let _serial = serial();
    let with_items: Vec<ObjectRef<ItemsKey>> = (0..50)
        .map(|v| ObjectRef::new_with_items(ItemsKey { v }, [v as u64, u64::MAX, 7]))
        .collect();
    let without: Vec<ObjectRef<ItemsKey>> = (1000..1050)
        .map(|v| ObjectRef::new(ItemsKey { v }))
        .collect();
    let dict: Dict<Any, Any> = Dict::default();
    for round in 0..2 {
        for key in with_items.iter().chain(&without) {
            dict.insert(key.clone().into_any(), (key.v + round).into_any())
                .unwrap();
        }
        assert_eq!(dict.len(), 100);
        for key in &with_items {
            assert_eq!(key.items(), &[key.v as u64, u64::MAX, 7]);
        }
        for key in &without {
            assert!(key.items().is_empty());
        }
        for key in with_items.iter().chain(&without) {
            let found = dict.get(key.clone().into_any());
            assert_eq!(found.map(|v| v.cast::<i64>().unwrap()), Some(key.v + round));
        }
    }
    for key in with_items.iter().chain(&without) {
        assert!(dict.remove(key.clone().into_any()).unwrap().is_some());
    }
    assert_eq!(dict.len(), 0);
}

/// A dict key whose SDK-registered equality fails from the `EQ_FAIL_FROM`-th call of its hook
/// on (counted in `EQ_CALLS`); its hash is the same for every key, so that every key of the
/// type is compared with every other.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.EqFailKey")]
#[repr(C)]
pub struct EqFailKey {
    pub v: i64,
}

static EQ_CALLS: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);
/// Calls numbered above this fail; -1: none does.
static EQ_FAIL_FROM: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(-1);

#[tvm_ffi::ffi_methods]
impl EqFailKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        7
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<EqFailKey>) -> tvm_ffi::Result<bool> {
        use std::sync::atomic::Ordering::SeqCst;
        let call = EQ_CALLS.fetch_add(1, SeqCst) + 1;
        let from = EQ_FAIL_FROM.load(SeqCst);
        if from >= 0 && call > from {
            return Err(tvm_ffi::Error::new(
                "ValueError",
                format!("EqFailKey cannot compare {} with {}", self.v, other.v),
            ));
        }
        Ok(self.v == other.v)
    }
}

/// The number of equality hook calls `f` makes.
fn eq_calls_of(f: impl FnOnce()) -> i64 {
    use std::sync::atomic::Ordering::SeqCst;
    EQ_CALLS.store(0, SeqCst);
    f();
    EQ_CALLS.load(SeqCst)
}

#[test]
fn a_failing_equal_hook_is_an_error_of_the_rust_write_and_lookup() {
    let _serial = serial();
    use std::sync::atomic::Ordering::SeqCst;
    let keys: Vec<ObjectRef<EqFailKey>> = (0..3).map(|v| ObjectRef::new(EqFailKey { v })).collect();
    let dict: Dict<Any, Any> = Dict::default();
    for key in &keys {
        dict.insert(key.clone().into_any(), (10 * key.v).into_any())
            .unwrap();
    }
    // A key equal (by value) to `keys[1]`. Rust's own lookup before the write compares it
    // with the entries (the hook answers), then the runtime's write compares it again: the
    // hook fails there, where the runtime cannot take an error.
    let twin = ObjectRef::new(EqFailKey { v: 1 });
    let lookup_calls = eq_calls_of(|| {
        assert_eq!(
            dict.get(twin.clone().into_any())
                .map(|v| v.cast::<i64>().unwrap()),
            Some(10)
        );
    });
    assert!(lookup_calls >= 1, "{lookup_calls}");
    EQ_CALLS.store(0, SeqCst);
    EQ_FAIL_FROM.store(lookup_calls, SeqCst);
    let err = dict
        .insert(twin.clone().into_any(), 11i64.into_any())
        .unwrap_err();
    EQ_FAIL_FROM.store(-1, SeqCst);
    assert!(
        EQ_CALLS.load(SeqCst) > lookup_calls,
        "the runtime's write ran the hook"
    );
    assert_eq!(err.kind().as_str(), "ValueError");
    assert!(
        err.message()
            .starts_with("a key's `__any_equal__` failed while the runtime changed the container"),
        "{}",
        err.message()
    );
    assert!(
        err.message()
            .ends_with(": EqFailKey cannot compare 1 with 0")
            || err
                .message()
                .ends_with(": EqFailKey cannot compare 0 with 1"),
        "{}",
        err.message()
    );
    // The write took effect with the keys taken as unequal (as documented): the twin was
    // added beside `keys[1]`, which kept its value. Every key is held once by the dict.
    assert_eq!(dict.len(), 4);
    for key in &keys {
        assert_eq!(key.strong_count(), 2, "key {}", key.v);
        let found = dict
            .get(key.clone().into_any())
            .map(|v| v.cast::<i64>().unwrap());
        assert_eq!(found, Some(10 * key.v), "key {}", key.v);
    }
    assert_eq!(twin.strong_count(), 2);
    let mut stored: Vec<(i64, i64)> = dict
        .snapshot()
        .unwrap()
        .into_iter()
        .map(|(k, v)| {
            (
                k.cast::<ObjectRef<EqFailKey>>().unwrap().v,
                v.cast::<i64>().unwrap(),
            )
        })
        .collect();
    stored.sort();
    assert_eq!(stored, [(0, 0), (1, 10), (1, 11), (2, 20)]);

    // A lookup whose comparison fails: `try_get` returns the hook's error, `get` answers "not
    // found", `contains_key` false; the dict is unchanged.
    let probe = ObjectRef::new(EqFailKey { v: 2 });
    EQ_FAIL_FROM.store(0, SeqCst);
    let err = dict.try_get(probe.clone().into_any()).unwrap_err();
    assert_eq!(err.kind().as_str(), "ValueError");
    assert!(
        err.message().starts_with("EqFailKey cannot compare "),
        "{}",
        err.message()
    );
    assert_eq!(dict.get(probe.clone().into_any()), None);
    assert!(!dict.contains_key(probe.clone().into_any()));
    // A write whose own lookup fails first changes nothing.
    let err = dict
        .insert(probe.clone().into_any(), 0i64.into_any())
        .unwrap_err();
    assert!(
        err.message().starts_with("EqFailKey cannot compare "),
        "{}",
        err.message()
    );
    EQ_FAIL_FROM.store(-1, SeqCst);
    assert_eq!(dict.len(), 4);
    assert_eq!(probe.strong_count(), 1);

    // `Map::new` and `Dict::new` compare the given keys in the runtime: a failure there is the
    // error returned, and nothing is built (the keys are released).
    let pairs = || {
        [
            (keys[0].clone().into_any(), 0i64.into_any()),
            (probe.clone().into_any(), 1i64.into_any()),
        ]
    };
    EQ_FAIL_FROM.store(0, SeqCst);
    let map_err = tvm_ffi::Map::<Any, Any>::new(pairs()).unwrap_err();
    let dict_err = Dict::<Any, Any>::new(pairs()).unwrap_err();
    EQ_FAIL_FROM.store(-1, SeqCst);
    for err in [&map_err, &dict_err] {
        assert_eq!(err.kind().as_str(), "ValueError");
        assert!(
            err.message().starts_with(
                "a key's `__any_equal__` failed while the runtime built the container, where \
                 it cannot take an error; nothing was built: EqFailKey cannot compare "
            ),
            "{}",
            err.message()
        );
    }
    assert_eq!(probe.strong_count(), 1);
    assert_eq!(keys[0].strong_count(), 2);
    // With the hook answering, both build.
    assert_eq!(tvm_ffi::Map::<Any, Any>::new(pairs()).unwrap().len(), 2);
    assert_eq!(Dict::<Any, Any>::new(pairs()).unwrap().len(), 2);

    drop(dict);
    for key in keys.iter().chain([&twin, &probe]) {
        assert_eq!(key.strong_count(), 1, "key {}", key.v);
    }
}

/// A dict key whose equality hook (registered the documented way) writes another dict: a key
/// of level 1 inserts into `NESTED`'s second dict, whose level-2 keys insert into the first.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.NestedWriteKey")]
#[repr(C)]
pub struct NestedWriteKey {
    pub v: i64,
    pub level: i64,
}

/// Two dicts of one lock stripe.
type DictPair = (Dict<Any, Any>, Dict<Any, Any>);

thread_local! {
    /// The two dicts, while the hooks are armed.
    static NESTED: std::cell::RefCell<Option<DictPair>> = const { std::cell::RefCell::new(None) };
    /// Per level-1 hook call: how many inserts into the first dict (made two levels below it)
    /// were refused and how many went through.
    static NESTED_OUTCOMES: std::cell::RefCell<Vec<(usize, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[tvm_ffi::ffi_methods]
impl NestedWriteKey {
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        0
    }
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<NestedWriteKey>) -> bool {
        let dicts = NESTED.with(|slot| slot.borrow().clone());
        if let Some((a, b)) = dicts {
            match self.level {
                1 => {
                    NESTED_OUTCOMES.with(|o| o.borrow_mut().push((0, 0)));
                    let key = ObjectRef::new(NestedWriteKey { v: 2, level: 2 });
                    let _ = b.insert(key.into_any(), 0i64.into_any());
                }
                _ => {
                    for i in 1000..1256_i64 {
                        let refused = a.insert(i.into_any(), i.into_any()).is_err();
                        NESTED_OUTCOMES.with(|o| {
                            if let Some(last) = o.borrow_mut().last_mut() {
                                if refused {
                                    last.0 += 1;
                                } else {
                                    last.1 += 1;
                                }
                            }
                        });
                    }
                }
            }
        }
        self.v == other.v
    }
}

/// The stripe of the container lock a dict hashes to (as `base::lock` picks it).
fn stripe_of(dict: &Dict<Any, Any>) -> usize {
    (dict.as_object_ref().as_raw().as_ptr() as usize >> 4) % 64
}

#[test]
fn a_write_nested_two_levels_into_the_dict_being_written_is_refused() {
    let _serial = serial();
    // Two dicts on one lock stripe (the lock records the writes in progress per stripe).
    let mut made: Vec<Dict<Any, Any>> = Vec::new();
    let (a, b) = loop {
        let next = Dict::default();
        if let Some(twin) = made.iter().find(|d| stripe_of(d) == stripe_of(&next)) {
            break (twin.clone(), next);
        }
        made.push(next);
    };
    let key = |v, level| ObjectRef::new(NestedWriteKey { v, level }).into_any();
    a.insert(key(1, 1), 1i64.into_any()).unwrap();
    b.insert(key(1, 2), 1i64.into_any()).unwrap();
    NESTED.with(|slot| *slot.borrow_mut() = Some((a.clone(), b.clone())));
    // The runtime compares the new key with the one of the same hash inside its write into
    // `a`: the hook writes `b`, whose hook writes `a` while the runtime still walks it.
    a.insert(key(2, 1), 2i64.into_any()).unwrap();
    NESTED.with(|slot| *slot.borrow_mut() = None);
    let outcomes = NESTED_OUTCOMES.with(|o| std::mem::take(&mut *o.borrow_mut()));
    // A level-1 call that saw a refusal ran inside the write into `a` (a Rust lookup runs the
    // hooks outside it too, where writes go through): there, every write into `a` is refused.
    assert!(
        outcomes.iter().any(|&(refused, _)| refused > 0),
        "{outcomes:?}"
    );
    for &(refused, accepted) in &outcomes {
        assert!(refused == 0 || accepted == 0, "{outcomes:?}");
    }
    assert_eq!(a.get(key(2, 1)).map(|v| v.cast::<i64>().unwrap()), Some(2));
}
