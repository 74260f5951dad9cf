//! What the foreign structural hooks share (`visit_hook.rs`, `mutate_hook.rs`): the hook a type
//! attribute holds, the runtime's index of the object type lent to it, the state that makes the
//! Rust traversal reachable through the lent object only while the hook runs on the
//! traversal's thread, and a caught panic as the ABI's error result.
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::{panic as ffi_panic, Error, Result};
use crate::base::object::alloc_object;
use crate::base::object::type_info;
use crate::base::value::{Any, AnyView};
use crate::call::function::Function;

/// The calling thread, as an address no other live thread shares (a thread-local's): cheaper
/// than `std::thread::current().id()`, which takes and releases a reference to the thread.
#[inline]
pub(crate) fn thread_mark() -> usize {
    thread_local! {
        static MARK: u8 = const { 0 };
    }
    MARK.with(|mark| mark as *const u8 as usize)
}

/// The runtime's index of the object type `key` that C++ declares with
/// `TVM_FFI_DECLARE_OBJECT_INFO(key, .., Object)` (found, or allocated as C++ does), checked to be
/// the direct child of `ffi.Object`; cached in `cache`.
pub(crate) fn lent_type_index(key: &'static str, cache: &AtomicI32) -> Result<i32> {
    let cached = cache.load(Ordering::Relaxed);
    if cached >= 0 {
        return Ok(cached);
    }
    let raw_key = sys::TVMFFIByteArray::from_bytes(key.as_bytes());
    // SAFETY: a valid key (the runtime copies it); depth 1 under `ffi.Object`, no reserved
    // child slots, children may overflow: C++'s defaults for a non-final object type.
    let index = unsafe { sys::TVMFFITypeGetOrAllocIndex(&raw_key, -1, 1, 0, 1, ti::kTVMFFIObject) };
    if index < 0 {
        return Err(Error::take_raised()
            .unwrap_or_else(|| Error::runtime_error(format!("cannot allocate the type `{key}`"))));
    }
    let info = type_info::type_info(index)
        .ok_or_else(|| Error::runtime_error(format!("the type `{key}` has no registry entry")))?;
    // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
    let parent = (info.type_depth == 1).then(|| unsafe { (**info.type_ancestors).type_index });
    if parent != Some(ti::kTVMFFIObject) {
        return Err(Error::type_error(format!(
            "the type `{key}` (index {index}) is registered with depth {} and parent \
             {parent:?}; expected a direct child of `ffi.Object` (index {})",
            info.type_depth,
            ti::kTVMFFIObject
        )));
    }
    cache.store(index, Ordering::Relaxed);
    Ok(index)
}

/// The hook a type attribute holds.
pub(crate) enum Hook {
    /// An opaque pointer: the C function of the attribute's protocol.
    Native(NonNull<c_void>),
    /// An `ffi.Function`, called with the lent object and the value.
    Function(Function),
}

impl Hook {
    /// The hook in `attr` (the value of the attribute `attr_name` of `hooked_type_index`,
    /// borrowed from the registry), or a `TypeError` naming the type.
    pub(crate) fn of(attr: TVMFFIAny, attr_name: &str, hooked_type_index: i32) -> Result<Hook> {
        let hooked_key = || type_info::type_key_of_index(hooked_type_index);
        match attr.type_index {
            ti::kTVMFFIOpaquePtr => {
                // SAFETY: an opaque-pointer value's payload is `v_ptr`.
                let pointer = unsafe { attr.value.v_ptr };
                NonNull::new(pointer).map(Hook::Native).ok_or_else(|| {
                    Error::type_error(format!(
                        "`{attr_name}` of `{}` is a null opaque pointer",
                        hooked_key()
                    ))
                })
            }
            ti::kTVMFFIFunction => {
                // SAFETY: the registry keeps the attribute alive; the cast takes a reference.
                let view = unsafe { AnyView::from_raw(attr) };
                Ok(Hook::Function(view.cast::<Function>()?))
            }
            other => Err(Error::type_error(format!(
                "`{attr_name}` of `{}` must be an opaque function pointer or an `ffi.Function`, \
                 got `{}`",
                hooked_key(),
                type_info::type_key_of_index(other)
            ))),
        }
    }
}

