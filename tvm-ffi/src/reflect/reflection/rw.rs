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
//! - Any other value (strings, objects) takes a lock for a bit copy and a reference count
//!   (a read) or a swap (a write); the old value of a write is dropped after the lock is
//!   released. No user code runs under the lock: `Rw<T>` reads and writes only the types a
//!   reflected field holds ([`FieldValue`]), whose copies run no user code. The lock is not
//!   stored in the object: a small process-wide table of parking locks (shared by every Rust
//!   library in the process, see `base::lock`) is indexed by the field's address.
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

use super::field::{FieldValue, ForeignField, WritableField};
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

// SAFETY: every access to `value` through `&self` holds the address-indexed lock or is one
// atomic access (like `Mutex<T>`): the value moves between threads (`T: Send`) and its
// references are shared (`T: Sync`).
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

/// Reads and writes through `&self`: `T` is a type a reflected field holds (the list is on the
/// `#[derive(Object)]` docs), whose copy runs no user code, so that it can run under the lock.
impl<T> Rw<T> {
    /// Stores a new value; the old one is dropped after the lock is released.
    pub fn set(&self, value: T)
    where
        T: FieldValue,
    {
        drop(self.replace(value));
    }

    /// Replaces the value, returning the old one.
    pub fn replace(&self, value: T) -> T
    where
        T: FieldValue,
    {
        const { assert!(!T::INTERIOR_MUTABLE, "`Rw<Rw<T>>`: one `Rw` is enough") };
        let cell = self.value.get();
        if let Some(width) = scalar_width::<T>(cell) {
            // SAFETY: a scalar of `width` bytes at an address aligned to `width` (checked);
            // every access to this field is atomic (the choice depends only on type and
            // address), and every bit pattern written is a valid `T`.
            return unsafe { atomic_swap(cell, value, width) };
        }
        let _guard = FieldGuard::lock(cell as *const std::ffi::c_void);
        // SAFETY: the stripe lock serialises every access to this cell.
        unsafe { std::mem::replace(&mut *cell, value) }
    }

    /// A copy of the current value (for objects: a new reference).
    #[inline]
    pub fn get(&self) -> T
    where
        T: FieldValue,
    {
        valid_utf8(self.read(T::clone))
    }

    /// `copy` applied to the value: to an atomic copy of an aligned scalar, else to the value
    /// under the lock. `copy` is `Clone::clone` or `FieldValue::load` of a reflected field type
    /// (a bit copy or a reference count): no user code runs under the lock.
    #[inline]
    pub(super) fn read<R>(&self, copy: fn(&T) -> R) -> R
    where
        T: FieldValue,
    {
        const { assert!(!T::INTERIOR_MUTABLE, "`Rw<Rw<T>>`: one `Rw` is enough") };
        let cell = self.value.get();
        if let Some(width) = scalar_width::<T>(cell) {
            // SAFETY: as in `replace`; a plain scalar with no destructor.
            let scalar = std::mem::ManuallyDrop::new(unsafe { atomic_load(cell, width) });
            return copy(&scalar);
        }
        let _guard = FieldGuard::lock(cell as *const std::ffi::c_void);
        // SAFETY: the stripe lock serialises every access to this cell.
        copy(unsafe { &*cell })
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

impl<T: FieldValue> Clone for Rw<T> {
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

impl<T: FieldValue + fmt::Debug> fmt::Debug for Rw<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl<T: FieldValue + PartialEq> PartialEq for Rw<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: FieldValue + PartialEq> PartialEq<T> for Rw<T> {
    fn eq(&self, other: &T) -> bool {
        self.get() == *other
    }
}

// SAFETY: `Rw<T>` is repr(transparent) over `T` (through `UnsafeCell`), so the storage, its
// static index and its unset state are `T`'s.
unsafe impl<T: FieldValue> FieldValue for Rw<T> {
    type Value = T::Value;
    const STATIC_TYPE_INDEX: i32 = T::STATIC_TYPE_INDEX;
    const INTERIOR_MUTABLE: bool = true;
    const NESTED_INTERIOR_MUTABILITY: bool = T::INTERIOR_MUTABLE;
    const MAY_BE_UNSET: bool = T::MAY_BE_UNSET;
    fn empty() -> Option<Self> {
        T::empty().map(Rw::new)
    }
    fn load(&self) -> T::Value {
        self.read(T::load)
    }
    fn wrap(value: T::Value) -> Self {
        Rw::new(T::wrap(value))
    }
    fn type_str() -> std::string::String {
        T::type_str()
    }
    fn store(&self, value: T::Value) {
        self.set(T::wrap(value))
    }
    unsafe fn is_unset(field: *const Self) -> bool {
        // SAFETY: same storage.
        unsafe { T::is_unset(field as *const T) }
    }
    unsafe fn write_unset(field: *mut Self) {
        // SAFETY: same storage.
        unsafe { T::write_unset(field as *mut T) }
    }
}

impl<T> WritableField for Rw<T> {}
impl<T> ForeignField for Rw<T> {}

#[cfg(test)]
mod tests {
    use super::*;

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
