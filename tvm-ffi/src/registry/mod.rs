//! Load-time registration: how generated code gets types, fields, methods and functions into
//! libtvm_ffi's own registries.
//!
//! # Contract
//!
//! - **Collection at link time.** The macros emit one `static` descriptor per item into a
//!   `linkme` distributed slice (`FUNCTIONS`, `TYPES`, `METHODS`). The linker
//!   gathers every descriptor of the final artifact (cdylib, executable, test binary) into one
//!   contiguous array; nothing runs per item before `main`.
//! - **One load-time constructor per artifact.** This crate places a single function in
//!   `.init_array`; it runs inside `dlopen` (or before `main`) and calls `ensure_registered`,
//!   which walks the complete slices once. Because every descriptor is already in place when
//!   the first constructor runs, the outcome never depends on the order in which the loader runs
//!   constructors, and parents are registered before children by sorting on the key graph, not
//!   by declaration or link order.
//! - **Types in three phases.** (1) every type gets its index and metadata, parents first (a
//!   parent defined in this artifact is registered on demand before its child; a parent
//!   defined elsewhere must already be in the runtime); declared external types are checked
//!   against the runtime's reflection instead. Then every type's own fields, once every type
//!   has its index (a field default may make an object of any type here; code run during
//!   registration that needs a type not registered yet panics with a clear message, and the
//!   panic becomes a load error, instead of waiting on the registration it runs in). (2) Every
//!   method of every `#[ffi_methods]` block, whichever module it is in, in source order (an
//!   explicit `#[ffi(init)]` among them, as C++ lists `__ffi_init__` where `.def(init<..>)` is),
//!   and the hooks. (3) Per type, the type attributes (`__ffi_shallow_copy__`, `__ffi_new__`,
//!   `__ffi_convert__`, `__ffi_type_final__`, ...) and then the constructor attribute: the
//!   explicit one, or the runtime's reflection-based `ffi._RegisterFFIInit`, which snapshots the
//!   complete field table, hence last.
//! - **Only libtvm_ffi is called** during registration (the loader lock is held, and from Python
//!   the GIL): no Python callbacks, no blocking on other threads.
//! - **Never abort.** A failure (version mismatch, duplicate global name, conflicting type) is
//!   recorded in [`load_errors`] and printed to stderr naming the function or type key (the
//!   first five; one line counts the rest); the rest of the library still registers. Panics
//!   are caught.
//! - **Never unload.** The registries keep raw pointers into the library, so the constructor
//!   also pins the library with `RTLD_NODELETE` (and the workspace links cdylibs with
//!   `-z nodelete`).
//! - **Loading twice.** Loading the same file again is a no-op (the loader returns the same
//!   handle and runs no constructor). A second *copy* of a library (another path) registering the
//!   same global names gets "already registered" load errors for them, and keeps using its own
//!   functions internally; the first registration stays in force. For a type key that is already
//!   registered, the layouts are compared: an identical one (same parent, size and fields) is
//!   shared (for a type with Rust-only `#[ffi(skip)]` fields, whose shape no description
//!   captures, only between copies of one build: its layout names the build), the first copy's accessors and methods stay in force, and nothing is reported; a
//!   different one is a load error naming the key, and the type (and its subtypes) stay
//!   unusable from this copy.
use std::collections::HashMap;
use std::sync::{Mutex, Once};

use crate::abi::sys;
use crate::base::error::{Error, Result};
use crate::base::object::{type_info, RuntimeType};
use crate::base::value::Any;
use crate::call::function::metadata::MetadataValue;
use crate::call::function::GlobalCache;
use crate::reflect::reflection::construction::SEAL_CHECK_ATTR;

mod calls;
pub(crate) mod entry;
mod enums;
pub(crate) mod layout;
mod library;
pub(crate) mod version;

use calls::{byte_array, check, register_attr};
pub(crate) use entry::{
    FieldEntry, FunctionEntry, MethodEntry, MethodKind, TypeEntry, TypeOrigin, ENUMS, FUNCTIONS,
    METHODS, TYPES,
};
pub(crate) use layout::allocate_type_index_checked as allocate_type_index;
use layout::{check_external, layout_mismatch};