/// A new object of `type_index` whose payload is `fields` (the visitor or mutator lent to a
/// hook), owned by the returned `Any` (C++ may take more references), and its address.
///
/// # Safety
/// `type_index` describes a type whose payload layout is `F` (C++ reads the prefix of the
/// runtime's object that `F` starts with).
pub(crate) unsafe fn new_lent_object<F>(
    fields: F,
    type_index: i32,
) -> (Any, NonNull<TVMFFIObject>) {
    // SAFETY: the caller's contract.
    let object = unsafe { alloc_object(fields, type_index, 0) };
    let raw = TVMFFIAny {
        type_index,
        zero_padding: 0,
        value: sys::TVMFFIAnyValue {
            v_obj: object.as_ptr(),
        },
    };
    // SAFETY: the one reference of the new object, owned by the `Any` from here on.
    (unsafe { Any::from_raw(raw) }, object)
}

/// The payload of an object made by [`new_lent_object`].
///
/// # Safety
/// `object` was made by [`new_lent_object`] with an `F` and stays alive for `'a`.
pub(crate) unsafe fn lent_fields<'a, F>(object: NonNull<TVMFFIObject>) -> &'a F {
    // SAFETY: the payload follows the 24-byte header; the caller's contract.
    unsafe {
        &*(object.as_ptr() as *const u8)
            .add(std::mem::size_of::<TVMFFIObject>())
            .cast()
    }
}

/// A panic caught in a call back from a hook, as the ABI's error result (an owned `ffi.Error`
/// naming `context`).
#[cold]
pub(crate) fn panic_into_abi(context: &str, payload: Box<dyn std::any::Any + Send>) -> TVMFFIAny {
    // Never panics: raises a fixed error if this one cannot be built.
    ffi_panic::raise_panic(context, payload);
    let mut error: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: a valid output slot; the raised error's one reference moves to the result.
    unsafe { sys::TVMFFIErrorMoveFromRaised(&mut error) };
    TVMFFIAny {
        type_index: ti::kTVMFFIError,
        zero_padding: 0,
        value: sys::TVMFFIAnyValue {
            v_obj: error as *mut TVMFFIObject,
        },
    }
}

/// Why a call back through a lent object cannot reach its traversal.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Called from another thread than the traversal's.
    OtherThread,
    /// The hook has returned (the object was kept).
    Finished,
    /// A call back through it is already running.
    Busy,
}

/// The part of a lent object's fields that reaches the traversal: a pointer to its state while
/// the hook runs and no call back through the object is under way, on the traversal's thread.
pub(crate) struct Lent {
    /// The thread the traversal runs on ([`thread_mark`]): the only one that may call back.
    owner: usize,
    /// The traversal's state while the hook runs and no call back is under way; null otherwise.
    active: AtomicPtr<c_void>,
    /// Whether the hook has returned.
    finished: AtomicBool,
}

impl Lent {
    /// Unarmed, owned by the calling thread.
    pub(crate) fn new() -> Lent {
        Lent {
            owner: thread_mark(),
            active: AtomicPtr::new(std::ptr::null_mut()),
            finished: AtomicBool::new(false),
        }
    }

    /// Makes `state` reachable until the returned guard is dropped (the hook returned or
    /// unwound); then the object is finished.
    pub(crate) fn arm(&self, state: *mut c_void) -> Disarm<'_> {
        self.active.store(state, Ordering::Release);
        Disarm(self)
    }

    /// The armed state, taken until the returned guard is dropped (no other call back reaches
    /// it meanwhile), if the caller is on the owner thread and the hook is running.
    pub(crate) fn take(&self) -> std::result::Result<Taken<'_>, Refused> {
        if self.owner != thread_mark() {
            return Err(Refused::OtherThread);
        }
        let state = self.active.swap(std::ptr::null_mut(), Ordering::AcqRel);
        match NonNull::new(state) {
            Some(state) => Ok(Taken { lent: self, state }),
            None if self.finished.load(Ordering::Acquire) => Err(Refused::Finished),
            None => Err(Refused::Busy),
        }
    }
}

/// Makes a [`Lent`] unreachable when dropped.
pub(crate) struct Disarm<'l>(&'l Lent);

impl Drop for Disarm<'_> {
    fn drop(&mut self) {
        self.0.active.store(std::ptr::null_mut(), Ordering::Release);
        self.0.finished.store(true, Ordering::Release);
    }
}

/// A state taken from a [`Lent`], given back when dropped.
pub(crate) struct Taken<'l> {
    lent: &'l Lent,
    /// The state [`Lent::arm`] was given.
    pub(crate) state: NonNull<c_void>,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        self.lent
            .active
            .store(self.state.as_ptr(), Ordering::Release);
    }
}
