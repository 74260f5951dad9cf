//! Foreign `__s_visit__` hooks, called from the Rust walk and visit as C++'s
//! `StructuralVisitor` calls them (`tvm/ffi/extra/structural_visit.h`).
//!
//! A hook takes a `StructuralVisitorObj*` and the value, and visits the value's children
//! through the visitor's vtable (`visitor->Visit(child)`), in the definition region it sets in
//! the visitor's `def_region_mode_` (`WithDefRegionKind`). For each call the traversal lends the
//! hook a visitor object of its own, laid out as `StructuralVisitorObj`, whose vtable entry
//! hands each child back to the Rust traversal. The object can outlive the call (C++ may keep a
//! reference): the Rust state behind it is reachable only while the hook runs, on the thread
//! that called it; a later call through a kept visitor fails with an error.
//!
//! Results cross the ABI as C++ `Expected<Optional<VisitInterrupt>>` does: `None` to go on, an
//! `ffi.Error`, or an `ffi.VisitInterrupt` (static type index 77) carrying the payload.
use std::cell::Cell;
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::AtomicI32;

use super::hook_abi::{
    lent_fields, lent_type_index, new_lent_object, panic_into_abi, Hook, Lent, Refused,
};
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::{panic as ffi_panic, Error, Result};
use crate::base::object::{alloc_object, type_index_of, type_info, ObjectCell};
use crate::base::value::{Any, AnyView};

/// The type key C++ declares `StructuralVisitorObj` under.
const VISITOR_TYPE_KEY: &str = "ffi.StructuralVisitor";
const VISIT_ATTR: &str = "__s_visit__";

/// What visiting one child gave: go on (`Ok(None)`), stop with a payload (`Ok(Some(..))`), or
/// an error.
pub(crate) type ChildOutcome = Result<Option<Any>>;

/// The Rust traversal of one child, in a region (a valid `TVMFFIDefRegionKind`: 0, 1 or 2).
pub(crate) type VisitChild<'a> = dyn FnMut(&AnyView<'_>, i32) -> ChildOutcome + 'a;

/// C++ `FStructuralVisitABI`, `TVMFFIAny (*)(StructuralVisitorObj*, AnyView) noexcept`: the
/// type of the vtable's `visit` and of an opaque-pointer hook. `AnyView` is a trivially
/// copyable class holding one `TVMFFIAny`, so it travels as a `TVMFFIAny` by value.
type VisitAbi = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny) -> TVMFFIAny;

/// C++ `StructuralVisitorVTable`.
#[repr(C)]
struct VisitorVTable {
    visit: VisitAbi,
}

static VTABLE: VisitorVTable = VisitorVTable {
    visit: visit_child_abi,
};

/// The fields after the object header: C++ `StructuralVisitorObj`'s declared ones first, then
/// the Rust state (C++ reads nothing past `def_region_mode_`).
#[repr(C)]
struct VisitorFields {
    /// C++ `vtable_`.
    vtable: *const VisitorVTable,
    /// C++ `def_region_mode_` (`TVMFFIDefRegionKind`); the hook writes it (`WithDefRegionKind`).
    def_region_mode: Cell<i32>,
    /// The type whose hook this visitor was lent to (for messages).
    hooked_type_index: i32,
    /// The traversal's [`ActiveHook`], reachable while the hook runs on its thread.
    lent: Lent,
}

/// C++ `VisitInterruptObj`'s fields after the header.
#[repr(C)]
struct InterruptFields {
    value: Any,
}

// The layouts the header declares: `StructuralVisitorObj` is `Object` (24 bytes), then
// `const StructuralVisitorVTable* vtable_`, then `TVMFFIDefRegionKind def_region_mode_` (an
// `int32_t` enum); `VisitInterruptObj` is `Object`, then `Any value` (16 bytes).
const _: () = {
    assert!(size_of::<TVMFFIObject>() == 24);
    assert!(ObjectCell::<VisitorFields>::PAYLOAD_OFFSET == size_of::<TVMFFIObject>());
    assert!(offset_of!(VisitorFields, vtable) == 0);
    assert!(offset_of!(VisitorFields, def_region_mode) == size_of::<*const c_void>());
    assert!(size_of::<Cell<i32>>() == size_of::<i32>());
    assert!(size_of::<VisitorVTable>() == size_of::<*const c_void>());
    assert!(size_of::<TVMFFIAny>() == 16);
    assert!(ObjectCell::<InterruptFields>::PAYLOAD_OFFSET == size_of::<TVMFFIObject>());
    assert!(offset_of!(InterruptFields, value) == 0);
    assert!(size_of::<Any>() == size_of::<TVMFFIAny>());
};

