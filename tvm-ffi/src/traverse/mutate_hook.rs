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
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

use super::mutate_value::Permit;
use super::visit::{with_frame, DefRegionKind};
use super::visit_hook::thread_mark;
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::error::{panic as ffi_panic, Error, Result};
use crate::base::object::{alloc_object, type_index_of, type_info, ObjectCell};
use crate::base::value::{Any, AnyView};
use crate::call::function::Function;

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
    /// The thread the traversal runs on: the only one that may call back into it.
    owner: usize,
    /// The traversal's [`ActiveHook`] while the hook runs and no call back is under way; null
    /// otherwise.
    active: AtomicPtr<c_void>,
    /// Whether the hook has returned (a later call comes through a kept mutator).
    finished: AtomicBool,
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
    let cached = INDEX.load(Ordering::Relaxed);
    if cached >= 0 {
        return Ok(cached);
    }
    let key = sys::TVMFFIByteArray::from_bytes(MUTATOR_TYPE_KEY.as_bytes());
    // SAFETY: a valid key (the runtime copies it); depth 1 under `ffi.Object`, no reserved
    // child slots, children may overflow: C++'s defaults for a non-final object type.
    let index = unsafe { sys::TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, ti::kTVMFFIObject) };
    if index < 0 {
        return Err(Error::take_raised().unwrap_or_else(|| {
            Error::runtime_error(format!("cannot allocate the type `{MUTATOR_TYPE_KEY}`"))
        }));
    }
    let info = type_info::type_info(index).ok_or_else(|| {
        Error::runtime_error(format!(
            "the type `{MUTATOR_TYPE_KEY}` has no registry entry"
        ))
    })?;
    // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
    let parent = (info.type_depth == 1).then(|| unsafe { (**info.type_ancestors).type_index });
    if parent != Some(ti::kTVMFFIObject) {
        return Err(Error::type_error(format!(
            "the type `{MUTATOR_TYPE_KEY}` (index {index}) is registered with depth {} and \
             parent {parent:?}; expected a direct child of `ffi.Object` (index {})",
            info.type_depth,
            ti::kTVMFFIObject
        )));
    }
    INDEX.store(index, Ordering::Relaxed);
    Ok(index)
}

/// The hook a type attribute holds.
enum Hook {
    Native(MutateAbi),
    Function(Function),
}

impl Hook {
    /// The hook in `attr` (borrowed from the registry), or a `TypeError` naming the type.
    fn of(attr: TVMFFIAny, hook_name: &str, hooked_type_index: i32) -> Result<Hook> {
        let hooked_key = || type_info::type_key_of_index(hooked_type_index);
        match attr.type_index {
            ti::kTVMFFIOpaquePtr => {
                // SAFETY: an opaque-pointer value's payload is `v_ptr`.
                let pointer = unsafe { attr.value.v_ptr };
                if pointer.is_null() {
                    return Err(Error::type_error(format!(
                        "`{hook_name}` of `{}` is a null opaque pointer",
                        hooked_key()
                    )));
                }
                // SAFETY: the `__s_mutate__` protocol stores exactly an `FStructuralMutateABI`
                // in an opaque-pointer attribute.
                Ok(Hook::Native(unsafe {
                    std::mem::transmute::<*mut c_void, MutateAbi>(pointer)
                }))
            }
            ti::kTVMFFIFunction => {
                // SAFETY: the registry keeps the attribute alive; the cast takes a reference.
                let view = unsafe { AnyView::from_raw(attr) };
                Ok(Hook::Function(view.cast::<Function>()?))
            }
            other => Err(Error::type_error(format!(
                "`{hook_name}` of `{}` must be an opaque function pointer or an \
                 `ffi.Function`, got `{}`",
                hooked_key(),
                type_info::type_key_of_index(other)
            ))),
        }
    }
}

