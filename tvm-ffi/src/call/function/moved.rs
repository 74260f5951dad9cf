//! Moved arguments: [`Moved`], C++'s `RValueRef<T>`. By default every argument is lent to
//! the callee (it holds its own reference while it keeps the value); a moved argument hands the
//! caller's reference over, so a callee that declares the parameter `Moved<T>` holds the
//! only reference and can change the object in place (copy-on-write without the copy).
//!
//! A callee that passes its moved argument (a `Moved` view) on to another function lends
//! the move through a slot of that call, taken from the forwarded slot atomically and put back
//! unless the next callee took it (`forwarding_moves`). Foreign code moves with a plain read and
//! clear, and views are `Copy + Send`: without this, two threads forwarding one view could both
//! move the object. The slot itself is `base::value::moved`, which `Any` needs.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::sys::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::{Error, Result};
use crate::base::object::header::dec_ref;
use crate::base::value::moved::{moved_slot, moved_value, object_value, MovedSlot};
use crate::base::value::{Any, AnyView, FromAny, TypeSchema};

/// A value passed by move (C++ `RValueRef<T>`): as an argument, the caller's reference goes to
/// the callee; as a parameter, the callee takes the reference a caller moved in.
///
/// The runtime passes a moved object as the address of the caller's reference
/// (`kTVMFFIObjectRValueRef`); a callee that declares the parameter `Moved<T>` (`RValueRef<T>` in
/// C++) takes it from there, leaving none behind. A callee with a plain parameter gets a type
/// error, as in C++ (only `Any` parameters take a moved value as it is). Passed to a parameter
/// `Moved<T>`, a lent value (a plain argument) is shared, as C++ copies it. Values that are
/// no objects (an `int`, a short string) are passed as they are.
///
/// ```
/// use tvm_ffi::{Array, Function, Moved};
/// // The callee takes the array over: it holds the only reference.
/// let count = Function::from_typed(|array: Moved<Array<i64>>| -> i64 {
///     array.into_inner().as_object_ref().strong_count() as i64
/// });
/// let array = Array::new([1i64, 2]).unwrap();
/// assert_eq!(count.call_as::<i64, _>((Moved::new(array),)).unwrap(), 1);
/// // Lent, it is shared with the caller.
/// let array = Array::new([3i64, 4]).unwrap();
/// assert_eq!(count.call_as::<i64, _>((&array,)).unwrap(), 2);
/// assert_eq!(array.as_object_ref().strong_count(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Moved<T>(T);

impl<T> Moved<T> {
    /// Wraps `value` to be passed by move.
    pub fn new(value: T) -> Self {
        Moved(value)
    }

    /// The value.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Moved<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// What a moved argument holds during the call: the caller's reference, in a slot the callee
/// may empty (it then owns the reference), released afterwards if it is still there.
///
/// ```
/// use tvm_ffi::function::MovedArg;
/// use tvm_ffi::{Array, IntoArg, Moved};
/// let array = Array::new([1i64]).unwrap();
/// let weak = array.as_object_ref().downgrade();
/// let holder: MovedArg = Moved::new(array).into_holder().unwrap();
/// let view = <Moved<Array<i64>> as IntoArg>::view(&holder);
/// assert_eq!(view.type_key(), "ObjectRValueRef");
/// drop(holder); // no callee took it: the holder releases it
/// assert!(weak.upgrade().is_none());
/// ```
pub struct MovedArg {
    /// The object's reference (null once the callee took it); the callee writes it through the
    /// address the view carries. Atomic (the layout of a plain pointer): views are `Send`, so
    /// a callee's thread may take it while the holder's thread makes another view.
    slot: AtomicPtr<TVMFFIObject>,
    /// A value that is no object, passed as it is (`None` for an object).
    plain: Option<Any>,
}

impl Drop for MovedArg {
    fn drop(&mut self) {
        if let Some(object) = NonNull::new(*self.slot.get_mut()) {
            // SAFETY: the slot still holds the reference the holder was made with (a callee
            // that takes it writes null there).
            unsafe { dec_ref(object) };
        }
    }
}

impl MovedArg {
    /// The holder of `any` passed by move: an object's reference goes into the slot; a value
    /// that is no object is passed as it is.
    pub(crate) fn new(any: Any) -> MovedArg {
        if any.type_index() >= ti::kTVMFFIStaticObjectBegin {
            // SAFETY: an object value: its payload is the object pointer, whose reference
            // moves into the slot (the `Any` is consumed).
            let object = unsafe { any.into_raw().value.v_obj };
            MovedArg {
                slot: AtomicPtr::new(object),
                plain: None,
            }
        } else {
            MovedArg {
                slot: AtomicPtr::new(std::ptr::null_mut()),
                plain: Some(any),
            }
        }
    }

    /// The argument: a moved value whose slot the callee may empty, or the plain value.
    pub(crate) fn view(&self) -> AnyView<'_> {
        if let Some(plain) = &self.plain {
            return *plain.as_view();
        }
        // SAFETY: the slot lives in the holder, which the view borrows.
        unsafe { AnyView::from_raw(moved_value(&self.slot)) }
    }
}

impl<T: TypeSchema> TypeSchema for Moved<T> {
    fn type_str() -> String {
        T::type_str()
    }
    fn type_schema() -> String {
        T::type_schema()
    }
}

/// Calls `f` with a view of `raw`.
///
/// # Safety
/// `raw` is an object value whose reference the caller holds while `f` runs.
unsafe fn with_view<R>(raw: TVMFFIAny, f: impl FnOnce(&AnyView<'_>) -> R) -> R {
    // SAFETY: the caller's contract.
    f(&unsafe { AnyView::from_raw(raw) })
}

impl<'a, T: for<'b> FromAny<'b>> FromAny<'a> for Moved<T> {
    /// A moved object is taken from the caller's slot (when it converts); anything else is
    /// converted as `T` (shared, as C++ copies a lent argument).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        let Some(slot) = slot_of(view) else {
            return T::from_any(view).map(Moved);
        };
        let object = slot.take()?;
        // SAFETY: the reference just taken keeps the object alive.
        let value = unsafe { with_view(object_value(object), |view| T::from_any(view)) };
        match value {
            Some(value) => {
                // The conversion holds its own reference: release the caller's, which the
                // move handed over (the slot stays empty, so the caller releases nothing).
                // SAFETY: the reference taken from the slot is ours.
                unsafe { dec_ref(object) };
                Some(Moved(value))
            }
            None => {
                slot.put_back(object);
                None
            }
        }
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        let Some(slot) = slot_of(view) else {
            return T::describe_mismatch(view);
        };
        // C++'s form, `RValueRef<..>` around what the object is, quoted once.
        slot.inspect(|object| {
            // SAFETY: `inspect` holds the object's reference while this runs.
            let inner = unsafe { with_view(object, |view| T::describe_mismatch(view)) };
            format!("`RValueRef<{}>`", inner.trim_matches('`'))
        })
        .unwrap_or_else(|| "`ObjectRValueRef` (already moved)".into())
    }
    /// Whether it converts, leaving a moved value where it is.
    fn converts(view: &'a AnyView<'a>) -> bool {
        match slot_of(view) {
            Some(slot) => slot
                // SAFETY: `inspect` holds the object's reference while this runs.
                .inspect(|object| unsafe { with_view(object, |view| T::converts(view)) })
                .unwrap_or(false),
            None => T::converts(view),
        }
    }
}

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
            return Err(Error::value_error("moved argument already taken"));
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
