//! Queries against the runtime's type registry: keys, indices, ancestry.
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::builtin::{ArrayObj, StringObj};
use super::types::RuntimeType;
use crate::abi::sys::{self, type_index as ti};

/// The registry entry of a type index, if any. Crate-private: the runtime mutates the entry
/// (its field and method tables grow) while the reference lives. An index the runtime never
/// registered answers `None` (`TVMFFIGetTypeInfo` would end the process), whoever asks.
pub(crate) fn type_info(index: i32) -> Option<&'static sys::TVMFFITypeInfo> {
    if !is_registered(index) {
        return None;
    }
    // SAFETY: TVMFFIGetTypeInfo returns null or a pointer into the registry, which lives (and
    // never moves its entries) until process exit.
    unsafe { sys::TVMFFIGetTypeInfo(index).as_ref() }
}

/// The key of a registered type index (`"int"`, `"ffi.String"`, `"my_ext.Point"` ...).
///
/// `index` must be registered (the runtime ends the process otherwise): an index read from a
/// live object or value is. `crate::reflection` checks indices that come from anywhere else.
pub fn type_key_of_index(index: i32) -> &'static str {
    if index == sys::type_index::kTVMFFIAny {
        return "Any";
    }
    match type_info(index) {
        Some(info) => {
            // SAFETY: type keys are owned by the registry for the life of the process.
            std::str::from_utf8(unsafe { info.type_key.as_bytes() }).unwrap_or("<invalid>")
        }
        None => "<unregistered>",
    }
}

/// The value of the type attribute `name` of exactly the type `index`, borrowed from the
/// registry (which keeps it until the attribute is set again); `None` when unset.
pub(crate) fn type_attr_raw(index: i32, name: &str) -> Option<sys::TVMFFIAny> {
    let name = sys::TVMFFIByteArray::from_bytes(name.as_bytes());
    // SAFETY: valid name; the column (if any) lives in the registry.
    let column = unsafe { sys::TVMFFIGetTypeAttrColumn(&name).as_ref() }?;
    let slot = index
        .checked_sub(column.begin_index)
        .filter(|&slot| (0..column.size).contains(&slot))?;
    // SAFETY: `data` has `size` entries.
    let raw = unsafe { column.data.add(slot as usize).read() };
    (raw.type_index != ti::kTVMFFINone).then_some(raw)
}

/// Looks a type up by key.
///
/// ```
/// use tvm_ffi::{builtin::StringObj, reflection, ObjectType};
/// assert_eq!(reflection::lookup_type("ffi.String"), Some(StringObj::runtime_type()));
/// assert_eq!(reflection::lookup_type("no_such.Type"), None);
/// ```
pub fn lookup_type(key: &str) -> Option<RuntimeType> {
    let index = index_of_key(key)?;
    let info = type_info(index)?;
    Some(RuntimeType {
        index,
        depth: info.type_depth,
    })
}

/// The index registered for `key`, without raising an error on a miss where the runtime allows:
/// registration probes every new key, and the first error a process raises costs ~200 ms (the
/// runtime sets up its backtrace machinery), so a raised miss would make every library load slow.
fn index_of_key(key: &str) -> Option<i32> {
    let key = sys::TVMFFIByteArray::from_bytes(key.as_bytes());
    if has_query_only_lookup() {
        // SAFETY: key is a valid byte array for the call; parent index -2 asks the runtime
        // (0.1.13 and later) to look the key up only: no allocation, -2 on a miss.
        let index = unsafe { sys::TVMFFITypeGetOrAllocIndex(&key, -1, 0, 0, 0, -2) };
        return (index >= 0).then_some(index);
    }
    let mut index = 0i32;
    // SAFETY: key is a valid byte array for the duration of the call.
    let rc = unsafe { sys::TVMFFITypeKeyToIndex(&key, &mut index) };
    if rc != 0 {
        // The runtime raises an error into TLS on a miss; drop it.
        discard_raised_error();
        return None;
    }
    Some(index)
}

/// Whether the runtime answers `TVMFFITypeGetOrAllocIndex(.., parent = -2)` as a query
/// (tvm-ffi 0.1.13 and later; older runtimes treat -2 as a missing parent and end the process).
fn has_query_only_lookup() -> bool {
    static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        let mut version = sys::TVMFFIVersion {
            major: 0,
            minor: 0,
            patch: 0,
        };
        // SAFETY: valid output slot.
        unsafe { sys::TVMFFIGetVersion(&mut version) };
        (version.major, version.minor, version.patch) >= (0, 1, 13)
    })
}

/// Type indices the runtime is known to have registered, one bit each, for indices below
/// `64 * KNOWN_WORDS` (65 536; larger ones are looked up every time): set from the runtime's
/// list of registered keys and never cleared (the runtime never unregisters a type). A bit is
/// set with release and read with acquire ordering: a thread that sees it may read the
/// runtime's entry for that index.
const KNOWN_WORDS: usize = 1024;
static KNOWN: [AtomicU64; KNOWN_WORDS] = [const { AtomicU64::new(0) }; KNOWN_WORDS];

