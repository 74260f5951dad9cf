//! [`Rw<T>`]: the storage of a field that foreign code may write after construction.
//!
//! A field marked `#[ffi(rw)]` can be assigned from Python (`obj.x = 3`) or C++ (the reflected
//! setter) at any time, on any thread, while Rust code holds `&Point`. A plain `i64` field
//! cannot soundly change under a live `&i64`, so writable fields use this wrapper: Rust reads
//! with [`Rw::get`] (a copy or a new reference) and writes with [`Rw::set`], and the reflected
//! getter and setter access the value the same way.
//!
//! The wrapper has exactly the size, alignment and bit layout of `T` (`repr(transparent)`), so
//! the object's layout is the one a C++ struct with a plain `T` member would have.
//!
//! - A *scalar* (an integer, `f32`/`f64`, `bool`, [`DataType`](crate::DataType),
//!   [`Device`](crate::Device)) stored at an address aligned to its size is read and written
//!   with one relaxed atomic load or store of that size: no lock, the cost of a plain field
//!   read, never a torn value. (A scalar at a less aligned address, possible for the 2-aligned
//!   `DataType` and 4-aligned `Device` in a foreign layout, takes the lock.)
//! - Any other value (strings, objects) takes a lock only to take a bit copy of the value (a
//!   *snapshot*) or to swap it, never while user code runs: a reader registers with the lock,
//!   releases it, then clones (or converts) its snapshot; a write that replaces a value while
//!   readers hold snapshots leaves the old value to the last of them, which drops it after
//!   the lock is released. The lock is not stored in the object: a small process-wide table of
//!   parking locks (one table shared by every Rust library in the process, see
//!   `data::lock`) is indexed by the field's address.
//!
//! Both paths are chosen per field from the value's type and address, so every Rust accessor
//! of a field (in any library) takes the same one.
//!
//! **What the lock does not cover.** Only Rust's accessors (and the reflected getter and
//! setter, which are Rust's) take it. The runtime reads fields directly from the object's
//! memory in one place: the shallow copy it registers for a Python-defined class
//! (`@py_class`, `copy.copy`, `dataclasses.replace`) copies every field of the type chain,
//! the `Rw` fields of a Rust parent included, by copying the stored value and taking a
//! reference, without a getter. So no write may race it: Rust refuses an instance of a Python
//! subclass of a type with an `Rw` field holding a reference (no `&T` of it, so no
//! [`Rw::set`]), and the reflected setter never replaces a reference such an instance holds
//! (it is set once, at construction). Scalar fields are copied whole.
use std::cell::UnsafeCell;
use std::fmt;
use std::sync::atomic::Ordering;

use crate::base::lock::FieldGuard;

/// A field value that foreign code may replace at any time: the storage of `#[ffi(rw)]` fields.
///
/// It has exactly the size, alignment and bit layout of `T` (C++ sees a plain `T`). Rust reads
/// with [`Rw::get`] (a copy, or a new reference) and writes with [`Rw::set`]; the reflected
/// getter and setter access it the same way (a relaxed atomic for an aligned scalar, else an
/// address-striped lock), so no value is ever read torn.
///
/// ```
/// use tvm_ffi::Rw;
/// let x = Rw::new(3_i64);
/// assert_eq!(x.get(), 3);
/// x.set(4);
/// assert_eq!(x.get(), 4);
/// ```
#[repr(transparent)]
pub struct Rw<T> {
    value: UnsafeCell<T>,
}

// SAFETY: every access to `value` holds the address-indexed lock (like `Mutex<T>`), except
// the readers' snapshots: bit copies of one value that several threads may clone at once
// (shared `&T` across threads: `T: Sync`) and whose original the last of them may drop
// (`T: Send`).
unsafe impl<T: Send + Sync> Sync for Rw<T> {}

impl<T> Rw<T> {
    /// Wraps an initial value.
    pub const fn new(value: T) -> Self {
        Rw {
            value: UnsafeCell::new(value),
        }
    }

