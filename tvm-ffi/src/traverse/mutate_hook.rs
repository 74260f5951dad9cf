//! Foreign `__s_mutate__` and `__s_maybe_inplace_mutate__` hooks, called from the Rust map and
//! mutate as C++'s `StructuralMutator` calls them (`tvm/ffi/extra/structural_mutate.h`).
//!
//! A hook takes a `StructuralMutatorObj*` and the value, maps the value's children through the
//! mutator's vtable (`mutator->MutateExpected(child, mode)`, which calls the vtable's `mutate`,
//! or its `maybe_inplace_mutate` for a uniquely held child under `InplaceMode::kAllow`), in the
//! definition region it sets in the mutator's `def_region_mode_` (`WithDefRegionKind`), and
//! keeps variable identity through the vtable's `var_remap_get` / `var_remap_set`. It returns the
//! replacement, the `Unchanged` marker (type index `kTVMFFIUnchanged`) or an `ffi.Error`. For
//! each call the traversal lends the hook a mutator object of its own, laid out as
//! `StructuralMutatorObj`, whose vtable hands each child back to the Rust traversal and each
//! remapping to the Rust engine's. As for `__s_visit__` hooks (`visit_hook.rs`), the object can
//! outlive the call (C++ may keep a reference): the Rust state behind it is reachable only while
//! the hook runs, on the thread that called it; a later call through a kept mutator fails with an
//! error.
use std::cell::Cell;
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::ptr::NonNull;
use std::sync::atomic::AtomicI32;

use super::hook_abi::{
    lent_fields, lent_type_index, new_lent_object, panic_into_abi, Hook, Lent, Refused,
};
use super::mutate_value::{is_unique, Permit};
use super::visit::{with_frame, AttrColumn, DefRegionKind};
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::{panic as ffi_panic, Error, Result};
use crate::base::object::{type_index_of, type_info, ObjectCell};
use crate::base::value::{Any, AnyView};

/// The type key C++ declares `StructuralMutatorObj` under.
const MUTATOR_TYPE_KEY: &str = "ffi.StructuralMutator";

/// What the traversal does for a hook: map a child, read and record variable remappings.
pub(crate) trait HookEngine {
    /// The image of `child` reached in `kind` with in-place permission `permit` (the same value
    /// when nothing changed).
    fn mutate_child(
        &mut self,
        child: &AnyView<'_>,
        kind: DefRegionKind,
        permit: Permit,
    ) -> Result<Any>;
    /// The replacement recorded for the object `var`, if any.
    fn var_remap_get(&mut self, var: &AnyView<'_>) -> Result<Option<Any>>;
    /// Records `mapped` as the replacement of the object `var`.
    fn var_remap_set(&mut self, var: &AnyView<'_>, mapped: &AnyView<'_>) -> Result<()>;
}

/// C++ `FStructuralMutateABI`, `TVMFFIAny (*)(StructuralMutatorObj*, AnyView) noexcept`: the
/// type of the vtable's `mutate`, `maybe_inplace_mutate` and `var_remap_get`, and of an
/// opaque-pointer hook. `AnyView` is a trivially copyable class holding one `TVMFFIAny`, so it
/// travels as a `TVMFFIAny` by value.
type MutateAbi = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny) -> TVMFFIAny;
/// C++ `FStructuralVarRemapSet`.
type RemapSetAbi = unsafe extern "C" fn(*mut TVMFFIObject, TVMFFIAny, TVMFFIAny) -> TVMFFIAny;

/// C++ `StructuralMutatorVTable`.
#[repr(C)]
struct MutatorVTable {
    mutate: MutateAbi,
    maybe_inplace_mutate: MutateAbi,
    var_remap_get: MutateAbi,
    var_remap_set: RemapSetAbi,
}

static VTABLE: MutatorVTable = MutatorVTable {
    mutate: mutate_abi,
    maybe_inplace_mutate: maybe_inplace_mutate_abi,
    var_remap_get: var_remap_get_abi,
    var_remap_set: var_remap_set_abi,
};