/// What a visitor reaches while its hook runs.
struct ActiveHook<'a, 'b> {
    visit_child: &'a mut VisitChild<'b>,
}

/// The runtime's index of `ffi.StructuralVisitor`, allocated as C++'s
/// `TVM_FFI_DECLARE_OBJECT_INFO("ffi.StructuralVisitor", StructuralVisitorObj, Object)` does
/// (or found, when C++ already did), checked to be the direct child of `ffi.Object`.
fn visitor_type_index() -> Result<i32> {
    static INDEX: AtomicI32 = AtomicI32::new(-1);
    lent_type_index(VISITOR_TYPE_KEY, &INDEX)
}

/// Calls the foreign `__s_visit__` hook `attr` (the attribute value, borrowed from the
/// registry) of `value` reached in `def_region_kind`, lending it a visitor whose visits of
/// children run `visit_child`. Returns the hook's result (`Ok(Some(payload))`: interrupted).
#[inline(never)]
pub(crate) fn call_visit_hook(
    attr: TVMFFIAny,
    value: &AnyView<'_>,
    def_region_kind: i32,
    visit_child: &mut VisitChild<'_>,
) -> ChildOutcome {
    let hooked_type_index = value.type_index();
    let hook = Hook::of(attr, VISIT_ATTR, hooked_type_index)?;
    let visitor_index = visitor_type_index()?;
    ffi_panic::install_panic_hook();
    let fields = VisitorFields {
        vtable: &VTABLE,
        def_region_mode: Cell::new(def_region_kind),
        hooked_type_index,
        lent: Lent::new(),
    };
    // SAFETY: `visitor_index` is `ffi.StructuralVisitor`, whose readers (C++) read the
    // `StructuralVisitorObj` prefix that `VisitorFields` starts with (asserted above).
    let (visitor, object) = unsafe { new_lent_object(fields, visitor_index) };
    // SAFETY: the fields of the object `visitor` keeps alive through this function.
    let fields = unsafe { fields_of(object) };
    let mut active = ActiveHook { visit_child };
    let disarm = fields
        .lent
        .arm((&mut active as *mut ActiveHook<'_, '_>).cast::<c_void>());

    let result = match hook {
        Hook::Native(pointer) => {
            // SAFETY: the `__s_visit__` protocol stores exactly an `FStructuralVisitABI` in an
            // opaque-pointer attribute.
            let hook = unsafe { std::mem::transmute::<*mut c_void, VisitAbi>(pointer.as_ptr()) };
            // SAFETY: the hook's ABI (above); `object` is a live `StructuralVisitorObj` and
            // `value` a live view; the result is an owned `TVMFFIAny`.
            let raw = unsafe { hook(object.as_ptr(), *value.as_raw()) };
            // SAFETY: an owned value the hook returned.
            outcome_of(unsafe { Any::from_raw(raw) }, hooked_type_index)
        }
        Hook::Function(hook) => hook
            .call_packed(&[*visitor.as_view(), *value])
            .and_then(|result| outcome_of(result, hooked_type_index)),
    };
    // In this order (as an unwind drops them too): the fields are written before `visitor`
    // lets go of the object.
    drop(disarm);
    drop(visitor);
    result
}

/// The fields of a visitor object.
///
/// # Safety
/// `object` is a live object allocated by [`call_visit_hook`], kept alive for `'a`.
unsafe fn fields_of<'a>(object: NonNull<TVMFFIObject>) -> &'a VisitorFields {
    // SAFETY: the caller's contract.
    unsafe { lent_fields(object) }
}

/// The outcome a hook (or a visit through a vtable) returned: None, an `ffi.Error` or an
/// `ffi.VisitInterrupt`.
fn outcome_of(result: Any, hooked_type_index: i32) -> ChildOutcome {
    match result.type_index() {
        ti::kTVMFFINone => Ok(None),
        ti::kTVMFFIError => Err(result.cast::<Error>()?),
        ti::kTVMFFIVisitInterrupt => {
            // SAFETY: an object value's payload is a live object pointer.
            let object = unsafe { result.as_raw().value.v_obj };
            // SAFETY: a `VisitInterruptObj` (final, static index 77): its `Any` follows the
            // header (asserted above); `result` keeps it alive while the payload is cloned.
            let payload = unsafe {
                (*(object as *const u8)
                    .add(size_of::<TVMFFIObject>())
                    .cast::<InterruptFields>())
                .value
                .clone()
            };
            Ok(Some(payload))
        }
        other => Err(Error::type_error(format!(
            "`{VISIT_ATTR}` of `{}` returned `{}`; expected None, an `ffi.Error` or \
             an `ffi.VisitInterrupt`",
            type_info::type_key_of_index(hooked_type_index),
            type_info::type_key_of_index(other)
        ))),
    }
}

