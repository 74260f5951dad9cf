//! Building an `ffi.Array` in Rust memory: one allocation laid out as C++
//! `ArrayObj::Empty` lays one out, each item converted straight into its slot (no call into
//! the runtime, no vector of `Any`s in between).
//!
//! The loop is counted over a `Vec` (no end test per item) and stores two values at once: with
//! AVX one 32-byte store per pair, since one store per cycle bounds it otherwise. Any other
//! iterator is first moved into a `Vec` (a plain copy, which the standard library vectorises
//! for exact-size iterators; converting while pulling items one by one ran 1.4x slower).
use crate::abi::sys::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::base::error::Result;
use crate::base::object::builtin::ArrayObj;
use crate::base::object::{try_alloc_inplace_array, ObjectRef};
use crate::base::value::TryIntoAny;

/// A new `ffi.Array` of the converted `items`.
pub(super) fn array_from_iter<T: TryIntoAny>(
    mut items: impl Iterator<Item = T>,
) -> Result<ObjectRef<ArrayObj>> {
    let mut all: Vec<T> = Vec::new();
    let (low, high) = items.size_hint();
    // A promise beyond memory is a `MemoryError`, before anything is pulled.
    all.try_reserve_exact(low)?;
    if high == Some(low) {
        // No more than reserved: the vector never grows here, whatever the iterator's hint
        // says meanwhile (growing on a lying hint could end the process).
        all.extend(items.by_ref().take(low));
    }
    // What is left: an iterator without an exact size, or one that outgrew its promise.
    for item in items {
        if all.len() == all.capacity() {
            all.try_reserve(1)?;
        }
        all.push(item);
    }
    array_from_vec(all)
}

/// A new `ffi.Array` of the converted values of a `Vec`.
pub(super) fn array_from_vec<T: TryIntoAny>(items: Vec<T>) -> Result<ObjectRef<ArrayObj>> {
    // Dropped on an error or a panic below, the array releases the values written so far.
    let (array, cell, data) = unfilled_array(items.len())?;
    // SAFETY: `data` has `items.len()` slots, none written yet; `cell` is the array's, which
    // no one else reaches yet.
    unsafe { fill_slots(items, cell, data) }?;
    Ok(array)
}

/// A new `ffi.Array` with room for `capacity` values and none written (size 0), with its cell
/// and its first slot. Dropped, it releases the values its cell's `size` counts.
fn unfilled_array(
    capacity: usize,
) -> Result<(ObjectRef<ArrayObj>, *mut TVMFFISeqCell, *mut TVMFFIAny)> {
    // SAFETY: `ffi.Array`'s payload is its sequence cell; the closure writes the cell (size 0,
    // capacity `capacity`, data at the element slots, no data deleter): the array's `release`
    // reads the first `size` elements only, which the caller writes before `size` counts them.
    let ptr = unsafe {
        try_alloc_inplace_array::<ArrayObj>(ti::kTVMFFIArray, capacity, |payload, elems| {
            payload.write(ArrayObj {
                seq: TVMFFISeqCell {
                    data: elems as *mut std::ffi::c_void,
                    size: 0,
                    capacity: capacity as i64,
                    data_deleter: None,
                },
            });
        })
    }?;
    // SAFETY: a fresh array object with one reference.
    let array: ObjectRef<ArrayObj> = unsafe { ObjectRef::from_raw(ptr) };
    // The cell, reached through the object pointer: no reference to it is alive meanwhile, and
    // no one else can reach the object yet.
    let cell = (ptr.as_ptr() as *mut u8).wrapping_add(std::mem::size_of::<TVMFFIObject>())
        as *mut TVMFFISeqCell;
    // SAFETY: as above; the cell's `data` points at `capacity` slots.
    let data = unsafe { (*cell).data as *mut TVMFFIAny };
    Ok((array, cell, data))
}