/// Calls the foreign mutation hook `attr` (the attribute value, borrowed from the registry,
/// registered as `hook_name`) of `value` reached in `kind`, lending it a mutator whose calls
/// back run `engine`. `inplace`: the hook is `__s_maybe_inplace_mutate__`, called for a value
/// only the traversal holds. Returns the hook's replacement, or `None` for `Unchanged`.
#[inline(never)]
pub(crate) fn call_mutate_hook(
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
        owner: thread_mark(),
        active: AtomicPtr::new(std::ptr::null_mut()),
        finished: AtomicBool::new(false),
    };
    // SAFETY: `mutator_index` is `ffi.StructuralMutator`, whose readers (C++) read the
    // `StructuralMutatorObj` prefix that `MutatorFields` starts with (asserted above).
    let object = unsafe { alloc_object(fields, mutator_index, 0) };
    let raw_mutator = TVMFFIAny {
        type_index: mutator_index,
        zero_padding: 0,
        value: sys::TVMFFIAnyValue {
            v_obj: object.as_ptr(),
        },
    };
    // SAFETY: the one reference of the new object, owned by `mutator` from here on (C++ may
    // take more; the object is freed when the last one goes).
    let mutator = unsafe { Any::from_raw(raw_mutator) };
    // SAFETY: the fields of the object `mutator` keeps alive through this function.
    let fields = unsafe { fields_of(object) };
    let mut active = ActiveHook {
        engine,
        children: 0,
    };

    /// Makes the traversal unreachable through the mutator when the hook returns (or unwinds).
    struct Deactivate<'f>(&'f MutatorFields);
    impl Drop for Deactivate<'_> {
        fn drop(&mut self) {
            self.0.active.store(std::ptr::null_mut(), Ordering::Release);
            self.0.finished.store(true, Ordering::Release);
        }
    }
    fields.active.store(
        (&mut active as *mut ActiveHook<'_, '_>).cast::<c_void>(),
        Ordering::Release,
    );
    let deactivate = Deactivate(fields);

    let result = match hook {
        Hook::Native(hook) => {
            // SAFETY: the hook's ABI (above); `object` is a live `StructuralMutatorObj` and
            // `value` a live view; the result is an owned `TVMFFIAny`.
            let raw = unsafe { hook(object.as_ptr(), *value.as_raw()) };
            // SAFETY: an owned value the hook returned.
            outcome_of(unsafe { Any::from_raw(raw) })
        }
        Hook::Function(hook) => {
            // SAFETY: `mutator` owns the object through the call.
            let mutator_view = unsafe { AnyView::from_raw(raw_mutator) };
            hook.call_packed(&[mutator_view, *value])
                .and_then(outcome_of)
        }
    };
    // In this order (as an unwind drops them too): the fields are written before `mutator`
    // lets go of the object.
    drop(deactivate);
    drop(mutator);
    result
}

/// The fields of a mutator object.
///
/// # Safety
/// `object` is a live object allocated by [`call_mutate_hook`], kept alive for `'a`.
unsafe fn fields_of<'a>(object: NonNull<TVMFFIObject>) -> &'a MutatorFields {
    // SAFETY: the fields follow the 24-byte header (asserted above); the caller's contract.
    unsafe {
        &*(object.as_ptr() as *const u8)
            .add(size_of::<TVMFFIObject>())
            .cast()
    }
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
        Err(payload) => panic_into_abi(context, payload),
    }
}

/// A panic of a call back as the ABI's error result.
#[cold]
fn panic_into_abi(
    context: Option<(i32, &'static str)>,
    payload: Box<dyn std::any::Any + Send>,
) -> TVMFFIAny {
    let context = match context {
        Some((index, hook_name)) => {
            format!("{}.{hook_name}", type_info::type_key_of_index(index))
        }
        None => format!("{MUTATOR_TYPE_KEY}.mutate"),
    };
    // Never panics: raises a fixed error if this one cannot be built.
    ffi_panic::raise_panic(&context, payload);
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
    if fields.owner != thread_mark() {
        return into_abi(Err(Error::runtime_error(format!(
            "the `{MUTATOR_TYPE_KEY}` lent to `{hook_name}` of `{}` was called from \
             another thread than its traversal's",
            hooked_key()
        ))));
    }
    // Taken while the call runs: no other call reaches the traversal meanwhile.
    let active = fields.active.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if active.is_null() {
        let why = if fields.finished.load(Ordering::Acquire) {
            "was kept past the hook's return; its traversal has ended"
        } else {
            "is already mapping a child"
        };
        return into_abi(Err(Error::runtime_error(format!(
            "the `{MUTATOR_TYPE_KEY}` lent to `{hook_name}` of `{}` {why}",
            hooked_key()
        ))));
    }
    /// Gives the traversal back to the mutator when the call returns (or unwinds).
    struct Restore<'f>(&'f AtomicPtr<c_void>, *mut c_void);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            self.0.store(self.1, Ordering::Release);
        }
    }
    let _restore = Restore(&fields.active, active);
    // SAFETY: `active` is the `ActiveHook` of the `call_mutate_hook` frame below this one on
    // this thread (checked above), which it outlives; taken, so this is its only user.
    let active = unsafe { &mut *active.cast::<ActiveHook<'_, '_>>() };
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