/// The fields after the object header: C++ `StructuralMutatorObj`'s declared ones first, then
/// the Rust state (C++ reads nothing past `def_region_mode_`).
#[repr(C)]
struct MutatorFields {
    /// C++ `vtable_`.
    vtable: *const MutatorVTable,
    /// C++ `def_region_mode_` (`TVMFFIDefRegionKind`); the hook writes it (`WithDefRegionKind`).
    def_region_mode: Cell<i32>,
    /// The type whose hook this mutator was lent to (for messages).
    hooked_type_index: i32,
    /// The attribute the hook was registered as (for messages).
    hook_name: &'static str,
    /// Whether the hook was lent for an update in place (`__s_maybe_inplace_mutate__` on a value
    /// only the traversal holds): only then may a child the hook hands to
    /// `maybe_inplace_mutate` be updated in place.
    inplace: bool,
    /// The traversal's [`ActiveHook`], reachable while the hook runs on its thread.
    lent: Lent,
}

// The layout the header declares: `StructuralMutatorObj` is `Object` (24 bytes), then
// `const StructuralMutatorVTable* vtable_`, then `TVMFFIDefRegionKind def_region_mode_` (an
// `int32_t` enum); the vtable is four function pointers.
const _: () = {
    assert!(size_of::<TVMFFIObject>() == 24);
    assert!(ObjectCell::<MutatorFields>::PAYLOAD_OFFSET == size_of::<TVMFFIObject>());
    assert!(offset_of!(MutatorFields, vtable) == 0);
    assert!(offset_of!(MutatorFields, def_region_mode) == size_of::<*const c_void>());
    assert!(size_of::<Cell<i32>>() == size_of::<i32>());
    assert!(size_of::<MutatorVTable>() == 4 * size_of::<*const c_void>());
    assert!(offset_of!(MutatorVTable, var_remap_set) == 3 * size_of::<*const c_void>());
    assert!(size_of::<TVMFFIAny>() == 16);
};

/// What a mutator reaches while its hook runs.
struct ActiveHook<'a, 'b> {
    engine: &'a mut (dyn HookEngine + 'b),
    /// How many children the hook has mapped so far (for an error's path).
    children: usize,
}

/// The runtime's index of `ffi.StructuralMutator` (registered by libtvm_ffi itself, or
/// allocated as C++'s `TVM_FFI_DECLARE_OBJECT_INFO` does), checked to be the direct child of
/// `ffi.Object`.
fn mutator_type_index() -> Result<i32> {
    static INDEX: AtomicI32 = AtomicI32::new(-1);
    lent_type_index(MUTATOR_TYPE_KEY, &INDEX)
}

const MUTATE: &str = "__s_mutate__";
const INPLACE_MUTATE: &str = "__s_maybe_inplace_mutate__";
static MUTATE_COLUMN: AttrColumn = AttrColumn::new(MUTATE);
static INPLACE_MUTATE_COLUMN: AttrColumn = AttrColumn::new(INPLACE_MUTATE);

/// The children of `value` (of type `type_index`) mapped by its type's foreign mutation hook,
/// as C++'s `DefaultMutateExpected` picks it: `__s_maybe_inplace_mutate__` for a value only the
/// traversal holds, with permission; `__s_mutate__` otherwise. `None`: the type has no hook.
pub(crate) fn map_through_hook(
    value: &AnyView<'_>,
    type_index: i32,
    kind: DefRegionKind,
    permit: Permit,
    engine: &mut dyn HookEngine,
) -> Option<Result<Option<Any>>> {
    let unique = permit == Permit::InPlace && is_unique(value);
    let (attr, name, inplace) = match unique.then(|| INPLACE_MUTATE_COLUMN.get_value(type_index)) {
        Some(Some(attr)) => (attr, INPLACE_MUTATE, true),
        _ => (MUTATE_COLUMN.get_value(type_index)?, MUTATE, false),
    };
    Some(call_mutate_hook(attr, name, value, kind, inplace, engine))
}

