//! Load-time registration: how generated code gets types, fields, methods and functions into
//! libtvm_ffi's own registries.
//!
//! # Contract
//!
//! - **Collection at link time.** The macros emit one `static` descriptor per item into a
//!   [`linkme`] distributed slice ([`FUNCTIONS`], later `TYPES` and `METHODS`). The linker
//!   gathers every descriptor of the final artifact (cdylib, executable, test binary) into one
//!   contiguous array; nothing runs per item before `main`.
//! - **One load-time constructor per artifact.** This crate places a single function in
//!   `.init_array`; it runs inside `dlopen` (or before `main`) and calls [`ensure_registered`],
//!   which walks the complete slices once. Because every descriptor is already in place when
//!   the first constructor runs, the outcome never depends on the order in which the loader runs
//!   constructors, and parents are registered before children by sorting on the key graph, not
//!   by declaration or link order.
//! - **Only libtvm_ffi is called** during registration (the loader lock is held, and from Python
//!   the GIL): no Python callbacks, no blocking on other threads.
//! - **Never abort.** A failure (version mismatch, duplicate global name, conflicting type) is
//!   recorded in [`load_errors`] and printed to stderr naming the function or type key; the rest
//!   of the library still registers. Panics are caught.
//! - **Never unload.** The registries keep raw pointers into the library, so the constructor
//!   also pins the library with `RTLD_NODELETE` (and the workspace links cdylibs with
//!   `-z nodelete`).
//! - **Loading twice.** Loading the same file again is a no-op (the loader returns the same
//!   handle and runs no constructor). A second *copy* of a library (another path) registering the
//!   same global names gets "already registered" load errors for them, and keeps using its own
//!   functions internally; the first registration stays in force.
use std::sync::{Mutex, Once};

use crate::function::Function;

/// A global function defined with `#[ffi_func(name = ...)]`.
pub struct FunctionEntry {
    /// Global name.
    pub name: &'static str,
    /// Doc string (from `///` comments).
    pub doc: &'static str,
    /// Creates the function object.
    pub make: fn() -> Function,
    /// The metadata JSON (`{"type_schema":"..."}`).
    pub metadata: fn() -> String,
}

/// All global functions of the artifact.
#[linkme::distributed_slice]
pub static FUNCTIONS: [FunctionEntry];

static LOAD_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());
static REGISTER: Once = Once::new();

/// Registration failures of this artifact (empty when everything registered).
pub fn load_errors() -> Vec<String> {
    LOAD_ERRORS.lock().map(|v| v.clone()).unwrap_or_default()
}

fn report(message: String) {
    eprintln!("tvm-ffi: {message}");
    if let Ok(mut errors) = LOAD_ERRORS.lock() {
        errors.push(message);
    }
}

/// Registers everything collected in this artifact, once. Called by the load-time
/// constructor; calling it again is cheap and does nothing.
pub fn ensure_registered() {
    REGISTER.call_once(|| {
        crate::boundary::guard_quiet("tvm-ffi registration", register_all);
    });
}

fn register_all() {
    crate::boundary::install_panic_hook();
    if let Err(err) = crate::version::ensure_compatible() {
        report(format!("nothing registered: {}", err.message()));
        return;
    }
    pin_library();
    for entry in FUNCTIONS.iter() {
        register_function(entry);
    }
}

fn register_function(entry: &FunctionEntry) {
    let outcome = crate::boundary::guard_quiet(entry.name, || {
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

/// Marks the artifact containing this code as never-unloadable (`RTLD_NODELETE`): the runtime
/// keeps pointers to its functions forever.
fn pin_library() {
    #[repr(C)]
    struct DlInfo {
        fname: *const std::ffi::c_char,
        fbase: *mut std::ffi::c_void,
        sname: *const std::ffi::c_char,
        saddr: *mut std::ffi::c_void,
    }
    extern "C" {
        fn dladdr(addr: *const std::ffi::c_void, info: *mut DlInfo) -> i32;
        fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    }
    const RTLD_LAZY: i32 = 0x1;
    const RTLD_NOLOAD: i32 = 0x4;
    const RTLD_NODELETE: i32 = 0x1000;
    let mut info = DlInfo {
        fname: std::ptr::null(),
        fbase: std::ptr::null_mut(),
        sname: std::ptr::null(),
        saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`; dlopen with RTLD_NOLOAD only
    // bumps flags on an already-loaded object (the one containing this function).
    unsafe {
        if dladdr(pin_library as *const std::ffi::c_void, &mut info) != 0 && !info.fname.is_null() {
            let _ = dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        }
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

/// Allocates (or finds) the runtime index of type `key` under `parent`.
///
/// The runtime returns the existing index for a known key without checking the parent, so this
/// checks it: a key already registered under another parent is an error naming the key.
pub fn allocate_type_index(
    key: &str,
    parent: crate::object::RuntimeType,
    is_final: bool,
) -> crate::Result<crate::object::RuntimeType> {
    use crate::object::RuntimeType;
    if let Some(existing) = crate::type_info::lookup_type(key) {
        let info = crate::type_info::type_info(existing.index);
        // SAFETY: ancestors has `type_depth` valid entries.
        let actual_parent = info
            .filter(|i| i.type_depth > 0)
            .map(|i| unsafe { (**i.type_ancestors.add((i.type_depth - 1) as usize)).type_index });
        if actual_parent != Some(parent.index) || existing.depth != parent.depth + 1 {
            return Err(crate::Error::runtime_error(format!(
                "type `{key}` is already registered with parent `{}`, not `{}`",
                actual_parent.map_or("<none>", crate::type_info::type_key_of_index),
                crate::type_info::type_key_of_index(parent.index)
            )));
        }
        return Ok(existing);
    }
    let key_bytes = crate::sys::TVMFFIByteArray::from_bytes(key.as_bytes());
    let (child_slots, can_overflow) = if is_final { (0, 0) } else { (0, 1) };
    // SAFETY: valid key; the runtime copies it. -1 asks for a dynamic index.
    let index = unsafe {
        crate::sys::TVMFFITypeGetOrAllocIndex(
            &key_bytes,
            -1,
            parent.depth + 1,
            child_slots,
            can_overflow,
            parent.index,
        )
    };
    if index < 0 {
        return Err(crate::Error::from_return_code(index));
    }
    Ok(RuntimeType {
        index,
        depth: parent.depth + 1,
    })
}
