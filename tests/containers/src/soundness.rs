//! Types for the soundness regressions of `tests/python/test_soundness.py`: a parent with a
//! method, a child with a required object field, a child with Rust-only (`skip`) fields, and
//! layouts that Python subclasses extend.
use tvm_ffi::{ffi_methods, Any, Array, Object, ObjectRef, Rw, Shape};

/// A parent type with a method that dereferences its receiver.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Base")]
#[repr(C)]
pub struct Base {
    /// An id.
    #[ffi(default = 0)]
    pub id: i64,
}

#[ffi_methods]
impl Base {
    /// The id (dereferences the object as a `Base`).
    pub fn get_id(&self) -> i64 {
        self.id
    }
}

/// A child with a required object field (unset in an object the creator makes).
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Node")]
#[repr(C)]
pub struct Node {
    /// The parent's payload.
    #[ffi(base)]
    pub base: Base,
    /// A required child.
    pub child: ObjectRef<Base>,
}

#[ffi_methods]
impl Node {
    /// The child's id (dereferences the object as a `Node`).
    pub fn child_id(&self) -> i64 {
        self.child.id
    }
}

/// A child with Rust-only state, which an instance allocated by Python never initialises.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.WithSkip")]
#[repr(C)]
pub struct WithSkip {
    /// The parent's payload.
    #[ffi(base)]
    pub base: Base,
    /// Rust-only.
    #[ffi(skip)]
    pub cache: Box<i64>,
}

#[ffi_methods]
impl WithSkip {
    /// Reads the Rust-only state.
    pub fn cached(&self) -> i64 {
        *self.cache
    }
}

/// Optional object fields: nullable 8-byte pointers, which must report an object static type
/// index (a Python subclass's shallow copy copies a field reported as "any" as a 16-byte `Any`).
#[derive(Object, Clone)]
#[ffi_type(key = "rs_soundness.WithOptional")]
#[repr(C)]
pub struct WithOptional {
    /// An optional array.
    #[ffi(default = None)]
    pub items: Option<Array<i64>>,
    /// An optional shape.
    #[ffi(default = None)]
    pub shape: Option<Shape>,
}

/// A type with a Rust-only field, also defined (identically, as far as its source shows) by
/// tests/layout-variants: another build, whose skip field's type may have another shape under
/// the same name and size, so the two never share the key.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Cached")]
#[repr(C)]
pub struct Cached {
    /// An id.
    pub id: i64,
    /// Rust-only.
    #[ffi(skip)]
    pub scratch: Vec<u8>,
}

/// A layout that ends in tail padding: 9 bytes of fields in 16.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Padded")]
#[repr(C)]
pub struct Padded {
    /// A number.
    pub x: i64,
    /// A flag, followed by 7 bytes of padding.
    pub flag: bool,
}

#[ffi_methods]
impl Padded {
    /// Reads the payload.
    pub fn describe(&self) -> String {
        format!("{} {}", self.x, self.flag)
    }
}

/// A writable field of any value: written from Python while the object is still open (Rust
/// has not dereferenced it yet), its old value may be a Python object whose `__del__` reads
/// the holder.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Slot")]
#[repr(C)]
pub struct Slot {
    /// Anything.
    #[ffi(rw)]
    pub value: Rw<Any>,
}

/// `Rw` fields holding references (a string, any value), which a Rust thread rewrites while
/// Python copies a `@py_class` subclass instance (the runtime's copy reads them unlocked).
#[derive(Object)]
#[ffi_type(key = "rs_soundness.RwText")]
#[repr(C)]
pub struct RwText {
    /// Rewritten by `rs_soundness.rewrite_in_background`.
    #[ffi(rw)]
    pub s: Rw<tvm_ffi::String>,
    /// Rewritten likewise.
    #[ffi(rw)]
    pub a: Rw<Any>,
}

static REWRITERS: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Rewrites `o.s` and `o.a` on a thread of its own for `millis` milliseconds (safe Rust).
#[tvm_ffi::ffi_func(name = "rs_soundness.rewrite_in_background")]
pub fn rewrite_in_background(o: ObjectRef<RwText>, millis: i64) {
    let handle = std::thread::spawn(move || {
        let end = std::time::Instant::now() + std::time::Duration::from_millis(millis as u64);
        let mut i = 0usize;
        while std::time::Instant::now() < end {
            let text = "y".repeat(40 + i % 60);
            o.s.set(tvm_ffi::String::new(&text));
            o.a.set(Any::new(tvm_ffi::String::new(&text)));
            i += 1;
        }
    });
    REWRITERS.lock().unwrap().push(handle);
}

/// Waits for the rewriting threads.
#[tvm_ffi::ffi_func(name = "rs_soundness.join_rewriters")]
pub fn join_rewriters() {
    let handles = std::mem::take(&mut *REWRITERS.lock().unwrap());
    for handle in handles {
        handle.join().unwrap();
    }
}

/// A dict key whose equality hook fails while `rs_soundness.fail_equal(True)` is in effect;
/// every key hashes alike, so that keys of the type are always compared.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.FailEqKey")]
#[repr(C)]
pub struct FailEqKey {
    /// The value compared.
    pub v: i64,
}

static FAIL_EQUAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[ffi_methods]
impl FailEqKey {
    /// One hash for every key.
    #[ffi(type_attr = "__any_hash__")]
    pub fn any_hash(&self) -> i64 {
        7
    }
    /// Equal values, or an error while failing is on.
    #[ffi(type_attr = "__any_equal__")]
    pub fn any_equal(&self, other: ObjectRef<FailEqKey>) -> tvm_ffi::Result<bool> {
        if FAIL_EQUAL.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(tvm_ffi::Error::new(
                "ValueError",
                format!("FailEqKey cannot compare {} with {}", self.v, other.v),
            ));
        }
        Ok(self.v == other.v)
    }
}