/// Calls the foreign mutation hook `attr` (the attribute value, borrowed from the registry,
/// registered as `hook_name`) of `value` reached in `kind`, lending it a mutator whose calls
/// back run `engine`. `inplace`: the hook is `__s_maybe_inplace_mutate__`, called for a value
/// only the traversal holds. Returns the hook's replacement, or `None` for `Unchanged`.
#[inline(never)]
fn call_mutate_hook(
    attr: TVMFFIAny,
    hook_name: &'static str,
    value: &AnyView<'_>,
    kind: DefRegionKind,
    inplace: bool,
    engine: &mut dyn HookEngine,
) -> Result<Option<Any>> {
    let hooked_type_index = value.type_index();
    let hook = Hook::of(attr, hook_name, hooked_type_index)?;
    let mutator_index = mutator_type_index()?;
    ffi_panic::install_panic_hook();
    let fields = MutatorFields {
        vtable: &VTABLE,
        def_region_mode: Cell::new(kind as i32),
        hooked_type_index,
        hook_name,
        inplace,
        lent: Lent::new(),
    };
    // SAFETY: `mutator_index` is `ffi.StructuralMutator`, whose readers (C++) read the
    // `StructuralMutatorObj` prefix that `MutatorFields` starts with (asserted above).
    let (mutator, object) = unsafe { new_lent_object(fields, mutator_index) };
    // SAFETY: the fields of the object `mutator` keeps alive through this function.
    let fields = unsafe { fields_of(object) };
    let mut active = ActiveHook {
        engine,
        children: 0,
    };
    let disarm = fields
        .lent
        .arm((&mut active as *mut ActiveHook<'_, '_>).cast::<c_void>());

    let result = match hook {
        Hook::Native(pointer) => {
            // SAFETY: the `__s_mutate__` protocol stores exactly an `FStructuralMutateABI` in an
            // opaque-pointer attribute.
            let hook = unsafe { std::mem::transmute::<*mut c_void, MutateAbi>(pointer.as_ptr()) };
            // SAFETY: the hook's ABI (above); `object` is a live `StructuralMutatorObj` and
            // `value` a live view; the result is an owned `TVMFFIAny`.
            let raw = unsafe { hook(object.as_ptr(), *value.as_raw()) };
            // SAFETY: an owned value the hook returned.
            outcome_of(unsafe { Any::from_raw(raw) })
        }
        Hook::Function(hook) => hook
            .call_packed(&[*mutator.as_view(), *value])
            .and_then(outcome_of),
    };
    // In this order (as an unwind drops them too): the fields are written before `mutator`
    // lets go of the object.
    drop(disarm);
    drop(mutator);
    result
}

/// The fields of a mutator object.
///
/// # Safety
/// `object` is a live object allocated by [`call_mutate_hook`], kept alive for `'a`.
unsafe fn fields_of<'a>(object: NonNull<TVMFFIObject>) -> &'a MutatorFields {
    // SAFETY: the caller's contract.
    unsafe { lent_fields(object) }
}

/// The result of a hook: its error, `None` for the `Unchanged` marker, or the replacement.
fn outcome_of(result: Any) -> Result<Option<Any>> {
    match result.type_index() {
        ti::kTVMFFIError => Err(result.cast::<Error>()?),
        ti::kTVMFFIUnchanged => Ok(None),
        _ => Ok(Some(result)),
    }
}

/// A result as the ABI returns it: the owned value, or an owned `ffi.Error`.
fn into_abi(result: Result<Any>) -> TVMFFIAny {
    match result {
        Ok(value) => value.into_raw(),
        Err(error) => Any::new(error).into_raw(),
    }
}

