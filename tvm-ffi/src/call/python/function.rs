//! Functions and methods that take keywords: `my_ext.add(1, b=2)`, `p.moved(1, dy=2)`, at no
//! cost to `add(1, 2)`.
//!
//! The runtime's `tvm_ffi.Function.__call__(self, *args)` (Cython) refuses keywords. A
//! package's functions are instead instances of `KeywordFunction` (methods: `KeywordMethod`,
//! which also binds the object it is read from), a C-level subclass of
//! `tvm_ffi.Function` made here (`PyType_FromSpecWithBases`), whose `tp_call` hands a call
//! without keywords straight to the base's `tp_call` (one compare and one jump more than
//! calling a `Function`: CPython reaches either through the type's slot) and puts keywords
//! as `keywords` does before calling the same slot. The instances stay `Function`s
//! for everything else (conversion, `isinstance`, the handle they hold): a Python-level
//! subclass or a builtin wrapper costs a positional call 25 ns or more. An instance holds a
//! reference of its own to the function it is made for (never the runtime object's: every
//! earlier holder of that keeps a working function), and is made with the base's `tp_new` and
//! the base's methods, which Python cannot replace (it can replace those of the types made
//! here, which are mutable heap types).
//!
//! Each instance carries `(KWARGS, missing, names)` in a slot of its own past the base's
//! fields: declared as a member so that CPython's `subtype_dealloc` releases it, and its
//! descriptor removed from the type, so that no Python code can read or replace it.
//!
//! The type also defines `release_gil` (stored past the state slot), which the runtime's
//! `__call__` reads on every call through the attribute: its descriptor on the base would
//! check that an instance of a subclass is one by walking the type's bases, about 3 ns of a
//! 145 ns call; a descriptor of the type itself passes that check at once. Its setter goes
//! through the base's property (which converts and refuses as for any `Function`) and keeps
//! both in step; only a direct call of the base's descriptor
//! (`core.Function.release_gil.__set__(f, ..)`) changes the base's field alone, which these
//! calls no longer read (whether the GIL is released: not a memory question).
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use super::{
    keywords, new_tuple, python_api, PyObject, PyTypeSlot, PyTypeSpec, PythonApi, TernaryFunc,
};
use crate::base::value::Any;
use crate::call::function::export;
use crate::call::function::signature::{FnSignature, TypeDesc};

/// CPython's `PyMemberDef` (stable ABI).
#[repr(C)]
struct PyMemberDef {
    name: *const c_char,
    kind: c_int,
    offset: isize,
    flags: c_int,
    doc: *const c_char,
}

/// CPython's `PyGetSetDef` (stable ABI).
#[repr(C)]
struct PyGetSetDef {
    name: *const c_char,
    get: Option<unsafe extern "C" fn(*mut PyObject, *mut c_void) -> *mut PyObject>,
    set: Option<unsafe extern "C" fn(*mut PyObject, *mut PyObject, *mut c_void) -> c_int>,
    doc: *const c_char,
    closure: *mut c_void,
}

/// Slot ids (`typeslots.h`, stable ABI).
const PY_TP_CALL: c_int = 50;
const PY_TP_GETSET: c_int = 73;
const PY_TP_MEMBERS: c_int = 72;
const PY_TP_NEW: c_int = 65;
const PY_TP_DESCR_GET: c_int = 54;
/// `T_OBJECT_EX`: a member holding a reference (released by `subtype_dealloc` when writable).
const T_OBJECT_EX: c_int = 16;
/// `Py_TPFLAGS_DEFAULT` as every CPython 3 sets it (`Py_TPFLAGS_HAVE_VERSION_TAG`).
const PY_TPFLAGS_DEFAULT: u32 = 1 << 18;
/// `Py_TPFLAGS_METHOD_DESCRIPTOR`: `obj.method(..)` may call the descriptor with `obj` first
/// instead of binding it (CPython 3.8 on; what Python functions do).
const PY_TPFLAGS_METHOD_DESCRIPTOR: u32 = 1 << 17;

/// The instance slot's name while the type is made (its descriptor is removed after).
const STATE_MEMBER: &std::ffi::CStr = c"__sdk_keywords__";

