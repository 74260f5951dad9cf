//! A C-level `__call__` for the Python classes of a shipped package: `Point(1, 2)` calls the
//! type's `__ffi_init__` with the caller's argument tuple, no Python frame in between.
//! Keywords that fill a Rust constructor's leading parameters (`Pair(b=2, a=1)`) are put in
//! position; other keywords (`Point(1, label="p")` on a type whose init the runtime
//! generated) go as `(1, KWARGS, "label", "p")`, the runtime's keyword convention, exactly as
//! its generated `__init__` passes them (values that are the runtime's `MISSING` left out).
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
//! reads from the library's module export `__sdk_python_constructor_v1` (per library: nothing
//! is registered globally) and calls through `ctypes.PYFUNCTYPE` with the GIL held. The
//! CPython functions used are stable-ABI ones, found with `dlsym` in the process that loaded
//! the library; where that fails (no CPython in the process, or not on a Unix), the builder
//! returns null and the helper keeps its Python `__call__`.
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use super::function::export;
use super::function::signature::{FnSignature, TypeDesc};
use crate::base::value::Any;

/// A CPython object, only ever handled by pointer.
#[repr(C)]
pub struct PyObject {
    _opaque: [u8; 0],
}

/// `PyCFunctionWithKeywords`.
type PyCFunctionWithKeywords =
    unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject) -> *mut PyObject;

/// CPython's `PyMethodDef` (stable ABI).
#[repr(C)]
struct PyMethodDef {
    ml_name: *const c_char,
    ml_meth: Option<PyCFunctionWithKeywords>,
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

/// The CPython functions the builtin and its builder call.
struct PythonApi {
    tuple_new: unsafe extern "C" fn(isize) -> *mut PyObject,
    tuple_set_item: unsafe extern "C" fn(*mut PyObject, isize, *mut PyObject) -> c_int,
    tuple_get_item: unsafe extern "C" fn(*mut PyObject, isize) -> *mut PyObject,
    tuple_size: unsafe extern "C" fn(*mut PyObject) -> isize,
    dict_next: unsafe extern "C" fn(
        *mut PyObject,
        *mut isize,
        *mut *mut PyObject,
        *mut *mut PyObject,
    ) -> c_int,
    incref: unsafe extern "C" fn(*mut PyObject),
    decref: unsafe extern "C" fn(*mut PyObject),
    cfunction_new_ex:
        unsafe extern "C" fn(*const PyMethodDef, *mut PyObject, *mut PyObject) -> *mut PyObject,
    object_call: unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject) -> *mut PyObject,
    dict_size: unsafe extern "C" fn(*mut PyObject) -> isize,
}

/// The CPython functions of this process, looked up once; `None` without CPython.
fn python_api() -> Option<&'static PythonApi> {
    static API: OnceLock<Option<PythonApi>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: each symbol is the stable-ABI CPython function of that name, whose C
        // signature is the field's function pointer type.
        unsafe {
            Some(PythonApi {
                tuple_new: function(c"PyTuple_New")?,
                tuple_set_item: function(c"PyTuple_SetItem")?,
                tuple_get_item: function(c"PyTuple_GetItem")?,
                tuple_size: function(c"PyTuple_Size")?,
                dict_next: function(c"PyDict_Next")?,
                incref: function(c"Py_IncRef")?,
                decref: function(c"Py_DecRef")?,
                cfunction_new_ex: function(c"PyCFunction_NewEx")?,
                object_call: function(c"PyObject_Call")?,
                dict_size: function(c"PyDict_Size")?,
            })
        }
    })
    .as_ref()
}

/// The process's function `name` as an `F`, or `None` when there is none.
///
/// # Safety
/// `F` is a function pointer type matching the C signature of the symbol `name`.
unsafe fn function<F: Copy>(name: &std::ffi::CStr) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<*mut c_void>()) };
    let found = process_symbol(name);
    // SAFETY: a non-null code address of the symbol, read as the pointer type the caller
    // vouches for (of the same size, checked above).
    (!found.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&found) })
}

/// A symbol of the running process (its executable and the libraries loaded globally: where
/// CPython's C API lives in a Python process), or null.
#[cfg(unix)]
fn process_symbol(name: &std::ffi::CStr) -> *mut c_void {
    extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    const RTLD_DEFAULT: *mut c_void = -2isize as *mut c_void;
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();
    // SAFETY: `name` is a C string; `dlsym` only reads it.
    unsafe { dlsym(RTLD_DEFAULT, name.as_ptr()) }
}

/// No lookup off Unix: the helper keeps its Python `__call__` there.
#[cfg(not(unix))]
fn process_symbol(_name: &std::ffi::CStr) -> *mut c_void {
    std::ptr::null_mut()
}