/// Converts the items of a `Vec` into the slots `data[..items.len()]`, counting each value
/// written in the cell's `size` (also when a conversion fails or unwinds, so that the array
/// releases them).
///
/// # Safety
/// `data` is valid for writes of `items.len()` values, none written yet; `cell` is the
/// array's cell, which nothing else reaches meanwhile.
#[inline]
unsafe fn fill_slots<T: TryIntoAny>(
    items: Vec<T>,
    cell: *mut TVMFFISeqCell,
    data: *mut TVMFFIAny,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX; the caller's contract.
        return unsafe { fill_slots_avx(items, cell, data) };
    }
    // SAFETY: the caller's contract.
    unsafe { fill_slots_with::<TwoStores, T>(items, cell, data) }
}

/// [`fill_slots`] compiled for AVX.
///
/// # Safety
/// As for [`fill_slots`], on a CPU with AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn fill_slots_avx<T: TryIntoAny>(
    items: Vec<T>,
    cell: *mut TVMFFISeqCell,
    data: *mut TVMFFIAny,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { fill_slots_with::<OneAvxStore, T>(items, cell, data) }
}

/// How far [`fill_slots_with`] got: the vector's items from `taken` on are still its own, the
/// first `written` slots hold values. On every exit it drops the items left, frees the buffer,
/// and counts the values into the cell's `size`.
struct Progress<T> {
    items: std::mem::ManuallyDrop<Vec<T>>,
    taken: usize,
    written: usize,
    cell: *mut TVMFFISeqCell,
}

impl<T> Drop for Progress<T> {
    fn drop(&mut self) {
        // SAFETY: the array's cell (`fill_slots`' contract).
        unsafe { (*self.cell).size = self.written as i64 };
        let len = self.items.len();
        // SAFETY: the items from `taken` to `len` were never moved out; the buffer is then
        // freed as an empty vector of the same capacity, once (`items` is not used after).
        unsafe {
            let rest = self.items.as_mut_ptr().add(self.taken);
            std::ptr::drop_in_place(std::ptr::slice_from_raw_parts_mut(rest, len - self.taken));
            self.items.set_len(0);
            std::mem::ManuallyDrop::drop(&mut self.items);
        }
    }
}

impl<T: TryIntoAny> Progress<T> {
    /// Moves the next item out of the vector, converted (a failed conversion drops it).
    ///
    /// # Safety
    /// An item is left (`taken` < the vector's length).
    #[inline(always)]
    unsafe fn take(&mut self) -> Result<crate::base::value::Any> {
        // SAFETY: item `taken` is still the vector's (the caller's contract): moved out once,
        // then counted as taken.
        let item = unsafe { self.items.as_ptr().add(self.taken).read() };
        self.taken += 1;
        item.try_into_any()
    }

    /// Moves the next item into the next slot.
    ///
    /// # Safety
    /// An item is left; `data` is the array's first slot.
    #[inline(always)]
    unsafe fn one(&mut self, data: *mut TVMFFIAny) -> Result<()> {
        // SAFETY: the caller's contract.
        let value = unsafe { self.take() }?;
        // SAFETY: slot `written` (< the array's capacity, one per item) is unused; the value
        // is moved in, then counted.
        unsafe { write_slot(data.add(self.written), value.into_raw()) };
        self.written += 1;
        Ok(())
    }

    /// Moves the next two items into the next two slots, with `S`.
    ///
    /// # Safety
    /// Two items are left; `data` is the array's first slot.
    #[inline(always)]
    unsafe fn pair<S: PairStore>(&mut self, data: *mut TVMFFIAny) -> Result<()> {
        // SAFETY: the caller's contract.
        let first = unsafe { self.take() }?;
        // SAFETY: as above. `first` is released if this fails or unwinds.
        let second = unsafe { self.take() }?;
        // SAFETY: slots `written` and the next are unused; both values are moved in, then
        // counted.
        unsafe { S::store_pair(data.add(self.written), first.into_raw(), second.into_raw()) };
        self.written += 2;
        Ok(())
    }
}