/// The two types this library made over the runtime's `Function` (`base`): `function`
/// (`KeywordFunction`: module functions, static methods) and `method` (`KeywordMethod`: the
/// same, and a method descriptor that binds the object it is read from, as a Python function
/// does), the base's call and where an instance keeps its state.
struct KeywordTypes {
    function: *mut PyObject,
    method: *mut PyObject,
    base: *mut PyObject,
    base_call: TernaryFunc,
    /// The base's `tp_new`: what the builder makes instances with.
    base_new: TernaryFunc,
    /// `PyBool_FromLong`, at hand for the getter the runtime's call reads (per call).
    bool_from_long: unsafe extern "C" fn(std::ffi::c_long) -> *mut PyObject,
    /// Where an instance keeps its `(KWARGS, MISSING, names)`, then its `release_gil` flag
    /// (a `c_int`, 8 bytes on).
    state_offset: usize,
}

/// The instance's `release_gil` flag.
///
/// # Safety
/// `instance` is an instance of one of `kind`'s types.
unsafe fn release_gil_flag(kind: &KeywordTypes, instance: *mut PyObject) -> *mut c_int {
    let offset = kind.state_offset + std::mem::size_of::<*mut PyObject>();
    // SAFETY: the caller's contract: the allocation extends past the state slot by the flag.
    unsafe { instance.cast::<u8>().add(offset).cast::<c_int>() }
}

/// The type's getters and setters.
struct GetSetTable([PyGetSetDef; 2]);

// SAFETY: immutable; its pointers are to static strings and functions.
unsafe impl Sync for GetSetTable {}

static GETSET: GetSetTable = GetSetTable([
    PyGetSetDef {
        name: c"release_gil".as_ptr(),
        get: Some(get_release_gil),
        set: Some(set_release_gil),
        doc: c"Whether calls release the Python GIL while executing.".as_ptr(),
        closure: std::ptr::null_mut(),
    },
    PyGetSetDef {
        name: std::ptr::null(),
        get: None,
        set: None,
        doc: std::ptr::null(),
        closure: std::ptr::null_mut(),
    },
]);

/// `release_gil`'s getter: whether calls release the GIL, as the runtime's property says it.
unsafe extern "C" fn get_release_gil(instance: *mut PyObject, _: *mut c_void) -> *mut PyObject {
    // SAFETY: CPython calls a descriptor of the type with an instance of it (its check, with
    // the GIL held); the type exists only once `KEYWORD_TYPES` is set.
    unsafe {
        let Some(kind) = KEYWORD_TYPES.load(Ordering::Acquire).as_ref() else {
            return std::ptr::null_mut();
        };
        (kind.bool_from_long)((*release_gil_flag(kind, instance) != 0).into())
    }
}

/// `release_gil`'s setter: the runtime's property (of the base) sets, converts or refuses the
/// value, or the deletion, as it does for any `Function` (and keeps the base's field in step);
/// the flag then takes what that property reads back.
unsafe extern "C" fn set_release_gil(
    instance: *mut PyObject,
    value: *mut PyObject,
    _: *mut c_void,
) -> c_int {
    // SAFETY: as for the getter; `value` is null (a deletion) or a live object. Each new
    // reference is released.
    unsafe {
        let (Some(kind), Some(api)) =
            (KEYWORD_TYPES.load(Ordering::Acquire).as_ref(), python_api())
        else {
            return -1;
        };
        let property = (api.get_attr_string)(kind.base, c"release_gil".as_ptr());
        if property.is_null() {
            return -1;
        }
        let changed = if value.is_null() {
            call_method(api, property, c"__delete__", &[instance])
        } else {
            call_method(api, property, c"__set__", &[instance, value])
        };
        let read = if changed.is_null() {
            std::ptr::null_mut()
        } else {
            (api.decref)(changed);
            call_method(api, property, c"__get__", &[instance])
        };
        (api.decref)(property);
        if read.is_null() {
            return -1;
        }
        let flag = (api.long_as_long)(read);
        (api.decref)(read);
        if flag == -1 && !(api.err_occurred)().is_null() {
            return -1;
        }
        *release_gil_flag(kind, instance) = c_int::from(flag != 0);
        0
    }
}

/// `object.method(*args)`: a new reference, or null with a Python error set.
///
/// # Safety
/// The GIL is held; `object` and every argument are live objects.
unsafe fn call_method(
    api: &PythonApi,
    object: *mut PyObject,
    method: &std::ffi::CStr,
    args: &[*mut PyObject],
) -> *mut PyObject {
    // SAFETY: the caller's contract; each new reference is released or returned.
    unsafe {
        let bound = (api.get_attr_string)(object, method.as_ptr());
        if bound.is_null() {
            return bound;
        }
        let args = new_tuple(api, args);
        let result = if args.is_null() {
            args
        } else {
            let result = (api.object_call)(bound, args, std::ptr::null_mut());
            (api.decref)(args);
            result
        };
        (api.decref)(bound);
        result
    }
}