/// Turns the failure of `FailEqKey`'s equality hook on or off.
#[tvm_ffi::ffi_func(name = "rs_soundness.fail_equal")]
pub fn fail_equal(on: bool) {
    FAIL_EQUAL.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// `d[k] = v` written by Rust (`Dict::insert`).
#[tvm_ffi::ffi_func(name = "rs_soundness.dict_set")]
pub fn dict_set(d: tvm_ffi::Dict<Any, Any>, k: Any, v: Any) -> tvm_ffi::Result<()> {
    d.insert(k, v)
}

/// A text field of 16-byte storage, set once in a Python subclass instance.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Label")]
#[repr(C)]
pub struct Label {
    /// The text.
    pub text: tvm_ffi::String,
}

/// Makes `rounds` objects with `new` (a Python subclass's `__ffi_new__`, whose objects start
/// with every field unset) and sets the `text` of each from two threads at once, through the
/// reflected setter. Returns how many objects took both writes (a second write replaced, and
/// released, a reference a concurrent `copy.copy` may have been taking).
#[tvm_ffi::ffi_func(name = "rs_soundness.set_twice_at_once")]
#[allow(unsafe_code)] // `set_field`, under its contract: the claim tested here
pub fn set_twice_at_once(new: tvm_ffi::Function, rounds: i64) -> tvm_ffi::Result<i64> {
    use tvm_ffi::builtin::AnyObject;
    let objects = (0..rounds)
        .map(|_| new.call_as::<ObjectRef<AnyObject>, _>(()))
        .collect::<tvm_ffi::Result<Vec<_>>>()?;
    let start = std::sync::Barrier::new(2);
    let wins = std::sync::atomic::AtomicUsize::new(0);
    let refusals = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let (objects, start, wins, refusals) = (&objects, &start, &wins, &refusals);
            scope.spawn(move || {
                for object in objects {
                    start.wait();
                    let text = tvm_ffi::String::new(&format!(
                        "written by thread {writer}, long enough for the heap"
                    ));
                    // SAFETY: the field's setter is a Rust-defined type's, which synchronises
                    // its writes (the contract of `set_field`).
                    match unsafe { object.set_field("text", text) } {
                        Ok(()) => wins.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                        Err(err) => {
                            assert!(
                                err.message().starts_with("Cannot replace the value"),
                                "{err}"
                            );
                            refusals.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                        }
                    };
                }
            });
        }
    });
    let (wins, refusals) = (wins.into_inner() as i64, refusals.into_inner() as i64);
    assert_eq!(wins + refusals, 2 * rounds);
    Ok(wins - rounds)
}

/// Registers `count` global functions named `{prefix}.{i}` (each returns `i`), on the calling
/// thread: the runtime's table grows, and rehashes, while other libraries may look functions up.
#[tvm_ffi::ffi_func(name = "rs_soundness.register_globals")]
pub fn register_globals(prefix: &str, count: i64) -> tvm_ffi::Result<()> {
    for i in 0..count {
        tvm_ffi::Function::from_typed(move || i)
            .register_global(&format!("{prefix}.{i}"), false)?;
    }
    Ok(())
}

/// A small object: another type's accessors, handed one of these, would reach past its end.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Small")]
#[repr(C)]
pub struct Small {
    /// A number.
    pub x: i64,
}

/// A larger object whose later fields lie past the end of a `Small`.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Big")]
#[repr(C)]
pub struct Big {
    /// Padding up to the fields below.
    pub a: i64,
    /// Likewise.
    pub b: i64,
    /// Read past a `Small`'s end by a `Big` getter.
    pub tags: Array<i64>,
    /// Written past a `Small`'s end by a `Big` setter.
    #[ffi(rw, default = None)]
    pub parent: Rw<Option<ObjectRef<Small>>>,
}

/// A sealed text field, read by Rust as `&str` ...
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Frozen")]
#[repr(C)]
pub struct Frozen {
    /// Read-only once constructed.
    pub name: tvm_ffi::String,
}

/// ... and another type's writable field at the same offset.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.Thawed")]
#[repr(C)]
pub struct Thawed {
    /// Writable from every language.
    #[ffi(rw)]
    pub name: Rw<tvm_ffi::String>,
}

/// A panic payload whose own `Drop` panics.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload's drop panics too");
    }
}

/// An object whose `Drop` panics with a `Bomb`: the deleter that catches the panic must not
/// let the payload's second panic escape into the runtime.
#[derive(Object)]
#[ffi_type(key = "rs_soundness.PanicsTwiceOnDrop")]
#[repr(C)]
pub struct PanicsTwiceOnDrop {
    /// Unused.
    pub x: i64,
}

impl Drop for PanicsTwiceOnDrop {
    fn drop(&mut self) {
        std::panic::panic_any(Bomb);
    }
}

/// `reflection::FieldGetter::new` on any index (safe Rust).
#[tvm_ffi::ffi_func(name = "rs_soundness.field_getter_of_index")]
pub fn field_getter_of_index(index: i64) -> tvm_ffi::Result<()> {
    let index = i32::try_from(index).map_err(|_| tvm_ffi::Error::value_error("index"))?;
    tvm_ffi::reflection::FieldGetter::new(index, "x").map(drop)
}