/// An outcome as the ABI returns it (C++ `Expected<Optional<VisitInterrupt>>`): None, an owned
/// `ffi.Error`, or an owned `ffi.VisitInterrupt` holding the payload.
fn into_abi(outcome: ChildOutcome) -> TVMFFIAny {
    match outcome {
        Ok(None) => TVMFFIAny::NONE,
        Ok(Some(payload)) => {
            // SAFETY: index 77 is `ffi.VisitInterrupt`, whose readers read the `Any` that
            // `InterruptFields` holds right after the header (asserted above).
            let object = unsafe {
                alloc_object(
                    InterruptFields { value: payload },
                    ti::kTVMFFIVisitInterrupt,
                    0,
                )
            };
            TVMFFIAny {
                type_index: ti::kTVMFFIVisitInterrupt,
                zero_padding: 0,
                value: sys::TVMFFIAnyValue {
                    v_obj: object.as_ptr(),
                },
            }
        }
        Err(error) => Any::new(error).into_raw(),
    }
}

/// The vtable's `visit`: C++ visits `value` through the visitor; the Rust traversal visits it
/// in the visitor's current region. Nothing unwinds out: a panic becomes an error.
unsafe extern "C" fn visit_child_abi(visitor: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    let mut hooked_type_index = None;
    let visited = ffi_panic::catch(|| {
        // SAFETY: the vtable's contract: `visitor` is the object the vtable came from, `value`
        // a view its caller keeps alive through the call.
        into_abi(unsafe { visit_child(visitor, value, &mut hooked_type_index) })
    });
    match visited {
        Ok(raw) => raw,
        Err(payload) => {
            let context = match hooked_type_index {
                Some(index) => format!("{}.{VISIT_ATTR}", type_info::type_key_of_index(index)),
                None => format!("{VISITOR_TYPE_KEY}.visit"),
            };
            panic_into_abi(&context, payload)
        }
    }
}

/// [`visit_child_abi`] in Rust: checks the visitor, the thread and the region, then runs the
/// traversal's child visit.
///
/// # Safety
/// As for [`visit_child_abi`].
unsafe fn visit_child(
    visitor: *mut TVMFFIObject,
    value: TVMFFIAny,
    hooked_type_index: &mut Option<i32>,
) -> ChildOutcome {
    let Some(object) = NonNull::new(visitor) else {
        return Err(Error::runtime_error(format!(
            "`{VISITOR_TYPE_KEY}` visit called with a null visitor"
        )));
    };
    // SAFETY: a live object (the caller's contract); only ours carry this vtable and index.
    let fields = unsafe {
        if type_index_of(object) != visitor_type_index()? {
            return Err(Error::type_error(format!(
                "`{VISITOR_TYPE_KEY}` visit called with a `{}`",
                type_info::type_key_of_index(type_index_of(object))
            )));
        }
        fields_of(object)
    };
    if !std::ptr::eq(fields.vtable, &VTABLE) {
        return Err(Error::type_error(format!(
            "`{VISITOR_TYPE_KEY}` visit called with a visitor of another vtable"
        )));
    }
    *hooked_type_index = Some(fields.hooked_type_index);
    let hooked_key = || type_info::type_key_of_index(fields.hooked_type_index);
    let taken = fields.lent.take().map_err(|refused| {
        let why = match refused {
            Refused::OtherThread => "was called from another thread than its traversal's",
            Refused::Finished => "was kept past the hook's return; its traversal has ended",
            Refused::Busy => "is already visiting a child",
        };
        Error::runtime_error(format!(
            "the `{VISITOR_TYPE_KEY}` lent to `{VISIT_ATTR}` of `{}` {why}",
            hooked_key()
        ))
    })?;
    let region = fields.def_region_mode.get();
    if !(0..=2).contains(&region) {
        return Err(Error::value_error(format!(
            "`def_region_mode_` of the `{VISITOR_TYPE_KEY}` lent to `{VISIT_ATTR}` of \
             `{}` is {region}; expected a `TVMFFIDefRegionKind` (0, 1 or 2)",
            hooked_key()
        )));
    }
    if value.type_index == ti::kTVMFFINone {
        return Ok(None);
    }
    // SAFETY: the state is the `ActiveHook` of the `call_visit_hook` frame below this one on
    // this thread (checked by `take`), which it outlives; taken, so this is its only user.
    let active = unsafe { &mut *taken.state.as_ptr().cast::<ActiveHook<'_, '_>>() };
    // SAFETY: the caller keeps `value` alive through the call.
    let view = unsafe { AnyView::from_raw(value) };
    (active.visit_child)(&view, region)
}