/// Made once per library (by the first builder call) and never freed: instances may live as
/// long as the process.
static KEYWORD_TYPES: AtomicPtr<KeywordTypes> = AtomicPtr::new(std::ptr::null_mut());

/// `KeywordFunction`'s `tp_call`: a call without keywords goes on to the base's slot at once
/// (a tail jump: what a positional call costs is the point of the type). Nothing here can
/// panic.
unsafe extern "C" fn call_with_keywords(
    callee: *mut PyObject,
    args: *mut PyObject,
    kwargs: *mut PyObject,
) -> *mut PyObject {
    // SAFETY: instances exist only once `KEYWORD_TYPES` is set, and it is never freed.
    let Some(kind) = (unsafe { KEYWORD_TYPES.load(Ordering::Acquire).as_ref() }) else {
        return std::ptr::null_mut();
    };
    if kwargs.is_null() {
        // SAFETY: CPython's call of this type's slot, passed to the base's slot: `callee` is
        // an instance of a subclass of the base.
        return unsafe { (kind.base_call)(callee, args, kwargs) };
    }
    // SAFETY: the same call, with keywords.
    unsafe { call_keywords(kind, callee, args, kwargs) }
}

/// A call with a keyword dictionary (maybe empty), out of line so that the positional path
/// saves no registers.
///
/// # Safety
/// CPython's `tp_call` contract for an instance of one of `kind`'s types.
#[cold]
#[inline(never)]
unsafe fn call_keywords(
    kind: &KeywordTypes,
    callee: *mut PyObject,
    args: *mut PyObject,
    kwargs: *mut PyObject,
) -> *mut PyObject {
    let Some(api) = python_api() else {
        return std::ptr::null_mut();
    };
    // SAFETY: CPython calls this with the GIL held, `callee` an instance of this type (whose
    // allocation extends past `state_offset` by the state slot, written only by the builder),
    // `args` a tuple and `kwargs` a dictionary; the state tuple is alive while `callee` is and
    // never changes.
    unsafe {
        let state = *callee
            .cast::<u8>()
            .add(kind.state_offset)
            .cast::<*mut PyObject>();
        if state.is_null() || (api.dict_size)(kwargs) == 0 {
            return (kind.base_call)(callee, args, kwargs);
        }
        keywords::call_repacked(api, state, 0, args, kwargs, |flat| {
            (kind.base_call)(callee, flat, std::ptr::null_mut())
        })
    }
}