    /// Unwraps the value (no other reference can exist: `self` is owned).
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// Mutable access through an exclusive borrow (no lock needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T: 'static> Rw<T> {
    /// Stores a new value. The old one is dropped after the lock is released, or, while
    /// readers clone snapshots of it, by the last of them.
    pub fn set(&self, value: T) {
        let cell = self.value.get();
        if let Some(width) = scalar_width::<T>(cell) {
            // SAFETY: a scalar of `width` bytes at an address aligned to `width` (checked);
            // every access to this field is atomic (the choice depends only on type and
            // address), and every bit pattern written is a valid `T`.
            drop(unsafe { atomic_swap(cell, value, width) });
            return;
        }
        let old = {
            let guard = FieldGuard::lock(cell as *const std::ffi::c_void);
            // SAFETY: the stripe lock serialises every write of this cell and every snapshot.
            let old = unsafe { std::mem::replace(&mut *cell, value) };
            guard.bury_if_read(old)
        };
        drop(old);
    }

    /// Runs `f` on the current value: a copy of a scalar, else a snapshot (a bit copy taken
    /// under the lock, which stays valid until `f` returns: see the module docs). No user
    /// code runs under the lock.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let cell = self.value.get();
        if let Some(width) = scalar_width::<T>(cell) {
            // SAFETY: as in `set`; the copy is a plain scalar with no destructor.
            let copy = std::mem::ManuallyDrop::new(unsafe { atomic_load(cell, width) });
            return f(&copy);
        }
        self.with_snapshot(f)
    }

    /// [`Rw::with`] of a value that is not an aligned scalar (kept apart so that the scalar
    /// path inlines to one load).
    #[inline(never)]
    fn with_snapshot<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        let cell = self.value.get();
        let (snapshot, _reader) = {
            let guard = FieldGuard::lock(cell as *const std::ffi::c_void);
            // SAFETY: read under the lock; never dropped (the original owns the value), and
            // valid while this reader is counted: a write meanwhile buries the original
            // until the last reader is done.
            let snapshot = std::mem::ManuallyDrop::new(unsafe { std::ptr::read(cell) });
            (snapshot, guard.enter_reader())
        };
        f(&snapshot)
    }
}

impl<T: Clone + 'static> Rw<T> {
    /// Replaces the value, returning the old one (a clone of it while other threads read it:
    /// their snapshots keep the original until they are done).
    pub fn replace(&self, value: T) -> T {
        let cell = self.value.get();
        if let Some(width) = scalar_width::<T>(cell) {
            // SAFETY: as in `set`.
            return unsafe { atomic_swap(cell, value, width) };
        }
        let (snapshot, _reader) = {
            let guard = FieldGuard::lock(cell as *const std::ffi::c_void);
            // SAFETY: the stripe lock serialises every write of this cell and every snapshot.
            let old = unsafe { std::mem::replace(&mut *cell, value) };
            if !guard.has_readers() {
                return old;
            }
            // SAFETY: a bit copy of `old`, kept valid by this reader until the clone below;
            // the original goes to the last reader.
            let snapshot = std::mem::ManuallyDrop::new(unsafe { std::ptr::read(&old) });
            let reader = guard.enter_reader();
            guard.bury(old, &reader);
            (snapshot, reader)
        };
        T::clone(&snapshot)
    }
}

/// The byte width of `T` when it is a plain scalar stored at `at` aligned to its size: such a
/// field is accessed atomically, without the lock. Type identities are compile-time constants,
/// so this folds to a constant and one alignment test.
#[inline(always)]
fn scalar_width<T: 'static>(at: *const T) -> Option<usize> {
    use crate::base::value::{DataType, Device};
    use std::any::TypeId;
    let id = TypeId::of::<T>();
    let scalar = [
        TypeId::of::<i8>(),
        TypeId::of::<i16>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
        TypeId::of::<isize>(),
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
        TypeId::of::<bool>(),
        TypeId::of::<DataType>(),
        TypeId::of::<Device>(),
    ]
    .contains(&id);
    let width = std::mem::size_of::<T>();
    (scalar && matches!(width, 1 | 2 | 4 | 8) && (at as usize) % width == 0).then_some(width)
}

/// Reads a scalar atomically.
///
/// # Safety
/// `at` is valid for reads of `T`, aligned to `width == size_of::<T>()` (1, 2, 4 or 8), every
/// concurrent access to it is atomic, and `T` is plain data (any bits written by
/// [`atomic_swap`] are a valid `T`).
#[inline(always)]
unsafe fn atomic_load<T>(at: *mut T, width: usize) -> T {
    use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
    // SAFETY: the caller's contract (validity, alignment, atomic-only access).
    unsafe {
        match width {
            1 => std::mem::transmute_copy(&AtomicU8::from_ptr(at.cast()).load(Ordering::Relaxed)),
            2 => std::mem::transmute_copy(&AtomicU16::from_ptr(at.cast()).load(Ordering::Relaxed)),
            4 => std::mem::transmute_copy(&AtomicU32::from_ptr(at.cast()).load(Ordering::Relaxed)),
            _ => std::mem::transmute_copy(&AtomicU64::from_ptr(at.cast()).load(Ordering::Relaxed)),
        }
    }
}

