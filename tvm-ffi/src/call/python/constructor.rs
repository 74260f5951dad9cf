//! A C-level `__call__` for the Python classes of a shipped package: `Point(1, 2)` calls the
//! type's `__ffi_init__` with the caller's argument tuple, no Python frame in between;
//! keywords are passed as `keywords` puts them.
//!
//! CPython calls a metaclass's `__call__` without binding it when it is a builtin function
//! (no descriptor), so `type(Point).__call__ = <builtin>` makes `Point(1, 2)` one C call into
//! the builtin's body below, which hands the argument tuple on to the `ffi.Function` that
//! `__ffi_init__` is. Python itself offers no C callable that picks a target by whether
//! keywords came, and the runtime's `Function.__call__` refuses keywords: a Python `__call__`
//! doing that choice cost 150 ns of the 375 ns a construction took, and the keyword
//! repacking in Python about 700 ns.
//!
//! The builtin is made by [`TVMFFISdkPythonConstructor`], whose address the package's helper
//! reads from the library's module export `__sdk_python_constructor_v1`.
use std::ffi::{c_char, c_int};

use super::{keywords, new_tuple, python_api, PyObject, TernaryFunc};

/// CPython's `PyMethodDef` (stable ABI).
#[repr(C)]
struct PyMethodDef {
    ml_name: *const c_char,
    ml_meth: Option<TernaryFunc>,
    ml_flags: c_int,
    ml_doc: *const c_char,
}

// SAFETY: immutable after construction; its pointers are to static strings.
unsafe impl Sync for PyMethodDef {}

/// `METH_VARARGS | METH_KEYWORDS`: the body receives the caller's argument tuple and keyword
/// dictionary as they are (no unpacking into a vector and back into a tuple).
const METH_VARARGS_KEYWORDS: c_int = 0x0001 | 0x0002;

/// The builtin's definition; CPython keeps a pointer to it for the builtin's lifetime.
static CONSTRUCT_DEF: PyMethodDef = PyMethodDef {
    ml_name: c"__call__".as_ptr(),
    ml_meth: Some(construct),
    ml_flags: METH_VARARGS_KEYWORDS,
    ml_doc: c"Constructs the class through its `__ffi_init__`.".as_ptr(),
};

/// The builtin's `self`: `(__ffi_init__, KWARGS, MISSING, names)`, `names` the interned
/// names of the constructor's leading positional-or-keyword parameters (empty: none known).
const MAKE: isize = 0;
/// Where `keywords::call_repacked` finds `KWARGS`, `MISSING` and `names`.
const KWARGS_MARKER: isize = 1;

/// The builtin's body: calls `targets[MAKE]` with the argument tuple as it came, or with the
/// tuple `keywords` makes of the arguments and keywords. Nothing here can panic.
unsafe extern "C" fn construct(
    targets: *mut PyObject,
    args: *mut PyObject,
    kwargs: *mut PyObject,
) -> *mut PyObject {
    // The builtin exists only once the lookup succeeded.
    let Some(api) = python_api() else {
        return std::ptr::null_mut();
    };
    // SAFETY: CPython calls this with the GIL held, `targets` the builtin's `self` (the
    // 4-tuple its builder made, alive during the call), `args` a tuple and `kwargs` null or a
    // dictionary (the caller's references, alive during the call); items read from the
    // tuples are borrowed from them, and tuples never change.
    unsafe {
        let make = (api.tuple_get_item)(targets, MAKE);
        if kwargs.is_null() || (api.dict_size)(kwargs) == 0 {
            return (api.object_call)(make, args, std::ptr::null_mut());
        }
        keywords::call_repacked(api, targets, KWARGS_MARKER, args, kwargs, |flat| {
            (api.object_call)(make, flat, std::ptr::null_mut())
        })
    }
}

/// Makes the builtin `__call__` for a class whose `__ffi_init__` is `make`; `marker` and
/// `missing` are the runtime's `core.KWARGS` and `core.MISSING`, `names` a tuple of the
/// interned names of `make`'s leading positional-or-keyword parameters (empty when unknown:
/// every keyword call then takes the `KWARGS` form). Returns a new reference, or
/// null (with a Python error set where CPython set one) when CPython's functions cannot be
/// found or an allocation fails.
///
/// # Safety
/// Called with the GIL held (ctypes' `PYFUNCTYPE`), with four live Python objects; `names`
/// is a tuple (checked).
#[no_mangle]
pub unsafe extern "C" fn TVMFFISdkPythonConstructor(
    make: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
    names: *mut PyObject,
) -> *mut PyObject {
    let Some(api) = python_api() else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's contract; the tuple's reference passes to the builtin (or is
    // dropped when that fails).
    unsafe {
        // `PyTuple_Size` of anything else sets a `SystemError`.
        if (api.tuple_size)(names) < 0 {
            return std::ptr::null_mut();
        }
        // `MAKE`, then from `KWARGS_MARKER` on what `keywords::call_repacked` reads.
        let targets = new_tuple(api, &[make, marker, missing, names]);
        if targets.is_null() {
            return std::ptr::null_mut();
        }
        let definition: *const PyMethodDef = &CONSTRUCT_DEF;
        let builtin = (api.cfunction_new_ex)(definition.cast(), targets, std::ptr::null_mut());
        (api.decref)(targets);
        builtin
    }
}

builder_export!(
    __tvm_ffi___sdk_python_constructor_v1,
    "__sdk_python_constructor_v1",
    TVMFFISdkPythonConstructor
);