/// The `tp_call` and `tp_new` an undisturbed subclass of `base` inherits: the calls the
/// types made here hand on to, taken once (`PyType_GetSlot` reads a static type's slots only
/// from CPython 3.10 on; a subclass made here is a heap type on every version), and never read
/// again from the types themselves, whose slots Python code may replace (`T.__new__ = ..`).
/// `None`, a Python error set where CPython set one, when the probe cannot be made or `base`
/// lacks either.
///
/// # Safety
/// The GIL is held and `base` is a type.
unsafe fn inherited_slots(
    api: &PythonApi,
    base: *mut PyObject,
) -> Option<(TernaryFunc, TernaryFunc)> {
    let mut slots = [PyTypeSlot {
        slot: 0,
        pfunc: std::ptr::null_mut(),
    }];
    let mut spec = PyTypeSpec {
        name: c"tvm_ffi_sdk.FunctionProbe".as_ptr(),
        basicsize: 0,
        itemsize: 0,
        flags: PY_TPFLAGS_DEFAULT,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the caller's contract; the probe type is released once read.
    unsafe {
        let probe = (api.type_from_spec_with_bases)(&mut spec, base);
        if probe.is_null() {
            return None;
        }
        let call = (api.type_get_slot)(probe, PY_TP_CALL);
        let new = (api.type_get_slot)(probe, PY_TP_NEW);
        (api.decref)(probe);
        if call.is_null() || new.is_null() {
            return None;
        }
        // SAFETY: a `tp_call` slot holds a `ternaryfunc`, a `tp_new` slot a `newfunc` (of the
        // same C signature: type, arguments, keywords).
        Some((
            std::mem::transmute::<*mut c_void, TernaryFunc>(call),
            std::mem::transmute::<*mut c_void, TernaryFunc>(new),
        ))
    }
}

/// `base.__basicsize__` when it is a fixed-size type whose instances end 8-byte aligned.
///
/// # Safety
/// The GIL is held and `base` is a live object.
unsafe fn fixed_size(api: &PythonApi, base: *mut PyObject) -> Option<usize> {
    // SAFETY: the caller's contract; each attribute read is a new reference, released.
    unsafe {
        let read = |name: &std::ffi::CStr| {
            let value = (api.get_attr_string)(base, name.as_ptr());
            if value.is_null() {
                return -1;
            }
            let number = (api.long_as_ssize_t)(value);
            (api.decref)(value);
            number
        };
        let (size, item) = (read(c"__basicsize__"), read(c"__itemsize__"));
        let size = usize::try_from(size).ok()?;
        (item == 0 && size % std::mem::align_of::<*mut PyObject>() == 0).then_some(size)
    }
}

/// A method's `tp_descr_get`: the object it is read from bound as its first argument (a
/// bound method), itself when read from the class, as a Python function does.
unsafe extern "C" fn bind_method(
    callee: *mut PyObject,
    object: *mut PyObject,
    _: *mut PyObject,
) -> *mut PyObject {
    let Some(api) = python_api() else {
        return std::ptr::null_mut();
    };
    // SAFETY: CPython calls a descriptor with the GIL held and live objects (`object` null
    // when read from the class).
    unsafe {
        if object.is_null() || object == api.none() {
            (api.incref)(callee);
            return callee;
        }
        (api.method_new)(callee, object)
    }
}

/// The types of this library over `base` (made on the first call; `None`, a Python error set
/// where CPython set one, when they cannot be made or an earlier call made them over another
/// base).
///
/// # Safety
/// The GIL is held and `base` is a live object.
unsafe fn keyword_types(api: &PythonApi, base: *mut PyObject) -> Option<&'static KeywordTypes> {
    // SAFETY: published types are never freed.
    if let Some(kind) = unsafe { KEYWORD_TYPES.load(Ordering::Acquire).as_ref() } {
        return (kind.base == base).then_some(kind);
    }
    // SAFETY: the caller's contract; each type made is released unless published.
    unsafe {
        let state_offset = fixed_size(api, base)?;
        let (base_call, base_new) = inherited_slots(api, base)?;
        let function = make_type(api, base, state_offset, false);
        let method = make_type(api, base, state_offset, true);
        if function.is_null() || method.is_null() {
            for made in [function, method] {
                if !made.is_null() {
                    (api.decref)(made);
                }
            }
            return None;
        }
        (api.incref)(base);
        let kind = Box::into_raw(Box::new(KeywordTypes {
            function,
            method,
            base,
            base_call,
            base_new,
            bool_from_long: api.bool_from_long,
            state_offset,
        }));
        // Python code run by the calls above (a collection's callbacks) may have made them
        // first: keep those.
        match KEYWORD_TYPES.compare_exchange(
            std::ptr::null_mut(),
            kind,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Some(&*kind),
            Err(first) => {
                let mine = Box::from_raw(kind);
                for object in [mine.function, mine.method, mine.base] {
                    (api.decref)(object);
                }
                let first = &*first;
                (first.base == base).then_some(first)
            }
        }
    }
}