/// Swaps a scalar atomically, returning the previous value.
///
/// # Safety
/// As [`atomic_load`], and valid for writes.
#[inline(always)]
unsafe fn atomic_swap<T>(at: *mut T, value: T, width: usize) -> T {
    use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: the caller's contract; `value` is `width` bytes of plain data, reinterpreted as
    // the unsigned integer of that width and back.
    unsafe {
        match width {
            1 => std::mem::transmute_copy(
                &AtomicU8::from_ptr(at.cast())
                    .swap(std::mem::transmute_copy(&*value), Ordering::Relaxed),
            ),
            2 => std::mem::transmute_copy(
                &AtomicU16::from_ptr(at.cast())
                    .swap(std::mem::transmute_copy(&*value), Ordering::Relaxed),
            ),
            4 => std::mem::transmute_copy(
                &AtomicU32::from_ptr(at.cast())
                    .swap(std::mem::transmute_copy(&*value), Ordering::Relaxed),
            ),
            _ => std::mem::transmute_copy(
                &AtomicU64::from_ptr(at.cast())
                    .swap(std::mem::transmute_copy(&*value), Ordering::Relaxed),
            ),
        }
    }
}

impl<T: Clone> Rw<T> {
    /// A copy of the current value (for objects: a new reference). `T::clone` runs on a
    /// snapshot, after the lock is released: it may do anything.
    #[inline]
    pub fn get(&self) -> T
    where
        T: 'static,
    {
        valid_utf8(self.with(T::clone))
    }
}

/// A string read from a field is checked before Rust sees it as `&str`: the defining library
/// of an `external` type may have stored any bytes there (C++ strings need not be UTF-8).
/// Invalid sequences become U+FFFD. Other values pass through unchanged (the check is a
/// compile-time type comparison).
fn valid_utf8<T: 'static>(value: T) -> T {
    let any: &dyn std::any::Any = &value;
    let Some(s) = any.downcast_ref::<crate::base::value::String>() else {
        return value;
    };
    if std::str::from_utf8(s.as_bytes()).is_ok() {
        return value;
    }
    let repaired = crate::base::value::String::from(
        std::string::String::from_utf8_lossy(s.as_bytes()).as_ref(),
    );
    let mut slot = Some(repaired);
    let slot: &mut dyn std::any::Any = &mut slot;
    slot.downcast_mut::<Option<T>>()
        .and_then(Option::take)
        .expect("T is the string type checked above")
}

impl<T: Clone + 'static> Clone for Rw<T> {
    fn clone(&self) -> Self {
        Rw::new(self.get())
    }
}

impl<T: Default> Default for Rw<T> {
    fn default() -> Self {
        Rw::new(T::default())
    }
}

impl<T> From<T> for Rw<T> {
    fn from(value: T) -> Self {
        Rw::new(value)
    }
}