/// The `Unchanged` marker as C++'s `Unchanged().CopyToTVMFFIAny()` writes it.
const UNCHANGED: TVMFFIAny = TVMFFIAny {
    type_index: ti::kTVMFFIUnchanged,
    zero_padding: 0,
    value: sys::TVMFFIAnyValue { v_int64: 0 },
};

/// What a call back through the vtable asks of the traversal.
enum Call {
    Mutate { value: TVMFFIAny, inplace: bool },
    RemapGet(TVMFFIAny),
    RemapSet(TVMFFIAny, TVMFFIAny),
}

/// The vtable's `mutate`: the Rust traversal maps `value` (copy-on-write) in the mutator's
/// current region. Nothing unwinds out: a panic becomes an error.
unsafe extern "C" fn mutate_abi(mutator: *mut TVMFFIObject, value: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: the vtable's contract, forwarded.
    unsafe {
        guarded(
            mutator,
            Call::Mutate {
                value,
                inplace: false,
            },
        )
    }
}

/// The vtable's `maybe_inplace_mutate`: as [`mutate_abi`], updating a value only the traversal
/// holds in place when the hook itself was lent for an update in place.
unsafe extern "C" fn maybe_inplace_mutate_abi(
    mutator: *mut TVMFFIObject,
    value: TVMFFIAny,
) -> TVMFFIAny {
    // SAFETY: the vtable's contract, forwarded.
    unsafe {
        guarded(
            mutator,
            Call::Mutate {
                value,
                inplace: true,
            },
        )
    }
}

/// The vtable's `var_remap_get`: the replacement the Rust engine recorded for `var`, or None.
unsafe extern "C" fn var_remap_get_abi(mutator: *mut TVMFFIObject, var: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: the vtable's contract, forwarded.
    unsafe { guarded(mutator, Call::RemapGet(var)) }
}

/// The vtable's `var_remap_set`: records `mapped` as the replacement of `var` in the Rust
/// engine.
unsafe extern "C" fn var_remap_set_abi(
    mutator: *mut TVMFFIObject,
    var: TVMFFIAny,
    mapped: TVMFFIAny,
) -> TVMFFIAny {
    // SAFETY: the vtable's contract, forwarded.
    unsafe { guarded(mutator, Call::RemapSet(var, mapped)) }
}

/// Runs a call back under the panic guard.
///
/// # Safety
/// `mutator` is the object the vtable came from (or any live object); the values in `call` are
/// views their caller keeps alive through the call.
unsafe fn guarded(mutator: *mut TVMFFIObject, call: Call) -> TVMFFIAny {
    let mut context = None;
    let ran = ffi_panic::catch(|| {
        // SAFETY: the caller's contract.
        unsafe { call_back(mutator, call, &mut context) }
    });
    match ran {
        Ok(raw) => raw,
        Err(payload) => {
            let context = match context {
                Some((index, hook_name)) => {
                    format!("{}.{hook_name}", type_info::type_key_of_index(index))
                }
                None => format!("{MUTATOR_TYPE_KEY}.mutate"),
            };
            panic_into_abi(&context, payload)
        }
    }
}

