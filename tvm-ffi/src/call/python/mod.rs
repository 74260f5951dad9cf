//! C-level callables for the Python surface of a shipped package, where the runtime's own
//! Python objects cost a Python frame or refuse keywords:
//! - `constructor`: the `__call__` of a package's classes (`Point(1, 2)` hands the argument
//!   tuple straight to the type's `__ffi_init__`);
//! - `function`: the package's module functions, as instances of a C-level subclass of the
//!   runtime's `tvm_ffi.Function` whose call takes keywords (`add(1, b=2)`) and costs a
//!   positional call nothing;
//! - `keywords`: how both put a call's keywords in position or in the runtime's `KWARGS`
//!   convention.
//!
//! Each is made by a `#[no_mangle]` builder whose address a module export returns (per
//! library: nothing is registered globally), called by the package's `_ffi_api.py` through
//! `ctypes.PYFUNCTYPE` with the GIL held. The CPython functions used are stable-ABI ones,
//! found with `dlsym` in the process that loaded the library; where that fails (no CPython in
//! the process, or not on a Unix), a builder returns null and the package keeps the runtime's
//! Python objects.
use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::abi::sys::TVMFFIAny;
use crate::base::value::Any;
use crate::call::function::export;
use crate::call::function::signature::{FnSignature, TypeDesc};

/// A CPython object, only ever handled by pointer.
#[repr(C)]
pub struct PyObject {
    _opaque: [u8; 0],
}

/// CPython's `ternaryfunc`: `tp_call`, and a `METH_VARARGS | METH_KEYWORDS` builtin's body.
type TernaryFunc =
    unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut PyObject) -> *mut PyObject;

/// CPython's `PyType_Slot` (stable ABI).
#[repr(C)]
struct PyTypeSlot {
    slot: c_int,
    pfunc: *mut c_void,
}

/// CPython's `PyType_Spec` (stable ABI).
#[repr(C)]
struct PyTypeSpec {
    name: *const c_char,
    basicsize: c_int,
    itemsize: c_int,
    flags: u32,
    slots: *mut PyTypeSlot,
}

/// The CPython functions the builders and the callables they make call.
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
    dict_size: unsafe extern "C" fn(*mut PyObject) -> isize,
    incref: unsafe extern "C" fn(*mut PyObject),
    decref: unsafe extern "C" fn(*mut PyObject),
    cfunction_new_ex:
        unsafe extern "C" fn(*const c_void, *mut PyObject, *mut PyObject) -> *mut PyObject,
    object_call: TernaryFunc,
    get_attr_string: unsafe extern "C" fn(*mut PyObject, *const c_char) -> *mut PyObject,
    set_attr_string: unsafe extern "C" fn(*mut PyObject, *const c_char, *mut PyObject) -> c_int,
    type_from_spec_with_bases:
        unsafe extern "C" fn(*mut PyTypeSpec, *mut PyObject) -> *mut PyObject,
    type_get_slot: unsafe extern "C" fn(*mut PyObject, c_int) -> *mut c_void,
    long_as_ssize_t: unsafe extern "C" fn(*mut PyObject) -> isize,
    long_as_long: unsafe extern "C" fn(*mut PyObject) -> std::ffi::c_long,
    bool_from_long: unsafe extern "C" fn(std::ffi::c_long) -> *mut PyObject,
    err_occurred: unsafe extern "C" fn() -> *mut PyObject,
    object_is_true: unsafe extern "C" fn(*mut PyObject) -> c_int,
    object_type: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    err_set_string: unsafe extern "C" fn(*mut PyObject, *const c_char),
    long_as_void_ptr: unsafe extern "C" fn(*mut PyObject) -> *mut c_void,
    /// The address of the variable `PyExc_TypeError` (a `PyObject *`).
    type_error: usize,
    method_new: unsafe extern "C" fn(*mut PyObject, *mut PyObject) -> *mut PyObject,
    /// The address of `_Py_NoneStruct`, the object `None` is.
    none: usize,
}

impl PythonApi {
    /// `None`.
    fn none(&self) -> *mut PyObject {
        self.none as *mut PyObject
    }