static LOAD_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static REGISTER: Once = Once::new();

/// Registration failures of this artifact (empty when everything registered).
pub fn load_errors() -> Vec<String> {
    LOAD_ERRORS.lock().map(|v| v.clone()).unwrap_or_default()
}

/// Why type `key` is unusable: the load errors that name it.
pub(crate) fn not_registered(key: &str) -> String {
    let about = |e: &String| {
        e.starts_with("nothing registered")
            || [
                format!("cannot register type `{key}`"),
                format!("cannot register enum `{key}`"),
            ]
            .iter()
            .any(|prefix| e.starts_with(prefix.as_str()))
    };
    // Sorted: registration order follows link order, which differs between builds.
    let mut why: Vec<String> = load_errors().into_iter().filter(about).collect();
    why.sort();
    let why = match why.is_empty() {
        true => "see tvm_ffi::registry::load_errors()".to_string(),
        false => why.join("; "),
    };
    format!("TVM-FFI type `{key}` did not register when its library loaded: {why}")
}

/// How many load errors are printed one by one; the rest are counted in one line. Bindings of
/// a C++ IR loaded before that IR's library report every type (hundreds of lines), and the
/// first few say what happened.
const PRINTED_LOAD_ERRORS: usize = 5;

fn report(message: String) {
    match LOAD_ERRORS.lock() {
        Ok(mut errors) => {
            if errors.len() < PRINTED_LOAD_ERRORS {
                crate::abi::warn(format_args!("{message}"));
            }
            errors.push(message);
        }
        Err(_) => crate::abi::warn(format_args!("{message}")),
    }
}

/// The line that counts the load errors [`report`] did not print.
fn report_unprinted() {
    let count = LOAD_ERRORS.lock().map(|errors| errors.len()).unwrap_or(0);
    if count > PRINTED_LOAD_ERRORS {
        crate::abi::warn(format_args!(
            "... and {} more load errors (tvm_ffi::registry::load_errors() lists them all)",
            count - PRINTED_LOAD_ERRORS
        ));
    }
}

thread_local! {
    static REGISTERING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this thread is running this library's registration right now (code it runs must
/// not wait for registration to finish).
pub(crate) fn registering_on_this_thread() -> bool {
    REGISTERING.with(|flag| flag.get())
}

/// Registers everything collected in this artifact, once. Called by the load-time
/// constructor; calling it again is cheap and does nothing.
pub(crate) fn ensure_registered() {
    REGISTER.call_once(|| {
        REGISTERING.with(|flag| flag.set(true));
        crate::base::error::panic::guard_quiet("tvm-ffi registration", register_all);
        REGISTERING.with(|flag| flag.set(false));
        report_unprinted();
        // A type whose registration never ran (a version mismatch, a panic) is unusable too.
        for entry in TYPES.iter() {
            if entry.slot.get().is_none() {
                entry.slot.set_failed();
            }
        }
    });
}

fn register_all() {
    crate::base::error::panic::install_panic_hook();
    if let Err(err) = crate::registry::version::ensure_compatible() {
        report(format!("nothing registered: {}", err.message()));
        return;
    }
    library::pin_library();
    // While loading (one thread): publishing it at first use would change the runtime's
    // registry, which is not thread-safe, while other threads read it.
    if let Err(why) = crate::base::lock::publish_at_load() {
        // Registering a function takes the lock of the global function table.
        report(format!("nothing registered: {why}"));
        return;
    }
    // The type queries of the base layer need it, and look it up themselves only if this did
    // not (the module of the global function table's lock uses theirs, so they cannot take it).
    if let Some(keys) = crate::call::function::Function::get_global("ffi.GetRegisteredTypeKeys") {
        // SAFETY: an owned reference to that function, handed over.
        unsafe {
            crate::base::object::type_info::keep_registered_keys_function(
                keys.into_object_ref().into_raw().cast(),
            )
        };
    }
    for entry in FUNCTIONS.iter() {
        register_function(entry);
    }
    register_types();
}

/// Outcome of phase 1 for one type key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TypeState {
    InProgress,
    /// Registered by this artifact: methods and constructor still to come.
    Registered(RuntimeType),
    /// Already in the runtime (declared external, or an identical copy): nothing to add.
    Shared(RuntimeType),
    Failed,
}