/// A call back in Rust: checks the mutator, the thread and the region, then runs it on the
/// traversal.
///
/// # Safety
/// As for [`guarded`].
unsafe fn call_back(
    mutator: *mut TVMFFIObject,
    call: Call,
    context: &mut Option<(i32, &'static str)>,
) -> TVMFFIAny {
    let Some(object) = NonNull::new(mutator) else {
        return into_abi(Err(Error::runtime_error(format!(
            "`{MUTATOR_TYPE_KEY}` called with a null mutator"
        ))));
    };
    let index = match mutator_type_index() {
        Ok(index) => index,
        Err(error) => return into_abi(Err(error)),
    };
    // SAFETY: a live object (the caller's contract); only ours carry this vtable and index.
    let fields = unsafe {
        if type_index_of(object) != index {
            return into_abi(Err(Error::type_error(format!(
                "`{MUTATOR_TYPE_KEY}` called with a `{}`",
                type_info::type_key_of_index(type_index_of(object))
            ))));
        }
        fields_of(object)
    };
    if !std::ptr::eq(fields.vtable, &VTABLE) {
        return into_abi(Err(Error::type_error(format!(
            "`{MUTATOR_TYPE_KEY}` called with a mutator of another vtable"
        ))));
    }
    let hook_name = fields.hook_name;
    *context = Some((fields.hooked_type_index, hook_name));
    let hooked_key = || type_info::type_key_of_index(fields.hooked_type_index);
    let taken = match fields.lent.take() {
        Ok(taken) => taken,
        Err(refused) => {
            let why = match refused {
                Refused::OtherThread => "was called from another thread than its traversal's",
                Refused::Finished => "was kept past the hook's return; its traversal has ended",
                Refused::Busy => "is already mapping a child",
            };
            return into_abi(Err(Error::runtime_error(format!(
                "the `{MUTATOR_TYPE_KEY}` lent to `{hook_name}` of `{}` {why}",
                hooked_key()
            ))));
        }
    };
    // SAFETY: the state is the `ActiveHook` of the `call_mutate_hook` frame below this one on
    // this thread (checked by `take`), which it outlives; taken, so this is its only user.
    let active = unsafe { &mut *taken.state.as_ptr().cast::<ActiveHook<'_, '_>>() };
    match call {
        Call::Mutate { value, inplace } => {
            let region = fields.def_region_mode.get();
            if !(0..=2).contains(&region) {
                return into_abi(Err(Error::value_error(format!(
                    "`def_region_mode_` of the `{MUTATOR_TYPE_KEY}` lent to `{hook_name}` of \
                     `{}` is {region}; expected a `TVMFFIDefRegionKind` (0, 1 or 2)",
                    hooked_key()
                ))));
            }
            let position = active.children;
            active.children += 1;
            let permit = if inplace && fields.inplace {
                Permit::InPlace
            } else {
                Permit::Copy
            };
            // SAFETY: the caller keeps `value` alive through the call.
            let view = unsafe { AnyView::from_raw(value) };
            match active
                .engine
                .mutate_child(&view, DefRegionKind::from_valid_raw(region), permit)
            {
                Ok(mapped) if same_raw(&value, mapped.as_raw()) => UNCHANGED,
                Ok(mapped) => mapped.into_raw(),
                Err(error) => into_abi(Err(with_frame(
                    error,
                    format_args!("child [{position}] mutated by `{hook_name}`"),
                ))),
            }
        }
        Call::RemapGet(var) => {
            if var.type_index < ti::kTVMFFIStaticObjectBegin {
                return into_abi(Err(remap_key_error()));
            }
            // SAFETY: the caller keeps `var` alive through the call.
            let var = unsafe { AnyView::from_raw(var) };
            into_abi(
                active
                    .engine
                    .var_remap_get(&var)
                    .map(|image| image.unwrap_or_else(|| Any::new(()))),
            )
        }
        Call::RemapSet(var, mapped) => {
            if var.type_index < ti::kTVMFFIStaticObjectBegin {
                return into_abi(Err(remap_key_error()));
            }
            // SAFETY: the caller keeps both values alive through the call.
            let (var, mapped) = unsafe { (AnyView::from_raw(var), AnyView::from_raw(mapped)) };
            into_abi(
                active
                    .engine
                    .var_remap_set(&var, &mapped)
                    .map(|()| Any::new(())),
            )
        }
    }
}

#[cold]
fn remap_key_error() -> Error {
    Error::type_error("Variable-remap key must be an object-backed value")
}

/// Whether two raw values are the same bits (the same object, the same plain value).
#[inline]
fn same_raw(a: &TVMFFIAny, b: &TVMFFIAny) -> bool {
    // SAFETY: every member of the union is 8 plain bytes; comparing bits is always defined.
    a.type_index == b.type_index
        && a.zero_padding == b.zero_padding
        && unsafe { a.value.v_uint64 == b.value.v_uint64 }
}