/// Whether the runtime has a type at `index` (`-1`, `Any`, is not a table entry), asked
/// without the runtime's own lookup (`TVMFFIGetTypeInfo` ends the process on an index it never
/// registered): one bit test for an index seen before, else a read of every registered key.
pub(crate) fn is_registered(index: i32) -> bool {
    let Ok(slot) = usize::try_from(index) else {
        return false;
    };
    match KNOWN.get(slot / 64) {
        Some(word) if word.load(Ordering::Acquire) & (1 << (slot % 64)) != 0 => true,
        _ => refresh_registered(index),
    }
}

/// Marks every registered type's index known; whether `index` is among them.
#[cold]
fn refresh_registered(index: i32) -> bool {
    let mut found = false;
    for_each_registered_key(|key| {
        let Some(registered) = index_of_key(key) else {
            return;
        };
        found |= registered == index;
        let bit = usize::try_from(registered)
            .ok()
            .and_then(|slot| Some((KNOWN.get(slot / 64)?, slot % 64)));
        if let Some((word, bit)) = bit {
            word.fetch_or(1 << bit, Ordering::Release);
        }
    });
    found
}

/// The runtime's `ffi.GetRegisteredTypeKeys` (one reference, kept for the process), handed
/// over by the registry while the library loads ([`keep_registered_keys_function`]): the
/// global function table is unsynchronised, and the module of the lock Rust's lookups hold
/// (`base::lock`) uses this one, so this one looks the function up itself only if the registry
/// did not.
static REGISTERED_KEYS: std::sync::OnceLock<KeysFunction> = std::sync::OnceLock::new();

/// An owned reference to a function object of the runtime.
struct KeysFunction(NonNull<sys::TVMFFIObject>);
// SAFETY: the runtime's function objects may be called from any thread; the reference is
// never released.
unsafe impl Send for KeysFunction {}
// SAFETY: as for `Send`: calls only read the object.
unsafe impl Sync for KeysFunction {}

/// Keeps `function`, an owned reference to the runtime's `ffi.GetRegisteredTypeKeys` that the
/// caller looked up under the global function table's lock, for [`for_each_registered_key`].
/// A second call releases its reference.
///
/// # Safety
/// `function` is an owned reference to the runtime's `ffi.GetRegisteredTypeKeys`.
pub(crate) unsafe fn keep_registered_keys_function(function: NonNull<sys::TVMFFIObject>) {
    if REGISTERED_KEYS.set(KeysFunction(function)).is_err() {
        // SAFETY: the caller's reference, not kept.
        unsafe { super::dec_ref(function) };
    }
}

/// The kept `ffi.GetRegisteredTypeKeys`; looked up (without the global function table's lock)
/// and kept only when the registry has not handed it over (this library's registration never
/// ran).
fn registered_keys_function() -> Option<NonNull<sys::TVMFFIObject>> {
    if let Some(KeysFunction(function)) = REGISTERED_KEYS.get() {
        return Some(*function);
    }
    let name = sys::TVMFFIByteArray::from_bytes(b"ffi.GetRegisteredTypeKeys");
    let mut function: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: a valid name and output slot; the runtime hands over one reference, or none.
    if unsafe { sys::TVMFFIFunctionGetGlobal(&name, &mut function) } != 0 {
        discard_raised_error();
        return None;
    }
    // SAFETY: the owned reference the runtime handed over.
    unsafe { keep_registered_keys_function(NonNull::new(function as *mut sys::TVMFFIObject)?) };
    REGISTERED_KEYS
        .get()
        .map(|KeysFunction(function)| *function)
}

/// Calls `f` with the key of every registered type (the runtime's `ffi.GetRegisteredTypeKeys`,
/// called and read through the C ABI: this layer sits below `Function` and `Array`). Nothing
/// when the runtime has no such function or it fails.
fn for_each_registered_key(mut f: impl FnMut(&str)) {
    let Some(function) = registered_keys_function() else {
        return;
    };
    let mut result = sys::TVMFFIAny::NONE;
    // SAFETY: a live function object, no arguments, a result slot set to `None`.
    let rc = unsafe {
        sys::TVMFFIFunctionCall(function.as_ptr() as _, std::ptr::null_mut(), 0, &mut result)
    };
    if rc != 0 {
        discard_raised_error();
        return;
    }
    let owned = if result.type_index >= ti::kTVMFFIStaticObjectBegin {
        // SAFETY: an object value: `v_obj` is its object, whose one reference the result owns.
        NonNull::new(unsafe { result.value.v_obj })
    } else {
        None
    };
    if result.type_index == ti::kTVMFFIArray {
        if let Some(array) = owned {
            // SAFETY: an `ffi.Array` is the header then its sequence cell, whose `data` holds
            // `size` values, alive while the array is (this function holds it).
            let keys = unsafe {
                let cell = &(*(array.as_ptr().add(1) as *const ArrayObj)).seq;
                std::slice::from_raw_parts(
                    cell.data as *const sys::TVMFFIAny,
                    cell.size.max(0) as usize,
                )
            };
            for key in keys {
                if let Some(key) = string_value(key) {
                    f(key);
                }
            }
        }
    }
    if let Some(object) = owned {
        // SAFETY: the result's reference, released once.
        unsafe { super::dec_ref(object) };
    }
}