/// The builtin's `self`: `(__ffi_init__, KWARGS, MISSING, names)`, `names` the interned
/// names of the constructor's leading positional-or-keyword parameters (empty: none known).
const MAKE: isize = 0;
const KWARGS_MARKER: isize = 1;
const MISSING: isize = 2;
const NAMES: isize = 3;

/// Calls with keywords naming more parameters than this take the `KWARGS` form.
const MAX_POSITIONAL: usize = 16;

/// The builtin's body: calls `targets[MAKE]` with the argument tuple as it came; with
/// keywords that fill the leading parameters with no gap (`Pair(a=1, b=2)`), with those values
/// in order (the Rust binder reads them the same either way); with other keywords, with the
/// arguments, the `KWARGS` marker and each keyword's name and value. Nothing here can panic.
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
        let marker = (api.tuple_get_item)(targets, KWARGS_MARKER);
        let missing = (api.tuple_get_item)(targets, MISSING);
        let names = (api.tuple_get_item)(targets, NAMES);
        let flat = match as_positional(api, args, kwargs, names, marker, missing) {
            Some(values) => values,
            None => with_keywords(api, args, kwargs, marker, missing),
        }
        .into_tuple();
        if flat.is_null() {
            return std::ptr::null_mut();
        }
        let result = (api.object_call)(make, flat, std::ptr::null_mut());
        (api.decref)(flat);
        result
    }
}

/// References taken for a new argument tuple, released unless the tuple takes them.
///
/// A keyword dictionary is read in one pass, each item's reference taken at once, before any
/// CPython allocation: allocating may run a garbage collection (on CPython before 3.12),
/// whose callbacks and finalizers run Python code that may change or free what the
/// dictionary held (a reviewer's reproduction: a `gc.callbacks` entry replacing the call's
/// keyword values made a borrowed pointer dangle).
struct OwnedItems<'a> {
    api: &'a PythonApi,
    items: Vec<*mut PyObject>,
}

impl<'a> OwnedItems<'a> {
    fn new(api: &'a PythonApi, capacity: usize) -> Self {
        OwnedItems {
            api,
            items: Vec::with_capacity(capacity),
        }
    }

    /// Takes a reference to `item`.
    ///
    /// # Safety
    /// The GIL is held and `item` is a live object.
    unsafe fn push(&mut self, item: *mut PyObject) {
        // SAFETY: the caller's contract.
        unsafe { (self.api.incref)(item) };
        self.items.push(item);
    }

    /// A new tuple of the items (their references pass to it), or null with a Python error set.
    fn into_tuple(mut self) -> *mut PyObject {
        let items = std::mem::take(&mut self.items);
        // SAFETY: the GIL is held (every `OwnedItems` is made under it); the tuple is fresh,
        // and each of its slots is written once with a reference this value owns.
        unsafe {
            let tuple = (self.api.tuple_new)(items.len() as isize);
            if tuple.is_null() {
                self.items = items; // released by `drop`
                return tuple;
            }
            for (index, item) in items.into_iter().enumerate() {
                (self.api.tuple_set_item)(tuple, index as isize, item);
            }
            tuple
        }
    }
}

impl Drop for OwnedItems<'_> {
    fn drop(&mut self) {
        for &item in &self.items {
            // SAFETY: a reference this value took, under the GIL.
            unsafe { (self.api.decref)(item) };
        }
    }
}

/// The arguments in parameter order when the keywords name parameters after the positional
/// arguments (by the identity of their interned names) and together fill a prefix of the
/// parameters, and no positional argument is the `KWARGS` marker; `None` otherwise.
///
/// # Safety
/// The GIL is held; `args` and `names` are tuples, `kwargs` a dictionary, `marker` and
/// `missing` live objects.
unsafe fn as_positional<'a>(
    api: &'a PythonApi,
    args: *mut PyObject,
    kwargs: *mut PyObject,
    names: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
) -> Option<OwnedItems<'a>> {
    // SAFETY: the caller's contract. Items are borrowed from the tuples (which never change)
    // and from the dictionary, whose pass ends before anything can run Python code: the
    // references are taken right after it, before any allocation.
    unsafe {
        let (positional, known) = ((api.tuple_size)(args), (api.tuple_size)(names));
        let (Ok(positional), Ok(known)) = (usize::try_from(positional), usize::try_from(known))
        else {
            return None;
        };
        if known > MAX_POSITIONAL || positional > known {
            return None;
        }
        let mut values = [std::ptr::null_mut::<PyObject>(); MAX_POSITIONAL];
        for (index, value) in values.iter_mut().enumerate().take(positional) {
            *value = (api.tuple_get_item)(args, index as isize);
            if *value == marker {
                // The runtime's `__init__` reads what follows as name/value pairs.
                return None;
            }
        }
        let mut filled = positional;
        let (mut position, mut name, mut value) =
            (0isize, std::ptr::null_mut(), std::ptr::null_mut());
        while (api.dict_next)(kwargs, &mut position, &mut name, &mut value) != 0 {
            let slot = (positional..known)
                .find(|&index| (api.tuple_get_item)(names, index as isize) == name);
            match slot {
                Some(index) if value != missing && values[index].is_null() => {
                    values[index] = value;
                    filled = filled.max(index + 1);
                }
                _ => return None,
            }
        }
        let values = &values[..filled];
        if values.iter().any(|value| value.is_null()) {
            return None;
        }
        // `Vec::with_capacity` is Rust's allocator: no Python code runs before the references
        // are taken.
        let mut owned = OwnedItems::new(api, filled);
        for &value in values {
            owned.push(value);
        }
        Some(owned)
    }
}