/// `KeywordFunction`, or with `method` `KeywordMethod`, over `base`; null (a Python error set)
/// when CPython refuses it.
///
/// # Safety
/// The GIL is held; `base` is a live type whose instances end at `state_offset`.
unsafe fn make_type(
    api: &PythonApi,
    base: *mut PyObject,
    state_offset: usize,
    method: bool,
) -> *mut PyObject {
    let Ok(basicsize) = c_int::try_from(state_offset + 2 * std::mem::size_of::<*mut PyObject>())
    else {
        return std::ptr::null_mut();
    };
    let mut members = [
        PyMemberDef {
            name: STATE_MEMBER.as_ptr(),
            kind: T_OBJECT_EX,
            offset: state_offset as isize,
            flags: 0,
            doc: std::ptr::null(),
        },
        PyMemberDef {
            name: std::ptr::null(),
            kind: 0,
            offset: 0,
            flags: 0,
            doc: std::ptr::null(),
        },
    ];
    let slot = |slot, pfunc: *mut c_void| PyTypeSlot { slot, pfunc };
    let mut slots = [
        slot(PY_TP_CALL, call_with_keywords as *mut c_void),
        // CPython keeps this pointer (descriptors point into the table): static.
        slot(PY_TP_GETSET, GETSET.0.as_ptr().cast_mut().cast()),
        slot(PY_TP_MEMBERS, members.as_mut_ptr().cast()),
        slot(PY_TP_DESCR_GET, bind_method as *mut c_void),
        slot(0, std::ptr::null_mut()),
    ];
    if !method {
        slots[3] = slot(0, std::ptr::null_mut());
    }
    let (name, flags) = if method {
        (
            c"tvm_ffi_sdk.KeywordMethod",
            PY_TPFLAGS_DEFAULT | PY_TPFLAGS_METHOD_DESCRIPTOR,
        )
    } else {
        (c"tvm_ffi_sdk.KeywordFunction", PY_TPFLAGS_DEFAULT)
    };
    let mut spec = PyTypeSpec {
        name: name.as_ptr(),
        // The state slot, then the `release_gil` flag (padded to 8 bytes).
        basicsize,
        itemsize: 0,
        flags,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the caller's contract. The spec's strings and the getter table are static;
    // CPython copies the member table into the type it makes.
    unsafe {
        let ty = (api.type_from_spec_with_bases)(&mut spec, base);
        if ty.is_null() {
            return ty;
        }
        // Only the builder writes the slot, and `call_with_keywords` trusts what it wrote.
        if (api.set_attr_string)(ty, STATE_MEMBER.as_ptr(), std::ptr::null_mut()) != 0 {
            (api.decref)(ty);
            return std::ptr::null_mut();
        }
        ty
    }
}

/// Makes a `KeywordFunction` (a subclass of `base`, the runtime's `tvm_ffi.Function`) for
/// the FFI function `function` (a `base` instance) holds: a second Python object sharing its
/// handle (a reference of its own, taken through the base's `__init_handle_by_constructor__`
/// and `identity`, this library's export `__sdk_python_identity_v1`), so that every holder of
/// `function` keeps a working object. It binds keywords to the parameters `names` (a tuple of
/// the interned names of its leading positional-or-keyword parameters) or in the `KWARGS`
/// convention, with `marker` the runtime's `core.KWARGS` and keyword values that are
/// `missing` left out (the package's helper passes a value no caller has); a
/// `KeywordMethod` (which binds the object it is read from) when `method` is true. A
/// `function` that is one of the types made here comes back as it is. Returns a new
/// reference, or null with a Python error set.
///
/// # Safety
/// Called with the GIL held (ctypes' `PYFUNCTYPE`), with seven live Python objects.
#[no_mangle]
pub unsafe extern "C" fn TVMFFISdkKeywordFunction(
    base: *mut PyObject,
    function: *mut PyObject,
    identity: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
    names: *mut PyObject,
    method: *mut PyObject,
) -> *mut PyObject {
    // The module export hands out this builder's address only where the lookup succeeded.
    let Some(api) = python_api() else {
        return std::ptr::null_mut();
    };
    // SAFETY: the caller's contract. Every new reference is released or returned; the slots
    // of the fresh instance past the base's fields are empty (CPython zeroes an allocation)
    // until written once. Methods are called on `base`, a static type whose attributes
    // Python cannot replace (never on the types made here, which it can).
    unsafe {
        // `PyTuple_Size` of anything else sets a `SystemError`.
        if (api.tuple_size)(names) < 0 {
            return std::ptr::null_mut();
        }
        let Some(kind) = keyword_types(api, base) else {
            if (api.err_occurred)().is_null() {
                return api.refuse(c"no keyword function type can be made over this base");
            }
            return std::ptr::null_mut();
        };
        let ty = match (api.object_is_true)(method) {
            0 => kind.function,
            1 => kind.method,
            _ => return std::ptr::null_mut(),
        };
        let given = (api.object_type)(function);
        (api.decref)(given);
        if given == kind.function || given == kind.method {
            // Made here already (a second run of the package's helper): as it is.
            (api.incref)(function);
            return function;
        }
        let from_identity = (api.object_type)(identity);
        (api.decref)(from_identity);
        if given != base || from_identity != base {
            return api.refuse(c"expected two tvm_ffi.Function objects");
        }
        let Some(handle) = handle_of(api, base, function) else {
            return std::ptr::null_mut();
        };
        if handle.is_null() {
            return api.refuse(c"the function holds no handle");
        }
        // The function's `release_gil` (the runtime's property: a `bool`), which the
        // instance's own descriptor keeps from now on.
        let release_gil = (api.get_attr_string)(function, c"release_gil".as_ptr());
        let flag = if release_gil.is_null() {
            None
        } else {
            let flag = (api.long_as_long)(release_gil);
            (api.decref)(release_gil);
            (flag != -1 || (api.err_occurred)().is_null()).then_some(flag)
        };
        let state = match flag {
            Some(_) => new_tuple(api, &[marker, missing, names]),
            None => std::ptr::null_mut(), // an error is set
        };
        if state.is_null() {
            return std::ptr::null_mut();
        }
        let instance = new_instance(api, kind, ty);
        if instance.is_null() {
            (api.decref)(state);
            return std::ptr::null_mut();
        }
        *release_gil_flag(kind, instance) = c_int::from(flag != Some(0));
        // The base's `__init_handle_by_constructor__(instance, identity, function)`: the
        // instance takes the reference `identity(function)` returns.
        let taken = call_method(
            api,
            base,
            c"__init_handle_by_constructor__",
            &[instance, identity, function],
        );
        let shared = !taken.is_null() && {
            (api.decref)(taken);
            handle_of(api, base, instance) == Some(handle)
        };
        if !shared {
            (api.decref)(state);
            (api.decref)(instance);
            if (api.err_occurred)().is_null() {
                return api.refuse(c"the function's handle could not be shared");
            }
            return std::ptr::null_mut();
        }
        *instance
            .cast::<u8>()
            .add(kind.state_offset)
            .cast::<*mut PyObject>() = state;
        instance
    }
}

/// A fresh instance of `ty` (one of `kind`'s types) with an empty handle, made by the base's
/// `tp_new` (the types' own `__new__` may have been replaced from Python); null with a Python
/// error set when that fails.
///
/// # Safety
/// The GIL is held.
unsafe fn new_instance(api: &PythonApi, kind: &KeywordTypes, ty: *mut PyObject) -> *mut PyObject {
    // SAFETY: the caller's contract; `base_new` is the base's `tp_new`, called with a subtype.
    unsafe {
        let empty = new_tuple(api, &[]);
        if empty.is_null() {
            return empty;
        }
        let instance = (kind.base_new)(ty, empty, std::ptr::null_mut());
        (api.decref)(empty);
        if instance.is_null() {
            return instance;
        }
        // The base's `tp_new` allocates with the type's `tp_alloc` (which Python cannot
        // replace); the slots written after are past the base's fields, so check anyway.
        let made = (api.object_type)(instance);
        (api.decref)(made);
        if made != ty {
            (api.decref)(instance);
            return api.refuse(c"the keyword function type made an object of another type");
        }
        instance
    }
}

/// The handle `object` (a `base` instance) holds (`base.__chandle__(object)`); `None` with a
/// Python error set when that fails.
///
/// # Safety
/// The GIL is held; `base` and `object` are live objects.
unsafe fn handle_of(
    api: &PythonApi,
    base: *mut PyObject,
    object: *mut PyObject,
) -> Option<*mut c_void> {
    // SAFETY: the caller's contract; the result's reference is released.
    unsafe {
        let number = call_method(api, base, c"__chandle__", &[object]);
        if number.is_null() {
            return None;
        }
        let handle = (api.long_as_void_ptr)(number);
        (api.decref)(number);
        (handle.is_null() && !(api.err_occurred)().is_null())
            .then_some(())
            .map_or(Some(handle), |()| None)
    }
}

/// The module export `__sdk_python_identity_v1`: returns its argument. What the builder
/// shares a function's handle through (`__init_handle_by_constructor__` takes the reference
/// a call returns).
///
/// # Safety
/// The `TVMFFISafeCallType` contract.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi___sdk_python_identity_v1(
    _self: *mut c_void,
    args: *const crate::abi::sys::TVMFFIAny,
    num_args: i32,
    result: *mut crate::abi::sys::TVMFFIAny,
) -> c_int {
    static SIGNATURE: FnSignature = FnSignature {
        owner: "",
        name: std::borrow::Cow::Borrowed("__sdk_python_identity_v1"),
        params: std::borrow::Cow::Borrowed(&[TypeDesc::of::<Any>()]),
        ret: TypeDesc::of::<Any>(),
        names: &[],
    };
    // SAFETY: the caller's contract, passed on.
    unsafe {
        export::call(
            &SIGNATURE,
            |_, args| match args {
                [value] => value.to_owned(),
                _ => Ok(Any::default()),
            },
            args,
            num_args,
            result,
        )
    }
}

builder_export!(
    __tvm_ffi___sdk_python_keyword_function_v2,
    "__sdk_python_keyword_function_v2",
    TVMFFISdkKeywordFunction
);