impl<T: Clone + fmt::Debug + 'static> fmt::Debug for Rw<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl<T: Clone + PartialEq + 'static> PartialEq for Rw<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: Clone + PartialEq + 'static> PartialEq<T> for Rw<T> {
    fn eq(&self, other: &T) -> bool {
        // On a snapshot: `PartialEq` is user code, which never runs under the lock.
        self.with(|v| v == other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on another thread: `None` if it does not finish within 10 s (a hang).
    fn within_seconds<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> Option<R> {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(f());
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(10))
            .ok()
    }

    #[test]
    fn nested_rw_reads_and_writes_without_a_hang() {
        use crate::base::value::String;
        let out = within_seconds(|| {
            let nested = Rw::new(Rw::new(String::from("a string longer than seven")));
            let first = nested.get().get();
            nested.set(Rw::new(String::from("another string, also long")));
            let old = nested.replace(Rw::new(String::from("a third long string value")));
            let scalar = Rw::new(Rw::new(1_i64));
            (first, old.get(), nested.get().get(), scalar.get().get())
        });
        let (first, old, now, scalar) = out.expect("Rw<Rw<T>> hangs");
        assert_eq!(
            (&*first, &*old, &*now, scalar),
            (
                "a string longer than seven",
                "another string, also long",
                "a third long string value",
                1
            )
        );
    }

    #[test]
    fn same_layout_as_inner() {
        assert_eq!(std::mem::size_of::<Rw<i64>>(), 8);
        assert_eq!(std::mem::align_of::<Rw<i32>>(), 4);
        assert_eq!(std::mem::size_of::<Rw<crate::base::value::String>>(), 16);
    }

    #[test]
    fn aligned_scalars_take_the_atomic_path() {
        let x = Rw::new(7_i64);
        assert_eq!(scalar_width::<i64>(x.value.get()), Some(8));
        assert_eq!(x.replace(8), 7);
        assert_eq!(x.get(), 8);
        let b = Rw::new(true);
        b.set(false);
        assert!(!b.get());
        let f = Rw::new(1.5_f32);
        f.set(-2.25);
        assert_eq!(f.get(), -2.25);
        let d = Rw::new(crate::base::value::DataType::float(16));
        d.set(crate::base::value::DataType::int(8).with_lanes(4));
        assert_eq!(d.get(), crate::base::value::DataType::int(8).with_lanes(4));
        // Not scalars: the lock.
        assert_eq!(
            scalar_width::<crate::base::value::String>(std::ptr::null()),
            None
        );
        // A `Device` (4-aligned, 8 bytes) at an address not aligned to 8: the lock.
        let at = 4 as *const crate::base::value::Device;
        assert_eq!(scalar_width::<crate::base::value::Device>(at), None);
    }

    #[test]
    fn concurrent_scalar_writes_are_never_torn() {
        let cell = std::sync::Arc::new(Rw::new(0_i64));
        let writers: Vec<_> = (0..2)
            .map(|t| {
                let cell = cell.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        cell.set(if (i + t) % 2 == 0 { 0 } else { -1 });
                    }
                })
            })
            .collect();
        for _ in 0..20_000 {
            let v = cell.get();
            assert!(v == 0 || v == -1, "torn value {v:#x}");
        }
        for w in writers {
            w.join().unwrap();
        }
    }

    #[test]
    fn a_value_replaced_while_read_is_dropped_by_the_last_reader() {
        use std::sync::{Arc, Barrier, Mutex};
        static DROPPED: Mutex<Vec<u64>> = Mutex::new(Vec::new());
        thread_local! {
            static WAIT_IN_CLONE: std::cell::Cell<Option<Arc<Barrier>>> =
                const { std::cell::Cell::new(None) };
        }
        struct Tracked(Box<u64>);
        impl Clone for Tracked {
            fn clone(&self) -> Self {
                if let Some(barrier) = WAIT_IN_CLONE.with(|slot| slot.take()) {
                    barrier.wait(); // the reader is cloning its snapshot
                    barrier.wait(); // the writer replaced the value meanwhile
                }
                Tracked(Box::new(*self.0))
            }
        }
        impl Drop for Tracked {
            fn drop(&mut self) {
                DROPPED.lock().unwrap().push(*self.0);
            }
        }
        let cell = Arc::new(Rw::new(Tracked(Box::new(1))));
        let barrier = Arc::new(Barrier::new(2));
        let reader = {
            let (cell, barrier) = (cell.clone(), barrier.clone());
            std::thread::spawn(move || {
                WAIT_IN_CLONE.with(|slot| slot.set(Some(barrier)));
                *cell.get().0
            })
        };
        barrier.wait();
        cell.set(Tracked(Box::new(2)));
        // The reader still clones its snapshot of the old value: not dropped yet.
        assert!(!DROPPED.lock().unwrap().contains(&1));
        barrier.wait();
        assert_eq!(reader.join().unwrap(), 1);
        // The reader's clone, then the old value (dropped by the reader on its way out).
        assert_eq!(
            DROPPED.lock().unwrap().iter().filter(|&&v| v == 1).count(),
            2
        );
        assert_eq!(*cell.get().0, 2);
    }

    #[test]
    fn concurrent_writes_and_reads_see_whole_values() {
        let cell = std::sync::Arc::new(Rw::new(crate::base::value::String::from(
            "a much longer string 0",
        )));
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let cell = cell.clone();
                std::thread::spawn(move || {
                    for i in 0..2000 {
                        cell.set(crate::base::value::String::from(format!(
                            "a much longer string {t}-{i}"
                        )));
                        assert!(cell.get().starts_with("a much longer string"));
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        assert!(cell.get().starts_with("a much longer string"));
    }
}
