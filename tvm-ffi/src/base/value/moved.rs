//! The slot of a moved value (`kTVMFFIObjectRValueRef`): a value whose payload is the address
//! of the caller's object reference, which the callee may take (C++ `RValueRef<T>`). The slot
//! is taken and put back atomically: views are `Copy + Send`, so several threads of one callee
//! may convert the same moved argument, and exactly one of them may own the reference.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::sys::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIObject};

/// The reference slot of a moved value, `None` for any other value.
///
/// # Safety
/// `raw` is a view's value, whose slot (for a moved value) lives for `'v`.
pub(crate) unsafe fn moved_slot<'v>(raw: &TVMFFIAny) -> Option<MovedSlot<'v>> {
    (raw.type_index == ti::kTVMFFIObjectRValueRef).then(|| MovedSlot {
        // SAFETY: a moved value's payload is the address of the caller's reference slot
        // (an aligned `Object*`), alive for `'v` (the caller's contract).
        slot: unsafe { AtomicPtr::from_ptr(raw.value.v_ptr as *mut *mut TVMFFIObject) },
    })
}

/// The caller's reference slot of a moved argument.
pub(crate) struct MovedSlot<'v> {
    slot: &'v AtomicPtr<TVMFFIObject>,
}

impl MovedSlot<'_> {
    /// Takes the reference out of the slot (its owner is now the caller of this), leaving it
    /// empty; `None` if it is empty (taken already, or by another thread right now).
    pub(crate) fn take(&self) -> Option<NonNull<TVMFFIObject>> {
        NonNull::new(self.slot.swap(std::ptr::null_mut(), Ordering::AcqRel))
    }

    /// Puts back a reference [`MovedSlot::take`] returned (the slot is empty meanwhile: no one
    /// else writes a reference into it).
    pub(crate) fn put_back(&self, object: NonNull<TVMFFIObject>) {
        self.slot.store(object.as_ptr(), Ordering::Release);
    }

    /// Calls `f` with the moved object as a raw value (alive while `f` runs), leaving it in
    /// the slot afterwards; `None` if the slot is empty.
    pub(crate) fn inspect<R>(&self, f: impl FnOnce(TVMFFIAny) -> R) -> Option<R> {
        let object = self.take()?;
        // SAFETY: the reference taken keeps the object alive while `f` runs.
        let result = f(unsafe { object_value(object) });
        self.put_back(object);
        Some(result)
    }
}

/// The moved value whose reference lives in `slot` (what a caller passes for a moved argument).
pub(crate) fn moved_value(slot: &AtomicPtr<TVMFFIObject>) -> TVMFFIAny {
    TVMFFIAny {
        type_index: ti::kTVMFFIObjectRValueRef,
        zero_padding: 0,
        value: TVMFFIAnyValue {
            v_ptr: slot.as_ptr() as *mut std::ffi::c_void,
        },
    }
}

/// `object` as a raw value, under its own type index.
///
/// # Safety
/// `object` is a live object.
pub(crate) unsafe fn object_value(object: NonNull<TVMFFIObject>) -> TVMFFIAny {
    // SAFETY: the caller's contract: the object is alive.
    let type_index = unsafe { object.as_ref().type_index };
    TVMFFIAny {
        type_index,
        zero_padding: 0,
        value: TVMFFIAnyValue {
            v_obj: object.as_ptr(),
        },
    }
}