/// Identity of a descriptor: two Rust types may (wrongly) claim one key, and each is checked.
fn entry_id(entry: &'static TypeEntry) -> usize {
    entry as *const TypeEntry as usize
}

fn register_types() {
    // Enums first: a field default may be one of their singletons.
    for entry in ENUMS.iter() {
        let outcome =
            crate::base::error::panic::guard_quiet(entry.key, || enums::register_enum(entry));
        match outcome {
            Some(Ok(_)) => {}
            Some(Err(err)) => {
                entry.slot.set_failed();
                report(format!(
                    "cannot register enum `{}`: {}",
                    entry.key,
                    err.message()
                ));
            }
            None => {
                entry.slot.set_failed();
                report(format!(
                    "cannot register enum `{}`: panic during registration",
                    entry.key
                ));
            }
        }
    }
    let mut states: HashMap<usize, TypeState> = HashMap::new();
    // Parents are found by key; with duplicate keys the first descriptor is the parent.
    let mut local: HashMap<&'static str, &'static TypeEntry> = HashMap::new();
    for entry in TYPES.iter() {
        local.entry(entry.key).or_insert(entry);
    }
    for entry in TYPES.iter() {
        prepare_type(entry, &local, &mut states);
    }
    for entry in TYPES.iter() {
        if let Some(TypeState::Registered(ty)) = states.get(&entry_id(entry)) {
            if let Err(err) = register_fields(entry, *ty) {
                report(format!(
                    "cannot register type `{}`: {}",
                    entry.key,
                    err.message()
                ));
                // Half-registered: no methods, no constructor, unusable from Rust.
                states.insert(entry_id(entry), TypeState::Failed);
                entry.slot.set_failed();
            }
        }
    }
    // A key's registered descriptor (the one that created the type), for methods.
    let registered: HashMap<&'static str, TypeState> = TYPES
        .iter()
        .filter_map(|e| match states.get(&entry_id(e)) {
            Some(state @ TypeState::Registered(_)) => Some((e.key, *state)),
            _ => None,
        })
        .collect();
    // In source order (C++ registers methods in code order; stubs list them so).
    let mut methods: Vec<&'static MethodEntry> = METHODS.iter().copied().flatten().collect();
    methods.sort_by_key(|m| m.order);
    for method in methods {
        match registered.get(method.type_key()).or_else(|| {
            TYPES
                .iter()
                .find(|e| e.key == method.type_key())
                .and_then(|e| states.get(&entry_id(e)))
        }) {
            Some(TypeState::Registered(ty)) => {
                let outcome = match method.kind {
                    MethodKind::TypeAttr => {
                        let hook = method.make();
                        // A key hook: the runtime gets a wrapper that never raises into its
                        // table rebuilds, Rust's lookups the hook itself.
                        match crate::data::container::key_hook_for_runtime(method.name(), &hook) {
                            Some((for_runtime, raw_name)) => {
                                register_attr(*ty, raw_name, Any::new(hook)).and_then(|()| {
                                    register_attr(*ty, method.name(), Any::new(for_runtime))
                                })
                            }
                            None => register_attr(*ty, method.name(), Any::new(hook)),
                        }
                    }
                    // The constructor's attribute comes with the other attributes (phase 3);
                    // two constructors are reported there.
                    MethodKind::Init if explicit_inits(method.type_key()).count() != 1 => Ok(()),
                    _ => register_method(*ty, method),
                };
                if let Err(err) = outcome {
                    report(format!(
                        "cannot register method `{}.{}`: {}",
                        method.type_key(),
                        method.name(),
                        err.message()
                    ));
                }
            }
            // A type declared `external` is defined elsewhere: its method table is not ours.
            Some(TypeState::Shared(_))
                if TYPES
                    .iter()
                    .any(|e| e.key == method.type_key() && e.origin != TypeOrigin::Defined) =>
            {
                report(format!(
                    "cannot register method `{}.{}`: the type is declared `external` (defined elsewhere); add methods to a Rust subtype or register a global function instead",
                    method.type_key(), method.name()
                ))
            }
            // Another copy of this library registered the type (and its methods) first, or the
            // type failed (already reported).
            Some(_) => {}
            None => report(format!(
                "cannot register method `{}.{}`: the type is not defined by `#[derive(Object)]` in this library",
                method.type_key(), method.name()
            )),
        }
    }
    for entry in TYPES.iter() {
        if let Some(TypeState::Registered(ty)) = states.get(&entry_id(entry)) {
            if let Err(err) = finish_type(entry, *ty) {
                report(format!(
                    "cannot register the constructor or attributes of type `{}`: {}",
                    entry.key,
                    err.message()
                ));
            }
        }
    }
}

