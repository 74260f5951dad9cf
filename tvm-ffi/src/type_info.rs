//! Queries against the runtime's type registry: keys, indices, ancestry.
use crate::object::RuntimeType;
use crate::sys;

/// The registry entry of a type index, if any.
pub fn type_info(index: i32) -> Option<&'static sys::TVMFFITypeInfo> {
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
        // SAFETY: type keys are owned by the registry for the life of the process.
        Some(info) => {
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
        drop(crate::error::Error::take_raised());
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
        Some(info) if info.type_depth > target.depth => {
            // SAFETY: type_ancestors has type_depth entries, each a valid registry pointer.
            unsafe {
                let ancestor = *info.type_ancestors.add(target.depth as usize);
                (*ancestor).type_index == target.index
            }
        }
        _ => false,
    }
}

/// The runtime's reflection-based printout of an object (`ffi.ReprPrint`), as Python's `repr`.
pub fn repr_of(obj: &crate::ObjectRef<crate::builtin::Object>) -> Option<String> {
    static REPR: crate::function::GlobalCache = crate::function::GlobalCache::new("ffi.ReprPrint");
    let f = REPR.get().ok()?;
    let out = f.call((obj,)).ok()?;
    out.try_cast::<String>()
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

/// A type attribute (`__ffi_init__`, `__ffi_shallow_copy__`, ...) registered for exactly
/// this type index.
pub fn type_attr(index: i32, name: &str) -> Option<crate::Any> {
    let name = sys::TVMFFIByteArray::from_bytes(name.as_bytes());
    // SAFETY: valid name; the column (if any) lives in the registry.
    let column = unsafe { sys::TVMFFIGetTypeAttrColumn(&name).as_ref() }?;
    let slot = index.checked_sub(column.begin_index)?;
    if slot < 0 || slot >= column.size {
        return None;
    }
    // SAFETY: `data` has `size` entries; AnyView is repr(transparent) over TVMFFIAny.
    let view = unsafe { &*(column.data.add(slot as usize) as *const crate::AnyView<'static>) };
    (!view.is_none()).then(|| view.to_owned())
}
