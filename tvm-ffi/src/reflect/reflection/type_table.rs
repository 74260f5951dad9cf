//! Queries of the runtime's type table with a type index from anywhere. The runtime's own
//! lookup (`TVMFFIGetTypeInfo`) ends the process on an index it never registered, so each query
//! here first checks its index against the registered types.
use crate::abi::sys;
use crate::base::object::{type_info, RuntimeType};

/// The key of a registered type index (`"int"`, `"ffi.String"`, `"my_ext.Point"` ...);
/// `"Any"` for `-1` and `"<unregistered>"` for an index the runtime does not know.
pub fn type_key_of_index(index: i32) -> &'static str {
    if index == sys::type_index::kTVMFFIAny || type_info::is_registered(index) {
        type_info::type_key_of_index(index)
    } else {
        "<unregistered>"
    }
}

/// The own fields a type registered (inherited fields are listed by its ancestors), copied
/// out of the registry: its table moves when a field is added. The names, docs and metadata
/// the copies point to are owned by the registry for the life of the process; the default
/// values are borrowed views. Empty for an index the runtime does not know.
#[doc(hidden)] // the raw ABI struct: for tests and tools, not an API of its own
pub fn fields(index: i32) -> Vec<sys::TVMFFIFieldInfo> {
    if type_info::is_registered(index) {
        type_info::fields(index)
    } else {
        Vec::new()
    }
}

/// The own methods a type registered, copied out of the registry (see [`fields`]). Empty for an
/// index the runtime does not know.
pub fn methods(index: i32) -> Vec<sys::TVMFFIMethodInfo> {
    if type_info::is_registered(index) {
        type_info::methods(index)
    } else {
        Vec::new()
    }
}

/// Whether a value of runtime type `index` is an instance of `target`: an object of that type
/// or a subtype (a plain value, `int` or a small string, is an instance of no object type);
/// `false` for an index the runtime does not know.
pub fn is_instance_index(index: i32, target: RuntimeType) -> bool {
    type_info::is_registered(index) && type_info::is_instance_index(index, target)
}
