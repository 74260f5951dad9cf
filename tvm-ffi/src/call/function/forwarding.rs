//! Forwarding moved arguments: a callee that passes its moved argument (an `RValueRef` view)
//! on to another function lends the move through a slot of that call, taken from the
//! forwarded slot atomically and put back unless the next callee took it. Foreign code moves
//! with a plain read and clear, and views are `Copy + Send`: without this, two threads
//! forwarding one view could both move the object.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::sys::TVMFFIObject;
use crate::base::error::{Error, Result};
use crate::base::value::moved::{moved_slot, moved_value, MovedSlot};
use crate::base::value::{Any, AnyView};

/// The slot of `view` if it is a moved value.
pub(crate) fn slot_of<'v>(view: &AnyView<'v>) -> Option<MovedSlot<'v>> {
    // SAFETY: a view's value: a moved value's slot lives as long as the view.
    unsafe { moved_slot(view.as_raw()) }
}

/// Runs `call` with `args`, each moved value taken from the slot it was forwarded in into a
/// slot of this call (atomically: views are `Copy + Send`, and a foreign callee moves with a
/// plain read and clear), and put back afterwards unless the callee took it. A moved value
/// whose slot is empty (taken, or being forwarded by another thread) is an error.
pub(crate) fn forwarding_moves(
    args: &[AnyView<'_>],
    call: impl FnOnce(&[AnyView<'_>]) -> Result<Any>,
) -> Result<Any> {
    let moved = args.iter().filter_map(slot_of).count();
    if moved == 0 {
        return call(args);
    }
    // This call's slots: allocated once, never moved while the call runs.
    let slots: Vec<AtomicPtr<TVMFFIObject>> = (0..moved)
        .map(|_| AtomicPtr::new(std::ptr::null_mut()))
        .collect();
    // The forwarded slot of `slots[k]` is `origins[k]`.
    let mut origins: Vec<MovedSlot<'_>> = Vec::with_capacity(moved);
    let mut local: Vec<AnyView<'_>> = args.to_vec();
    for (arg, out) in args.iter().zip(local.iter_mut()) {
        let Some(origin) = slot_of(arg) else { continue };
        let Some(object) = origin.take() else {
            put_back(&slots, &origins);
            return Err(Error::value_error("RValueRef already moved"));
        };
        let slot = &slots[origins.len()];
        slot.store(object.as_ptr(), Ordering::Relaxed);
        origins.push(origin);
        // SAFETY: the slot lives in `slots`, alive until after the call.
        *out = unsafe { AnyView::from_raw(moved_value(slot)) };
    }
    let result = call(&local);
    put_back(&slots, &origins);
    result
}

/// Returns each object a callee left in this call's slots to the slot it was forwarded in.
fn put_back(slots: &[AtomicPtr<TVMFFIObject>], origins: &[MovedSlot<'_>]) {
    for (origin, slot) in origins.iter().zip(slots) {
        let left = slot.swap(std::ptr::null_mut(), Ordering::Acquire);
        if let Some(object) = NonNull::new(left) {
            origin.put_back(object);
        }
    }
}
