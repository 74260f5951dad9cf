//! Building an `ffi.Array` in Rust memory, laid out as C++ `ArrayObj::Empty` lays one out: the
//! items are moved into a `Vec` (a plain copy), whose length bounds a loop converting each
//! straight into its slot.
use crate::abi::sys::{type_index as ti, TVMFFIAny, TVMFFISeqCell};
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
        // No more than reserved, whatever the hint says meanwhile (a lying one must not grow it).
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
    let capacity = items.len();
    // Dropped on an error or a panic, the array releases what its size (`Written`) counts.
    let (array, cell, data) = unfilled_array(capacity)?;
    struct Written(*mut TVMFFISeqCell, usize);
    impl Drop for Written {
        fn drop(&mut self) {
            // SAFETY: the array's cell, which no one else reaches yet.
            unsafe { (*self.0).size = self.1 as i64 };
        }
    }
    let mut written = Written(cell, 0);
    // The length guard: at most `capacity` values, one slot each.
    for item in items.into_iter().take(capacity) {
        let value = item.try_into_any()?;
        // SAFETY: slot `written.1` < `capacity` is unused; the value moves in, then counts.
        unsafe { data.add(written.1).write(value.into_raw()) };
        written.1 += 1;
    }
    Ok(array)
}

/// A new `ffi.Array` with room for `capacity` values (size 0), its cell and its first slot.
fn unfilled_array(
    capacity: usize,
) -> Result<(ObjectRef<ArrayObj>, *mut TVMFFISeqCell, *mut TVMFFIAny)> {
    // SAFETY: `ffi.Array`'s payload is its sequence cell (size 0, data at the slots): its
    // `release` reads the first `size` slots, which callers write before counting them.
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
    // The cell after the header, through the object pointer: no one else reaches it yet.
    let cell = ptr.as_ptr().wrapping_add(1) as *mut TVMFFISeqCell;
    // SAFETY: as above; the cell's `data` points at `capacity` slots.
    let data = unsafe { (*cell).data as *mut TVMFFIAny };
    Ok((array, cell, data))
}