    /// Raises a `TypeError` saying `message` and returns null: what a builder returns when it
    /// refuses its arguments (a null without a Python error ends the process in `ctypes`).
    ///
    /// # Safety
    /// The GIL is held.
    unsafe fn refuse(&self, message: &std::ffi::CStr) -> *mut PyObject {
        // SAFETY: `type_error` is the address of CPython's `PyExc_TypeError` variable, set
        // once the interpreter runs (it does: Python code called the builder).
        unsafe {
            (self.err_set_string)(*(self.type_error as *const *mut PyObject), message.as_ptr());
        }
        std::ptr::null_mut()
    }
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
                dict_size: function(c"PyDict_Size")?,
                incref: function(c"Py_IncRef")?,
                decref: function(c"Py_DecRef")?,
                cfunction_new_ex: function(c"PyCFunction_NewEx")?,
                object_call: function(c"PyObject_Call")?,
                get_attr_string: function(c"PyObject_GetAttrString")?,
                set_attr_string: function(c"PyObject_SetAttrString")?,
                type_from_spec_with_bases: function(c"PyType_FromSpecWithBases")?,
                type_get_slot: function(c"PyType_GetSlot")?,
                long_as_ssize_t: function(c"PyLong_AsSsize_t")?,
                long_as_long: function(c"PyLong_AsLong")?,
                bool_from_long: function(c"PyBool_FromLong")?,
                err_occurred: function(c"PyErr_Occurred")?,
                object_is_true: function(c"PyObject_IsTrue")?,
                object_type: function(c"PyObject_Type")?,
                err_set_string: function(c"PyErr_SetString")?,
                long_as_void_ptr: function(c"PyLong_AsVoidPtr")?,
                type_error: Some(process_symbol(c"PyExc_TypeError") as usize)
                    .filter(|&at| at != 0)?,
                method_new: function(c"PyMethod_New")?,
                none: Some(process_symbol(c"_Py_NoneStruct") as usize).filter(|&at| at != 0)?,
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

/// No lookup off Unix: the package keeps the runtime's Python objects there.
#[cfg(not(unix))]
fn process_symbol(_name: &std::ffi::CStr) -> *mut c_void {
    std::ptr::null_mut()
}

/// A new tuple of `items`, each given a new reference; null (a Python error set) when the
/// allocation fails. The references are taken before the tuple is allocated: allocating may
/// run a garbage collection (on CPython before 3.12), whose callbacks run Python code that may
/// free what `items` borrows from (a keyword dictionary, say).
///
/// # Safety
/// The GIL is held and every item is a live object.
unsafe fn new_tuple(api: &PythonApi, items: &[*mut PyObject]) -> *mut PyObject {
    // SAFETY: the caller's contract; `PyTuple_SetItem` steals the reference taken for it
    // (a fresh tuple's slots are in range, so it cannot fail), and a failed allocation gives
    // each reference back.
    unsafe {
        for &item in items {
            (api.incref)(item);
        }
        let tuple = (api.tuple_new)(items.len() as isize);
        for (index, &item) in items.iter().enumerate() {
            if tuple.is_null() {
                (api.decref)(item);
            } else {
                (api.tuple_set_item)(tuple, index as isize, item);
            }
        }
        tuple
    }
}

/// Defines the module export `$export` (`__tvm_ffi_<name>`: `tvm_ffi.load_module(lib)`
/// then `mod.get_function("<name>")()`) returning the address of the builder `$builder` in
/// this library, for `ctypes`. Export names carry their builder's signature version: a change
/// of its parameters takes a new name, so that a package's `_ffi_api.py` from another SDK
/// release finds no export (and keeps the runtime's objects) rather than calling the builder
/// with the wrong arguments.
macro_rules! builder_export {
    ($export:ident, $name:literal, $builder:path) => {
        #[doc = concat!("The module export `", $name, "`: the address of [`", stringify!($builder), "`].")]
        ///
        /// # Safety
        /// The `TVMFFISafeCallType` contract.
        #[no_mangle]
        pub unsafe extern "C" fn $export(
            _self: *mut std::ffi::c_void,
            args: *const $crate::abi::sys::TVMFFIAny,
            num_args: i32,
            result: *mut $crate::abi::sys::TVMFFIAny,
        ) -> std::ffi::c_int {
            static SIGNATURE: $crate::call::function::signature::FnSignature =
                $crate::call::python::address_signature($name);
            // 0 where the builder could not work (no CPython functions found): a builder
            // returning null without a Python error would end the process in `ctypes`.
            let address = if $crate::call::python::python_api().is_some() {
                $builder as *const () as usize
            } else {
                0
            };
            // SAFETY: the caller's contract, passed on.
            unsafe {
                $crate::call::python::export_address(&SIGNATURE, address, args, num_args, result)
            }
        }
    };
}
mod constructor;
mod function;
mod keywords;

/// The signature of a module export `name` that takes nothing and returns an address.
const fn address_signature(name: &'static str) -> FnSignature {
    FnSignature {
        owner: "",
        name: std::borrow::Cow::Borrowed(name),
        params: std::borrow::Cow::Borrowed(&[]),
        ret: TypeDesc::of::<i64>(),
        names: &[],
    }
}

/// The body of a module export returning a builder's `address`.
///
/// # Safety
/// The `TVMFFISafeCallType` contract.
unsafe fn export_address(
    signature: &'static FnSignature,
    address: usize,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        export::call(
            signature,
            |_, _| Ok(Any::new(address as i64)),
            args,
            num_args,
            result,
        )
    }
}