/// Phase 1 for `entry` (and, first, its local parent).
fn prepare_type(
    entry: &'static TypeEntry,
    local: &HashMap<&'static str, &'static TypeEntry>,
    states: &mut HashMap<usize, TypeState>,
) -> TypeState {
    if let Some(state) = states.get(&entry_id(entry)) {
        if *state == TypeState::InProgress {
            report(format!(
                "cannot register type `{}`: it is its own ancestor",
                entry.key
            ));
            return TypeState::Failed;
        }
        return *state;
    }
    states.insert(entry_id(entry), TypeState::InProgress);
    let parent = match local.get(entry.parent_key) {
        Some(parent_entry) => match prepare_type(parent_entry, local, states) {
            TypeState::Registered(ty) | TypeState::Shared(ty) => Ok(ty),
            _ => Err(format!(
                "parent type `{}` failed to register (see the error reported for it)",
                entry.parent_key
            )),
        },
        None => type_info::lookup_type(entry.parent_key).ok_or_else(|| {
            format!(
                "parent type `{}` is not registered (load the library that defines it first)",
                entry.parent_key
            )
        }),
    };
    let outcome = crate::base::error::panic::guard_quiet(entry.key, || match parent {
        Err(why) => Err(Error::runtime_error(why)),
        Ok(parent) => match entry.origin {
            TypeOrigin::External | TypeOrigin::ExternalOpaque => {
                check_external(entry, parent).map(TypeState::Shared)
            }
            TypeOrigin::Defined => define_type(entry, parent),
        },
    });
    let state = match outcome {
        Some(Ok(state)) => {
            if let TypeState::Registered(ty) | TypeState::Shared(ty) = state {
                entry.slot.set(ty);
            }
            state
        }
        Some(Err(err)) => {
            report(format!(
                "cannot register type `{}`: {}",
                entry.key,
                err.message()
            ));
            TypeState::Failed
        }
        None => {
            report(format!(
                "cannot register type `{}`: panic during registration",
                entry.key
            ));
            TypeState::Failed
        }
    };
    states.insert(entry_id(entry), state);
    state
}

/// Index, metadata and own fields of a type defined here.
fn define_type(entry: &'static TypeEntry, parent: RuntimeType) -> Result<TypeState> {
    if let Some(existing) = type_info::lookup_type(entry.key) {
        // Another library, or another copy of this one, registered the key first. Shared only
        // with another copy of the same Rust type: the same reflection *and* the same Rust
        // layout (skipped fields, `Rw<T>` vs `T`), which reflection alone does not show.
        let why = layout_mismatch(entry, existing, parent).or_else(|| {
            match crate::reflect::reflection::type_attr(existing.index, LAYOUT_ATTR)
                .and_then(|layout| layout.checked_cast::<std::string::String>())
            {
                Some(theirs) if theirs == entry.layout() => None,
                Some(theirs) => Some(format!(
                    "another Rust library defines it with the layout `{theirs}`, this one with \
                     `{}`",
                    entry.layout()
                )),
                None => Some("another library defines it, not a copy of this Rust type".into()),
            }
        });
        return match why {
            None => Ok(TypeState::Shared(existing)),
            Some(why) => Err(Error::runtime_error(format!(
                "type `{}` is already registered with a different layout ({why})",
                entry.key
            ))),
        };
    }
    let ty = allocate_type_index(entry.key, parent, entry.child_slots)?;
    let metadata = sys::TVMFFITypeMetadata {
        doc: byte_array(entry.doc),
        creator: entry.creator,
        total_size: entry.total_size as i32,
        structural_eq_hash_kind: entry.structural,
    };
    // SAFETY: valid metadata; the runtime copies the doc string.
    check(unsafe { sys::TVMFFITypeRegisterMetadata(ty.index, &metadata) })?;
    // Before any object of the type exists: sealing an object (as whatever type) runs the
    // check of its dynamic type.
    if let Some(seal_check) = entry.seal_check {
        let pointer = seal_check as *mut std::ffi::c_void;
        // SAFETY: the address of the type's seal check, which readers of this reserved
        // attribute call as a `SealCheck` (libraries are never unloaded).
        register_attr(ty, SEAL_CHECK_ATTR, unsafe {
            Any::from_opaque_ptr(pointer)
        })?;
    }
    Ok(TypeState::Registered(ty))
}

