//! How a call's keywords reach a Rust function, the same for a package's constructors and
//! its functions: keywords that fill the leading parameters with no gap (`Pair(a=1, b=2)`,
//! `add(1, b=2)`) are put in position (the Rust binder reads them the same either way);
//! others go as `(*args, KWARGS, name, value, ...)`, the runtime's keyword convention, exactly
//! as its generated `__init__` passes them (values that are the runtime's `MISSING` left out).
use super::{new_tuple, PyObject, PythonApi};

/// Calls with keywords naming more parameters than this take the `KWARGS` form.
const MAX_POSITIONAL: usize = 16;

/// Calls `call` with the argument tuple [`repack`] makes of `args` and the keywords `kwargs`
/// (not empty), and releases that tuple after: `state` holds the runtime's `KWARGS`, its
/// `MISSING` and the tuple of parameter names at `at`, `at + 1` and `at + 2`. `call`'s result,
/// or null with a Python error set.
///
/// # Safety
/// The GIL is held; `args` is a tuple, `kwargs` a dictionary, `state` a tuple of live objects
/// that never changes, with a tuple at `at + 2`; `call` takes a borrowed argument tuple.
pub(super) unsafe fn call_repacked(
    api: &PythonApi,
    state: *mut PyObject,
    at: isize,
    args: *mut PyObject,
    kwargs: *mut PyObject,
    call: impl FnOnce(*mut PyObject) -> *mut PyObject,
) -> *mut PyObject {
    // SAFETY: the caller's contract; the items are borrowed from `state`, alive during the
    // call, and the repacked tuple is released once `call` returns.
    unsafe {
        let marker = (api.tuple_get_item)(state, at);
        let missing = (api.tuple_get_item)(state, at + 1);
        let names = (api.tuple_get_item)(state, at + 2);
        let flat = repack(api, args, kwargs, names, marker, missing);
        if flat.is_null() {
            return flat;
        }
        let result = call(flat);
        (api.decref)(flat);
        result
    }
}

/// The argument tuple for a call of `args` and the keywords `kwargs` (not empty): the values in
/// parameter order when the keywords fill `names` (the interned names of the leading
/// positional-or-keyword parameters) from the end of `args` with no gap, else the `KWARGS`
/// form. A new reference, or null with a Python error set.
///
/// # Safety
/// The GIL is held; `args` and `names` are tuples, `kwargs` a dictionary, `marker` (the
/// runtime's `KWARGS`) and `missing` (its `MISSING`) live objects.
unsafe fn repack(
    api: &PythonApi,
    args: *mut PyObject,
    kwargs: *mut PyObject,
    names: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
) -> *mut PyObject {
    // SAFETY: the caller's contract, passed on; `new_tuple` takes the references to the
    // borrowed values `as_positional` returns before it allocates.
    unsafe {
        match as_positional(api, args, kwargs, names, marker, missing) {
            Some((values, count)) => new_tuple(api, &values[..count]),
            None => with_keywords(api, args, kwargs, marker, missing).into_tuple(),
        }
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

/// The arguments in parameter order (borrowed: the first `count` of the array) when the
/// keywords name parameters after the positional arguments (by the identity of their interned
/// names) and together fill a prefix of the parameters, and no value is the `KWARGS` marker;
/// `None` otherwise. Nothing here allocates or runs Python code.
///
/// # Safety
/// The GIL is held; `args` and `names` are tuples, `kwargs` a dictionary, `marker` and
/// `missing` live objects.
unsafe fn as_positional(
    api: &PythonApi,
    args: *mut PyObject,
    kwargs: *mut PyObject,
    names: *mut PyObject,
    marker: *mut PyObject,
    missing: *mut PyObject,
) -> Option<([*mut PyObject; MAX_POSITIONAL], usize)> {
    // SAFETY: the caller's contract. Items are borrowed from the tuples (which never change)
    // and from the dictionary; nothing here runs Python code.
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
                // A value that is the marker goes in the `KWARGS` form too (by position it
                // would start one).
                Some(index) if value != missing && value != marker && values[index].is_null() => {
                    values[index] = value;
                    filled = filled.max(index + 1);
                }
                _ => return None,
            }
        }
        if values[..filled].iter().any(|value| value.is_null()) {
            return None;
        }
        Some((values, filled))
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
