//! Queries against the runtime's type registry: keys, indices, ancestry.
use super::types::RuntimeType;
use crate::abi::sys;

/// The registry entry of a type index, if any. Crate-private: the runtime mutates the entry
/// (its field and method tables grow) while the reference lives.
pub(crate) fn type_info(index: i32) -> Option<&'static sys::TVMFFITypeInfo> {
    // SAFETY: TVMFFIGetTypeInfo returns null or a pointer into the registry, which lives (and
    // never moves its entries) until process exit.
    unsafe { sys::TVMFFIGetTypeInfo(index).as_ref() }
}

/// The key of a registered type index (`"int"`, `"ffi.String"`, `"my_ext.Point"` ...).
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

/// Looks a type up by key.
pub fn lookup_type(key: &str) -> Option<RuntimeType> {
    let key = sys::TVMFFIByteArray::from_bytes(key.as_bytes());
    let mut index = 0i32;
    // SAFETY: key is a valid byte array for the duration of the call.
    let rc = unsafe { sys::TVMFFITypeKeyToIndex(&key, &mut index) };
    if rc != 0 {
        // The runtime raises an error into TLS on a miss; drop it.
        discard_raised_error();
        return None;
    }
    let info = type_info(index)?;
    Some(RuntimeType {
        index,
        depth: info.type_depth,
    })
}

/// Whether an object of dynamic type `index` is an instance of `target`.
#[inline]
pub fn is_instance_index(index: i32, target: RuntimeType) -> bool {
    if index == target.index || target.index == sys::type_index::kTVMFFIObject {
        return true;
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
/// values are borrowed views.
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