/// The text of a string value (a small string, or an `ffi.String` object), if it is one and
/// is UTF-8; borrowed from `value`'s storage.
fn string_value(value: &sys::TVMFFIAny) -> Option<&str> {
    let bytes = match value.type_index {
        ti::kTVMFFISmallStr => {
            // SAFETY: a small string keeps its `small_str_len` (at most 7) bytes inline.
            let inline = unsafe { &value.value.v_bytes };
            inline.get(..value.zero_padding as usize)?
        }
        ti::kTVMFFIStr => {
            // SAFETY: an `ffi.String` object is the header then its byte array, which lives as
            // long as the object (held by the array that `value` is an element of).
            unsafe {
                let object = value.value.v_obj as *const sys::TVMFFIObject;
                let bytes = &(*(object.add(1) as *const StringObj)).bytes;
                std::slice::from_raw_parts(bytes.data as *const u8, bytes.size)
            }
        }
        _ => return None,
    };
    std::str::from_utf8(bytes).ok()
}

/// [`is_instance_index`] for an index from anywhere: `false` for one the runtime never
/// registered (whose ancestry the runtime would end the process on being asked).
#[inline]
pub(crate) fn is_instance_of_any_index(index: i32, target: RuntimeType) -> bool {
    index == target.index || (is_registered(index) && is_instance_index(index, target))
}

/// Whether an object of dynamic type `index` is an instance of `target`; `index` must be
/// registered (see [`type_key_of_index`]).
#[inline]
pub fn is_instance_index(index: i32, target: RuntimeType) -> bool {
    if index == target.index {
        return true;
    }
    if target.index == sys::type_index::kTVMFFIObject {
        // Every object, and no plain value (`int`, a small string), is an `ffi.Object`.
        return index >= sys::type_index::kTVMFFIStaticObjectBegin;
    }
    // Parents are always registered (and so indexed) before their children.
    if index < target.index {
        return false;
    }
    match type_info(index) {
        // `target` may come from anywhere (its fields are public): its depth indexes the
        // ancestor table only when it lies inside it.
        Some(info) if target.depth >= 0 && info.type_depth > target.depth => {
            // SAFETY: type_ancestors has type_depth entries, each a valid registry pointer,
            // and 0 <= target.depth < type_depth.
            unsafe {
                let ancestor = *info.type_ancestors.add(target.depth as usize);
                (*ancestor).type_index == target.index
            }
        }
        _ => false,
    }
}

/// The own fields a type registered (inherited fields are listed by its ancestors), copied
/// out of the registry: its table moves when a field is added. The names, docs and metadata
/// the copies point to are owned by the registry for the life of the process; the default
/// values are borrowed views. `index` must be registered (see [`type_key_of_index`]).
pub fn fields(index: i32) -> Vec<sys::TVMFFIFieldInfo> {
    match type_info(index) {
        // SAFETY: `fields` has `num_fields` entries; each is copied bitwise (plain data and
        // pointers into registry-owned storage) before the registry can reallocate the table.
        Some(info) if info.num_fields > 0 => (0..info.num_fields as usize)
            .map(|i| unsafe { std::ptr::read(info.fields.add(i)) })
            .collect(),
        _ => Vec::new(),
    }
}

/// The own methods a type registered, copied out of the registry (see [`fields`]).
pub fn methods(index: i32) -> Vec<sys::TVMFFIMethodInfo> {
    match type_info(index) {
        // SAFETY: as in `fields`; the method `Any`s are borrowed views of registry-owned values.
        Some(info) if info.num_methods > 0 => (0..info.num_methods as usize)
            .map(|i| unsafe { std::ptr::read(info.methods.add(i)) })
            .collect(),
        _ => Vec::new(),
    }
}

/// Drops the error a failed runtime call raised on this thread (for queries where a miss is an
/// answer, not an error).
pub(crate) fn discard_raised_error() {
    let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: valid output slot; ownership of the raised error (if any) moves to us.
    unsafe { sys::TVMFFIErrorMoveFromRaised(&mut out) };
    if let Some(ptr) = std::ptr::NonNull::new(out as *mut sys::TVMFFIObject) {
        // SAFETY: we own the one reference the runtime handed over.
        unsafe { crate::base::object::dec_ref(ptr) };
    }
}