/// `(*args, marker, name, value, ...)` for the keywords whose value is not `missing`.
///
/// # Safety
/// The GIL is held; `args` is a tuple, `kwargs` a dictionary, `marker` and `missing` live
/// objects.
unsafe fn with_keywords<'a>(
    api: &'a PythonApi,
    args: *mut PyObject,
    kwargs: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
) -> OwnedItems<'a> {
    // SAFETY: the caller's contract. One pass over the dictionary takes a reference to each
    // item as it comes (`Vec` growth is Rust's allocator: no Python code runs meanwhile).
    unsafe {
        let positional = (api.tuple_size)(args).max(0);
        let keywords = (api.dict_size)(kwargs).max(0);
        let mut owned = OwnedItems::new(api, (positional + 1 + 2 * keywords) as usize);
        for index in 0..positional {
            owned.push((api.tuple_get_item)(args, index));
        }
        owned.push(marker);
        let (mut position, mut name, mut value) =
            (0isize, std::ptr::null_mut(), std::ptr::null_mut());
        while (api.dict_next)(kwargs, &mut position, &mut name, &mut value) != 0 {
            if value != missing {
                owned.push(name);
                owned.push(value);
            }
        }
        owned
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
    // SAFETY: the caller's contract; `PyTuple_SetItem` steals the references taken for it,
    // and the tuple's reference passes to the builtin (or is dropped when that fails).
    unsafe {
        // `PyTuple_Size` of anything else sets a `SystemError`.
        if (api.tuple_size)(names) < 0 {
            return std::ptr::null_mut();
        }
        let targets = (api.tuple_new)(4);
        if targets.is_null() {
            return std::ptr::null_mut();
        }
        let items = [
            (MAKE, make),
            (KWARGS_MARKER, marker),
            (MISSING, missing),
            (NAMES, names),
        ];
        for (index, item) in items {
            (api.incref)(item);
            if (api.tuple_set_item)(targets, index, item) != 0 {
                (api.decref)(targets);
                return std::ptr::null_mut();
            }
        }
        let builtin = (api.cfunction_new_ex)(&CONSTRUCT_DEF, targets, std::ptr::null_mut());
        (api.decref)(targets);
        builtin
    }
}

/// The module export `__sdk_python_constructor_v1` (`tvm_ffi.load_module(lib)` then
/// `mod.get_function("__sdk_python_constructor_v1")()`): the address of
/// [`TVMFFISdkPythonConstructor`] in this library, for `ctypes`. The name carries the
/// builder's signature version: a change of its parameters takes a new name, so that a
/// package's `_ffi_api.py` from another SDK release finds no export (and keeps its Python
/// `__call__`) rather than calling the builder with the wrong arguments.
///
/// # Safety
/// The `TVMFFISafeCallType` contract.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi___sdk_python_constructor_v1(
    _self: *mut c_void,
    args: *const crate::abi::sys::TVMFFIAny,
    num_args: i32,
    result: *mut crate::abi::sys::TVMFFIAny,
) -> c_int {
    static SIGNATURE: FnSignature = FnSignature {
        owner: "",
        name: std::borrow::Cow::Borrowed("__sdk_python_constructor_v1"),
        params: std::borrow::Cow::Borrowed(&[]),
        ret: TypeDesc::of::<i64>(),
        names: &[],
    };
    // SAFETY: the caller's contract, passed on.
    unsafe {
        export::call(
            &SIGNATURE,
            |_, _| {
                Ok(Any::new(
                    TVMFFISdkPythonConstructor as *const () as usize as i64,
                ))
            },
            args,
            num_args,
            result,
        )
    }
}
