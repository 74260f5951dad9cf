//! What a list or dict reads in place while Rust holds its lock ([`Locked`], from the
//! striped-lock module `base::lock`): the list's buffer and elements, the dict's table, and
//! live copies of stored values.
use std::ptr::NonNull;

use super::table::Table;
use crate::abi::sys::{self, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::base::lock::Locked;
use crate::base::object::builtin::{DictObj, ListObj};
use crate::base::object::try_inc_strong;
use crate::base::value::{Any, AnyView};

impl<'a> Locked<'a, ListObj> {
    /// The buffer and length of the list as they are now.
    #[inline]
    pub(crate) fn seq(&self) -> (*const TVMFFIAny, usize) {
        // SAFETY: a list is the header followed by a TVMFFISeqCell; its fields are read by
        // value (never through a reference, since foreign code rewrites them), with the lock
        // held (no other Rust operation writes meanwhile).
        unsafe {
            let cell = (self.object().as_raw().as_ptr() as *const u8)
                .add(std::mem::size_of::<TVMFFIObject>())
                as *const TVMFFISeqCell;
            let data = std::ptr::addr_of!((*cell).data).read() as *const TVMFFIAny;
            let size = std::ptr::addr_of!((*cell).size).read();
            (data, usize::try_from(size).unwrap_or(0))
        }
    }

    /// A copy of element `index`, or `None` past the end or when the element is being
    /// released (see [`copy_live`]).
    #[inline]
    pub(crate) fn get(&self, index: usize) -> Option<Any> {
        let (data, size) = self.seq();
        if index >= size {
            return None;
        }
        // SAFETY: element `index` of the current buffer, with the lock held.
        unsafe { copy_live(data.add(index)) }
    }

    /// Whether the runtime is releasing an element of this list now (a clear or pop that
    /// foreign code started on this thread, whose element's destructor runs this code): the
    /// runtime releases the last element before it shrinks the list, so a write now would
    /// move the buffer under its loop.
    pub(crate) fn releasing(&self) -> bool {
        let (data, size) = self.seq();
        // SAFETY: the last element of the current buffer, with the lock held.
        size > 0 && unsafe { is_dying(data.add(size - 1)) }
    }
}

impl<'a> Locked<'a, DictObj> {
    /// The dict's table, read in place while the lock is held; `None` when the runtime's
    /// layout is not the one read in place (the runtime's functions answer then).
    #[inline]
    pub(crate) fn table(&self) -> Option<Table<'_>> {
        // SAFETY: `self.object()` keeps the dict alive and the lock is held for the borrow; each
        // `Table` method reads the current state.
        unsafe { Table::new(self.object().as_raw()) }
    }
}

/// A copy (one more reference) of the value stored at `slot`, or `None` when it is an object
/// whose strong count already reached zero: the runtime is releasing it (a clear running the
/// element's destructor, which reads the container), and a copy would resurrect it.
///
/// # Safety
/// `slot` is a valid stored value of a container whose lock this thread holds.
#[inline]
pub(crate) unsafe fn copy_live(slot: *const TVMFFIAny) -> Option<Any> {
    // SAFETY: the caller's contract.
    let index = unsafe { std::ptr::addr_of!((*slot).type_index).read() };
    if index >= sys::type_index::kTVMFFIStaticObjectBegin {
        // SAFETY: an object index holds an object pointer.
        let obj = NonNull::new(unsafe { std::ptr::addr_of!((*slot).value.v_obj).read() })?;
        // SAFETY: the slot's reference keeps the memory alive while this thread holds the
        // container's lock (the caller's contract).
        if !unsafe { try_inc_strong(obj) } {
            return None;
        }
    } else if matches!(
        index,
        sys::type_index::kTVMFFIRawStr
            | sys::type_index::kTVMFFIByteArrayPtr
            | sys::type_index::kTVMFFIObjectRValueRef
    ) {
        // Borrowed forms (never stored by the runtime): materialised as `to_owned` does.
        // SAFETY: a valid value of the container.
        return unsafe { (*(slot as *const AnyView<'_>)).to_owned() }.ok();
    }
    // SAFETY: a plain value, or an object of which we took one strong reference above: the
    // bits are an owned copy.
    Some(unsafe { Any::from_raw(slot.read()) })
}

/// Whether the value at `slot` is an object whose strong count reached zero.
///
/// # Safety
/// As for [`copy_live`].
unsafe fn is_dying(slot: *const TVMFFIAny) -> bool {
    // SAFETY: the caller's contract.
    let raw = unsafe { slot.read() };
    raw.type_index >= sys::type_index::kTVMFFIStaticObjectBegin
        // SAFETY: an object index holds an object pointer, whose memory is alive while the
        // container's slot still refers to it.
        && NonNull::new(unsafe { raw.value.v_obj })
            // SAFETY: as above.
            .is_some_and(|obj| unsafe { crate::base::object::strong_count_of(obj) } == 0)
}