/// The loop of [`fill_slots`], storing pairs with `S`.
///
/// # Safety
/// As for [`fill_slots`].
#[inline(always)]
unsafe fn fill_slots_with<S: PairStore, T: TryIntoAny>(
    items: Vec<T>,
    cell: *mut TVMFFISeqCell,
    data: *mut TVMFFIAny,
) -> Result<()> {
    let len = items.len();
    let mut progress = Progress {
        items: std::mem::ManuallyDrop::new(items),
        taken: 0,
        written: 0,
        cell,
    };
    // One value alone first when the pairs would start at 16 mod 32 (the slots start 16-byte
    // aligned), so that no pair store spans two cache lines.
    if (data as usize) & 16 != 0 && len > 0 {
        // SAFETY: an item is left; `data` is the first slot (so below).
        unsafe { progress.one(data) }?;
    }
    // Four pairs per round, then pair by pair. A loop of one pair straddling a 64-byte
    // boundary ran at half speed where the linker happened to place it (0.26 against 0.15 ns a
    // value); four stores per round hide where it lies.
    while len - progress.taken >= 8 {
        // SAFETY: eight items are left.
        unsafe {
            progress.pair::<S>(data)?;
            progress.pair::<S>(data)?;
            progress.pair::<S>(data)?;
            progress.pair::<S>(data)?;
        }
    }
    while len - progress.taken >= 2 {
        // SAFETY: two items are left.
        unsafe { progress.pair::<S>(data) }?;
    }
    if progress.taken < len {
        // SAFETY: an item is left.
        unsafe { progress.one(data) }?;
    }
    Ok(())
}

/// Writes a value into an element slot as one 16-byte store.
///
/// # Safety
/// `slot` is valid for a write of one `TVMFFIAny` (8-byte aligned).
#[inline(always)]
unsafe fn write_slot(slot: *mut TVMFFIAny, value: TVMFFIAny) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_storeu_si128};
        // SAFETY: both are 16 bytes of plain data; SSE2 is part of x86_64; the store is
        // unaligned and `slot` is valid for 16 bytes (the caller's contract).
        unsafe {
            _mm_storeu_si128(
                slot as *mut __m128i,
                std::mem::transmute::<TVMFFIAny, __m128i>(value),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        slot.write(value)
    };
}

/// Stores two values into two adjacent slots.
trait PairStore {
    /// # Safety
    /// `slot` is valid for writes of two `TVMFFIAny`s; the CPU has what the store needs.
    unsafe fn store_pair(slot: *mut TVMFFIAny, first: TVMFFIAny, second: TVMFFIAny);
}

/// Two 16-byte stores (any CPU).
struct TwoStores;

impl PairStore for TwoStores {
    #[inline(always)]
    unsafe fn store_pair(slot: *mut TVMFFIAny, first: TVMFFIAny, second: TVMFFIAny) {
        // SAFETY: the caller's contract.
        unsafe {
            write_slot(slot, first);
            write_slot(slot.add(1), second);
        }
    }
}

/// One 32-byte store (a CPU with AVX: [`fill_slots_avx`] only).
#[cfg(target_arch = "x86_64")]
struct OneAvxStore;

#[cfg(target_arch = "x86_64")]
impl PairStore for OneAvxStore {
    #[inline(always)]
    unsafe fn store_pair(slot: *mut TVMFFIAny, first: TVMFFIAny, second: TVMFFIAny) {
        // SAFETY: the caller's contract (AVX is there).
        unsafe { store_pair_avx(slot, first, second) }
    }
}

/// [`OneAvxStore`]'s store.
///
/// # Safety
/// The CPU has AVX; `slot` is valid for writes of two `TVMFFIAny`s.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn store_pair_avx(slot: *mut TVMFFIAny, first: TVMFFIAny, second: TVMFFIAny) {
    use std::arch::x86_64::_mm256_set_epi64x;
    // SAFETY: both values are 16 bytes of plain data; `slot` is valid for 32 bytes and the CPU
    // has AVX (the caller's contract). The store is written out because LLVM splits a 32-byte
    // store of two halves into two 16-byte stores, the very cost this avoids.
    unsafe {
        let [a0, a1] = std::mem::transmute::<TVMFFIAny, [i64; 2]>(first);
        let [b0, b1] = std::mem::transmute::<TVMFFIAny, [i64; 2]>(second);
        let pair = _mm256_set_epi64x(b1, b0, a1, a0);
        std::arch::asm!(
            "vmovdqu ymmword ptr [{slot}], {pair}",
            slot = in(reg) slot,
            pair = in(ymm_reg) pair,
            options(nostack, preserves_flags),
        );
    }
}