/// Phase 1b: the own fields of a type registered here. After every type has its index, so
/// that field defaults may make objects of any type of this library.
fn register_fields(entry: &'static TypeEntry, ty: RuntimeType) -> Result<()> {
    for field in entry.fields {
        let outcome =
            crate::base::error::panic::guard_quiet(field.name, || register_field(ty, field));
        let result = outcome.unwrap_or_else(|| {
            Err(Error::runtime_error(
                "panic while computing the field's default",
            ))
        });
        result.map_err(|err| {
            Error::runtime_error(format!("field `{}`: {}", field.name, err.message()))
        })?;
    }
    Ok(())
}

fn register_field(ty: RuntimeType, field: &FieldEntry) -> Result<()> {
    let metadata =
        crate::call::function::metadata::metadata_json(&(field.type_schema)(), field.metadata);
    // The runtime keeps its own reference to the default (or factory function).
    let default = field.default.map(|make| make());
    let info = sys::TVMFFIFieldInfo {
        name: byte_array(field.name),
        doc: byte_array(field.doc),
        metadata: byte_array(&metadata),
        flags: field.flags,
        size: field.size as i64,
        alignment: field.alignment as i64,
        offset: field.offset as i64,
        getter: Some(field.getter),
        setter: field.setter as *mut std::ffi::c_void,
        default_value_or_factory: match &default {
            Some(any) => *any.as_raw(),
            None => Any::default().into_raw(),
        },
        field_static_type_index: field.static_type_index,
    };
    // SAFETY: valid field info; the runtime copies the strings and the default.
    check(unsafe { sys::TVMFFITypeRegisterField(ty.index, &info) })
}

fn register_method(ty: RuntimeType, method: &'static MethodEntry) -> Result<()> {
    let function = method.make();
    let metadata = method.signature.metadata_with(method.metadata);
    let flags = match method.kind {
        MethodKind::Instance | MethodKind::TypeAttr => 0,
        MethodKind::Static | MethodKind::Init => {
            sys::field_flags::kTVMFFIFieldFlagBitMaskIsStaticMethod
        }
    };
    let info = sys::TVMFFIMethodInfo {
        name: byte_array(method.name()),
        doc: byte_array(method.doc),
        metadata: byte_array(&metadata),
        flags,
        method: *Any::new(function.clone()).as_raw(),
    };
    // SAFETY: valid method info; the runtime copies the strings and takes its own reference
    // to the function (`function` keeps ours alive across the call).
    let rc = unsafe { sys::TVMFFITypeRegisterMethod(ty.index, &info) };
    drop(function);
    check(rc)
}

/// Phase 3: constructor and type attributes.
fn finish_type(entry: &'static TypeEntry, ty: RuntimeType) -> Result<()> {
    let explicit_init = explicit_inits(entry.key).collect::<Vec<_>>();
    // Type attributes first, as C++'s `ObjectDef` registers them before the reflection
    // constructor (which reads `__ffi_new__` when a type has no creator).
    register_attr(ty, LAYOUT_ATTR, Any::new(entry.layout()))?;
    if let Some(copy) = (entry.shallow_copy)() {
        register_attr(ty, "__ffi_shallow_copy__", Any::new(copy))?;
    }
    // The entry is `Trusted` (only an `unsafe` call makes one): its functions are those
    // generated for this very type, each registered under the attribute it was made for.
    if let Some(new_object) = entry.new_object {
        // SAFETY: this type's own `__ffi_new__` (see above).
        let function = unsafe { new_object() };
        register_attr(ty, "__ffi_new__", Any::new(function))?;
    }
    if let Some(convert) = entry.convert {
        // SAFETY: this type's own `__ffi_convert__` (see above).
        let function = unsafe { convert() };
        register_attr(ty, "__ffi_convert__", Any::new(function))?;
    }
    register_attr(ty, "__ffi_type_final__", Any::new(entry.is_final))?;
    for (name, make) in entry.hooks {
        // SAFETY: this type's own hook, made for the attribute `name` (see above).
        let function = unsafe { make() };
        register_attr(ty, name, Any::new(function))?;
    }
    for (name, value) in entry.type_attrs {
        let value = match *value {
            MetadataValue::Int(v) => Any::new(v),
            MetadataValue::Bool(v) => Any::new(v),
            MetadataValue::Str(v) => Any::new(v),
        };
        register_attr(ty, name, value)?;
    }
    match explicit_init.as_slice() {
        [] if entry.creator.is_some() && entry.auto_init => {
            static REGISTER_INIT: GlobalCache = GlobalCache::new("ffi._RegisterFFIInit");
            REGISTER_INIT.get()?.call((ty.index,))?;
        }
        [] => {}
        // The method itself registered in source order with the others.
        [init] => register_attr(ty, "__ffi_init__", Any::new(init.make()))?,
        [first, second, ..] => {
            return Err(Error::runtime_error(format!(
                "two `#[ffi(init)]` constructors (`{}` and `{}`); keep one",
                first.name(),
                second.name()
            )))
        }
    }
    Ok(())
}

/// The `#[ffi(init)]` constructors of type `key`.
fn explicit_inits(key: &str) -> impl Iterator<Item = &'static MethodEntry> + '_ {
    METHODS
        .iter()
        .copied()
        .flatten()
        .filter(move |m| m.type_key() == key && m.kind == MethodKind::Init)
}

/// The type attribute holding a Rust-defined type's layout (`TypeEntry::layout`).
pub(crate) const LAYOUT_ATTR: &str = "__tvm_ffi_rs_layout__";

fn register_function(entry: &FunctionEntry) {
    let outcome = crate::base::error::panic::guard_quiet(entry.name, || {
        let f = (entry.make)();
        f.register_global_with_info(entry.name, entry.doc, &(entry.metadata)(), false)
    });
    match outcome {
        Some(Ok(())) => {}
        Some(Err(err)) => report(format!(
            "cannot register global function `{}`: {}",
            entry.name,
            err.message()
        )),
        None => report(format!(
            "cannot register global function `{}`: panic while creating it",
            entry.name
        )),
    }
}

extern "C" fn load_time_constructor() {
    ensure_registered();
}

/// The single load-time constructor of this artifact (see the module docs).
#[used]
#[cfg_attr(
    any(target_os = "linux", target_os = "android", target_os = "freebsd"),
    link_section = ".init_array"
)]
#[cfg_attr(target_os = "macos", link_section = "__DATA,__mod_init_func")]
static LOAD_TIME_CONSTRUCTOR: extern "C" fn() = load_time_constructor;

impl entry::TypeSlot {
    /// The resolved type; registers this library's types first if that has not happened yet.
    ///
    /// # Panics
    /// If the type did not register (see [`load_errors`]), or when called
    /// while this library's registration is running (a field default that makes an object of
    /// a type registered later).
    #[inline]
    pub fn resolve(&self, key: &str) -> RuntimeType {
        match self.get() {
            Some(ty) => ty,
            None => self.resolve_slow(key),
        }
    }

    #[cold]
    fn resolve_slow(&self, key: &str) -> RuntimeType {
        if registering_on_this_thread() {
            panic!(
                "TVM-FFI type `{key}` was used while this library's types are being registered \
                 (for example, by a field default): make such defaults a `default_factory`"
            );
        }
        ensure_registered();
        match self.get() {
            Some(ty) => ty,
            // Raised as the error it is (never "Rust panic in" this file), with what the load
            // reported about the type.
            None => crate::base::error::panic::panic_with(
                crate::base::error::Error::runtime_error(not_registered(key)),
            ),
        }
    }
}
