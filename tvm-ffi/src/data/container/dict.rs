//! [`Dict<K, V>`]: the runtime's mutable, shared `ffi.Dict`.
use super::traits::container_traits;
use std::marker::PhantomData;

use super::hash::{reporting_hook_failures, HookFailureIn, Hooks, KeyProbe};
use super::locked::copy_live;
use super::map::unless_missing;
use super::table::{self, Cursor};
use crate::base::error::{Error, Result};
use crate::base::lock::{with_locked, Locked};
use crate::base::object::builtin::DictObj;
use crate::base::object::{hold_releases, ObjectRef};
use crate::base::value::{Any, AnyView, FromAny, TryIntoAny};
use crate::call::function::{object_view, GlobalCache, IntoArg};

pub(super) static DICT_NEW: GlobalCache = GlobalCache::new("ffi.Dict");
static DICT_GET: GlobalCache = GlobalCache::new("ffi.DictGetItemOrMissing");
static DICT_SET: GlobalCache = GlobalCache::new("ffi.DictSetItem");
static DICT_ERASE: GlobalCache = GlobalCache::new("ffi.DictErase");
static DICT_CLEAR: GlobalCache = GlobalCache::new("ffi.DictClear");

/// A mutable hash map in insertion order, shared by reference with every language that holds
/// it (C++ `ffi::Dict<K, V>`, Python `tvm_ffi.Dict`).
///
/// **Shared mutation.** A `Dict` is one object: Rust, C++ and Python all see every write, and
/// any of them may write it at any time (a Python callback that Rust calls, for example). So
/// Rust never hands out references into its storage: each read copies the entry it finds (one
/// reference count) and each operation reads the table anew, in place, as C++ does. Writes go
/// through the runtime's own functions (`ffi.DictSetItem`, `ffi.DictErase`, ...), with `&self`,
/// like a `RefCell`. Element types are checked when a dict is converted from an `Any` (as
/// C++ does) and again on every read, because a foreign write may since have stored a value
/// of another type: such a read is a `TypeError`, never a wrong value. Keys are read only in
/// `K`'s own form, the form lookups with a `K` find (the runtime compares keys by type: the
/// `int` 1 is no key `1.0`): a cast refuses a dict whose keys are stored in another form (it
/// could convert them only in a copy, which would end the sharing: cast to a [`Map`](crate::Map)
/// for a converted copy), and iteration reports such a key as a `TypeError`. An iteration during
/// which entries are added or removed ends with a `RuntimeError` (as in Python); assigning an
/// existing key moves it to the end of the runtime's order, where the iteration meets it again. Rust's own operations on one dict never overlap (each holds a process-wide lock for
/// the dict); the runtime has no lock, so as in C++, code in other languages that writes the
/// dict from another thread synchronises with Rust itself.
///
/// ```
/// use tvm_ffi::{Dict, String};
/// let d: Dict<String, i64> = Dict::new([("a".into(), 1)]).unwrap();
/// let alias = d.clone(); // the same object
/// alias.insert("b".into(), 2).unwrap();
/// assert_eq!(d.get("b"), Some(2));
/// assert_eq!(d.len(), 2);
/// assert_eq!(d.remove("a").unwrap(), Some(1));
/// let entries: Vec<(String, i64)> = d.iter().collect::<tvm_ffi::Result<_>>().unwrap();
/// assert_eq!(entries, vec![("b".into(), 2)]);
/// ```
#[repr(transparent)]
pub struct Dict<K = Any, V = Any> {
    obj: ObjectRef<DictObj>,
    _types: PhantomData<fn() -> (K, V)>,
}

/// The key of an operation, prepared once.
struct Key<Q: IntoArg> {
    holder: Q::Holder,
}

impl<Q: IntoArg> Key<Q> {
    fn new(key: Q) -> Result<Key<Q>> {
        Ok(Key {
            holder: key.into_holder()?,
        })
    }
    fn view(&self) -> AnyView<'_> {
        Q::view(&self.holder)
    }
}

impl<K, V> Dict<K, V> {
    /// Number of entries now.
    #[inline]
    pub fn len(&self) -> usize {
        with_locked(&self.obj, |dict| match dict.table() {
            Some(table) => table.len(),
            None => table::runtime_len(object_view(&self.obj), true),
        })
    }
    /// Whether the dict is empty now.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<DictObj> {
        &self.obj
    }
    /// Unwraps into the object.
    pub fn into_object_ref(self) -> ObjectRef<DictObj> {
        self.obj
    }
    /// Wraps a dict object without checking entry types: any language may write the dict
    /// later, so every read checks them anyway (a value that is no `V`, or a key not in `K`'s
    /// own form, reads as a `TypeError`).
    pub fn from_object_ref(obj: ObjectRef<DictObj>) -> Self {
        Dict {
            obj,
            _types: PhantomData,
        }
    }

    /// Copies of all entries now, in insertion order, unconverted.
    pub fn snapshot(&self) -> Result<Vec<(Any, Any)>> {
        // One operation: the steps re-enter the lock, so no Rust write comes in between.
        with_locked(&self.obj, |_| super::try_collect(self.raw_entries(), Ok))
    }

    /// Owned copies of the entries, read one at a time.
    fn raw_entries(&self) -> RawEntries<'_> {
        with_locked(&self.obj, |dict| RawEntries {
            dict: &self.obj,
            source: match dict.table() {
                Some(table) => Source::InPlace {
                    cursor: table.first(),
                    shape: table.shape(),
                },
                None => {
                    let entries = table::runtime_entries(object_view(&self.obj), true);
                    Source::Copied {
                        len: entries.len(),
                        entries: entries.into_iter(),
                    }
                }
            },
            changed: false,
        })
    }

    /// The value for `key` now, copied, or `None`.
    fn lookup(&self, key: &AnyView<'_>) -> Result<Option<Any>> {
        match KeyProbe::new(key) {
            Some(probe) if table::layout_verified() => {
                return Ok(with_locked(&self.obj, |dict| {
                    let entry = dict.table()?.find(&probe)?;
                    // SAFETY: the entry lives in the dict now; it is copied under the lock,
                    // before any other code runs (nothing, if the runtime is releasing it).
                    unsafe { copy_live(std::ptr::addr_of!((*entry).value)) }
                }));
            }
            Some(_) => {}
            None => {
                if let Some(hooks) = Hooks::of(key) {
                    return Ok(self.find_hooked(key, &hooks)?.map(|found| found.value));
                }
            }
        }
        // A key only the runtime compares (an rvalue reference), or a table not read in place
        // (a key without hooks: the runtime runs no user code). A write meanwhile is refused, as
        // during a write.
        let f = DICT_GET.get()?;
        let found = with_locked(&self.obj, |dict| {
            write_dict(dict, || f.call((&self.obj, *key)))
        })?;
        Ok(unless_missing(found))
    }

    /// The hooks a lookup of `key` runs without the dict's lock (see [`Dict::find_hooked`]),
    /// when its type has any.
    fn hooked(key: &AnyView<'_>) -> Option<Hooks> {
        KeyProbe::new(key)
            .is_none()
            .then(|| Hooks::of(key))
            .flatten()
    }

    /// The entry equal to `key`, a key whose type registers its own hash or equality: user
    /// code, which never runs under the dict's lock (it may take other locks). The key is
    /// hashed first; the entries it may equal (its hash chain; every entry of its type when
    /// the table is not read in place) are copied under the lock; the lock is released and the
    /// copies compared. The answer is the dict's state when the copies were taken.
    fn find_hooked(&self, key: &AnyView<'_>, hooks: &Hooks) -> Result<Option<Found>> {
        let hash = hooks.hash(key)?;
        let candidates = with_locked(&self.obj, |dict| {
            let Some(table) = dict.table() else {
                let mut entries = table::runtime_entries(object_view(&self.obj), true);
                entries.retain(|(stored, _)| stored.type_index() == key.type_index());
                return entries;
            };
            table
                .candidates(hash, key.type_index())
                .into_iter()
                .filter_map(|entry| {
                    // SAFETY: entries of the dict now, copied under the lock (nothing of one
                    // the runtime is releasing).
                    let (stored, value) = unsafe {
                        (
                            copy_live(std::ptr::addr_of!((*entry).key)),
                            copy_live(std::ptr::addr_of!((*entry).value)),
                        )
                    };
                    stored.zip(value)
                })
                .collect::<Vec<_>>()
        });
        // Compared, and the copies released, without the lock.
        for (stored, value) in candidates {
            if hooks.equal(key, stored.as_view())? {
                return Ok(Some(Found {
                    key: stored,
                    value,
                    hash,
                }));
            }
        }
        Ok(None)
    }

    /// Whether `key` is present now.
    pub fn contains_key<Q: IntoArg>(&self, key: Q) -> bool {
        Key::new(key)
            .and_then(|key| self.lookup(&key.view()))
            .is_ok_and(|v| v.is_some())
    }

    /// Removes every entry (`ffi.DictClear`).
    pub fn clear(&self) -> Result<()> {
        let f = DICT_CLEAR.get()?;
        // The entries, kept until after the lock: their last release (a destructor in any
        // language; a Python one takes the GIL) never runs under it.
        let mut keep = Vec::new();
        let out = with_locked(&self.obj, |dict| {
            keep = super::try_collect(self.raw_entries(), Ok)?;
            write_dict(dict, || f.call((&self.obj,)).map(drop))
        });
        drop(keep);
        out
    }
}

impl<K: TryIntoAny, V: TryIntoAny> Dict<K, V> {
    /// A new dict of the key/value pairs (a later duplicate key wins). A key's
    /// `__any_equal__` hook that fails while the runtime compares the keys is the error
    /// returned (the runtime itself could only take the keys as unequal).
    ///
    /// ```
    /// use tvm_ffi::{Dict, String};
    /// let dict = Dict::<String, i64>::new([("a".into(), 1), ("a".into(), 2)]).unwrap();
    /// assert_eq!((dict.len(), dict.get("a")), (1, Some(2)));
    /// ```
    pub fn new(entries: impl IntoIterator<Item = (K, V)>) -> Result<Self> {
        let pairs = super::try_collect(entries.into_iter(), |(k, v)| {
            Ok([k.try_into_any()?, v.try_into_any()?])
        })?;
        let make = DICT_NEW.get()?;
        // A key's equality hook that fails is an error here, not a dict of "unequal" keys.
        let out =
            reporting_hook_failures(HookFailureIn::Build, || make.call(pairs.as_flattened()))?;
        Ok(Dict::from_object_ref(out.cast::<ObjectRef<DictObj>>()?))
    }

    /// [`Dict::new`] from a `Vec` (the expansion of `container_traits!` calls it).
    fn build_from_vec(entries: Vec<(K, V)>) -> Result<Self> {
        Self::new(entries)
    }

    /// Sets `key` to `value` (`ffi.DictSetItem`), visible to every holder of the dict.
    ///
    /// A key's `__any_equal__` hook that fails is an error: before the write (Rust's own
    /// lookup of the key), nothing is changed; inside the runtime's write, which cannot take
    /// an error there, the hook answers "unequal", the write takes effect so (the key may be
    /// added beside an entry the hook would have called equal) and its error is returned.
    ///
    /// ```
    /// use tvm_ffi::{Dict, String};
    /// let dict = Dict::<String, i64>::new([]).unwrap();
    /// let shared = dict.clone(); // the same dict, as another language would hold it
    /// dict.insert("a".into(), 1).unwrap();
    /// assert_eq!(shared.get("a"), Some(1));
    /// ```
    pub fn insert(&self, key: K, value: V) -> Result<()> {
        let (key, value) = (key.try_into_any()?, value.try_into_any()?);
        let f = DICT_SET.get()?;
        // The value replaced, kept until after the lock (see `clear`); found before taking the
        // lock for a key with hooks (user code never runs under it), in which case another
        // thread's write in between may replace a different value, released under the lock.
        let hooked = Dict::<K, V>::hooked(key.as_view()).is_some();
        let mut keep = if hooked {
            self.lookup(key.as_view())?
        } else {
            None
        };
        let out = with_locked(&self.obj, |dict| {
            if !hooked {
                keep = self.lookup(key.as_view())?;
            }
            write_dict(dict, || f.call((&self.obj, &key, &value)).map(drop))
        });
        drop(keep);
        out
    }
}

impl<K, V: for<'a> FromAny<'a>> Dict<K, V> {
    /// The value for `key` now, if present and a `V` (a foreign write may have stored another
    /// type: [`Dict::try_get`] tells which).
    ///
    /// ```
    /// let dict = tvm_ffi::Dict::<tvm_ffi::String, i64>::new([("a".into(), 1)]).unwrap();
    /// assert_eq!((dict.get("a"), dict.get("b")), (Some(1), None));
    /// ```
    pub fn get<Q: IntoArg>(&self, key: Q) -> Option<V> {
        self.try_get(key).ok().flatten()
    }

    /// The value for `key` now: `Ok(None)` when absent, a `TypeError` when a foreign write
    /// stored a value that is not a `V`.
    pub fn try_get<Q: IntoArg>(&self, key: Q) -> Result<Option<V>> {
        let key = Key::new(key)?;
        match self.lookup(&key.view())? {
            Some(value) => value.cast::<V>().map(Some),
            None => Ok(None),
        }
    }

    /// Removes `key` (`ffi.DictErase`) and returns its value, if it was present.
    pub fn remove<Q: IntoArg>(&self, key: Q) -> Result<Option<V>> {
        let (key, erase) = (Key::new(key)?, DICT_ERASE.get()?);
        if let Some(hooks) = Dict::<K, V>::hooked(&key.view()) {
            return self
                .remove_hooked(&key.view(), &hooks, erase)?
                .map(|v| v.cast::<V>())
                .transpose();
        }
        // The stored key, kept until after the lock (see `clear`); the value is returned.
        let mut keep = None;
        // One operation: the lookup re-enters the lock.
        let value = with_locked(&self.obj, |dict| -> Result<Option<Any>> {
            let view = key.view();
            let value = match KeyProbe::new(&view).zip(dict.table()) {
                Some((probe, table)) => table.find(&probe).and_then(|entry| {
                    // SAFETY: the entry lives in the dict now, copied under the lock.
                    unsafe {
                        keep = copy_live(std::ptr::addr_of!((*entry).key));
                        copy_live(std::ptr::addr_of!((*entry).value))
                    }
                }),
                // A key with custom hooks, or a table not read in place: found by the runtime,
                // which keeps its stored key.
                None => self.lookup(&view)?,
            };
            let Some(value) = value else {
                return Ok(None);
            };
            write_dict(dict, || erase.call((&self.obj, view)))?;
            Ok(Some(value))
        });
        drop(keep);
        value?.map(|v| v.cast::<V>()).transpose()
    }
}

impl<K, V> Dict<K, V> {
    /// [`Dict::remove`] of a key with hooks: found without the lock ([`Dict::find_hooked`]),
    /// then erased under it if the entry found is still there, unchanged (else found again).
    fn remove_hooked(
        &self,
        key: &AnyView<'_>,
        hooks: &Hooks,
        erase: &crate::call::function::Function,
    ) -> Result<Option<Any>> {
        loop {
            let Some(found) = self.find_hooked(key, hooks)? else {
                return Ok(None);
            };
            let probe = KeyProbe::identical(*found.key.as_raw(), found.hash);
            let erased = with_locked(&self.obj, |dict| -> Result<bool> {
                let unchanged = match dict.table() {
                    Some(table) => table.find(&probe).is_some_and(
                        // SAFETY: an entry of the dict now, read under the lock (bits only).
                        |entry| unsafe { bits(&(*entry).value) == bits(found.value.as_raw()) },
                    ),
                    // Not read in place: the runtime's copies, compared by bits.
                    None => table::runtime_entries(object_view(&self.obj), true)
                        .iter()
                        .any(|(k, v)| {
                            bits(k.as_raw()) == bits(found.key.as_raw())
                                && bits(v.as_raw()) == bits(found.value.as_raw())
                        }),
                };
                if unchanged {
                    // The runtime hashes the key again, running its hook under the lock: a
                    // write (see `base::lock` on what that may do).
                    write_dict(dict, || erase.call((&self.obj, *key)))?;
                }
                Ok(unchanged)
            })?;
            if erased {
                // The stored key is released here, after the lock.
                return Ok(Some(found.value));
            }
        }
    }
}

/// An entry found by a key with hooks: copies of the stored key and value, and the key's hash.
struct Found {
    key: Any,
    value: Any,
    hash: u64,
}

/// The 16 bytes of a value.
fn bits(value: &crate::abi::sys::TVMFFIAny) -> [u64; 2] {
    // SAFETY: a TVMFFIAny is 16 initialised bytes.
    unsafe { *(value as *const crate::abi::sys::TVMFFIAny as *const [u64; 2]) }
}

impl<K: for<'a> FromAny<'a>, V: for<'a> FromAny<'a>> Dict<K, V> {
    /// The entries, converted, in insertion order, read one at a time: a `TypeError` for an
    /// entry a foreign write gave another type, a `RuntimeError` (then the end) when entries
    /// were added or removed since the iteration started.
    pub fn iter(&self) -> DictIter<'_, K, V> {
        DictIter {
            entries: self.raw_entries(),
            reported: false,
            _types: PhantomData,
        }
    }

    /// All entries now, converted, in insertion order.
    pub fn entries(&self) -> Result<Vec<(K, V)>> {
        self.iter().collect()
    }
}

/// Owned copies of a dict's entries, read in place one at a time; ends (setting `changed`)
/// when entries were added or removed since it started.
#[derive(Clone)]
struct RawEntries<'a> {
    dict: &'a ObjectRef<DictObj>,
    source: Source,
    changed: bool,
}

/// Where [`RawEntries`] reads the entries.
#[derive(Clone)]
enum Source {
    /// The table, in place, and the shape it had when the iteration started.
    InPlace { cursor: Cursor, shape: [u64; 3] },
    /// Copies the runtime's iterator made when the iteration started (when the table is not
    /// read in place), and the number of entries then.
    Copied {
        entries: std::vec::IntoIter<(Any, Any)>,
        len: usize,
    },
}

impl Iterator for RawEntries<'_> {
    type Item = (Any, Any);
    fn next(&mut self) -> Option<(Any, Any)> {
        with_locked(self.dict, |dict| {
            if self.changed {
                return None;
            }
            let (table, cursor, shape) = match (&mut self.source, dict.table()) {
                (Source::InPlace { cursor, shape }, Some(table)) => (table, cursor, *shape),
                (Source::Copied { entries, len }, _) => {
                    if table::runtime_len(object_view(self.dict), true) != *len {
                        self.changed = true;
                        return None;
                    }
                    return entries.next();
                }
                // The verdict changed since the iteration started (only when forced).
                (Source::InPlace { .. }, None) => {
                    self.changed = true;
                    return None;
                }
            };
            if table.shape() != shape {
                self.changed = true;
                return None;
            }
            loop {
                let entry = table.next(cursor)?;
                // SAFETY: the entry lives in the dict now; both halves are copied before any
                // other code runs (nothing of a half the runtime is releasing).
                let (key, value) = unsafe {
                    (
                        copy_live(std::ptr::addr_of!((*entry).key)),
                        copy_live(std::ptr::addr_of!((*entry).value)),
                    )
                };
                match (key, value) {
                    (Some(key), Some(value)) => return Some((key, value)),
                    // An entry being released is skipped; the half copied is released after
                    // the lock (it may have become the last reference).
                    partial => hold_releases(|| drop(partial)),
                }
            }
        })
    }
}

/// The entries of a [`Dict`], converted ([`Dict::iter`], `for entry in &dict`).
///
/// ```
/// use tvm_ffi::Dict;
/// let dict: Dict<String, i64> = Dict::new([("a".to_string(), 1), ("b".to_string(), 2)]).unwrap();
/// // Each entry is a `Result`: any language may store a value of another type meanwhile.
/// let mut entries = dict.iter().collect::<tvm_ffi::Result<Vec<_>>>().unwrap();
/// entries.sort();
/// assert_eq!(entries, [("a".to_string(), 1), ("b".to_string(), 2)]);
/// ```
pub struct DictIter<'a, K, V> {
    entries: RawEntries<'a>,
    reported: bool,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for DictIter<'_, K, V> {
    fn clone(&self) -> Self {
        DictIter {
            entries: self.entries.clone(),
            reported: self.reported,
            _types: PhantomData,
        }
    }
}

impl<K, V> std::fmt::Debug for DictIter<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DictIter")
            .field("changed", &self.entries.changed)
            .finish_non_exhaustive()
    }
}

impl<K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> Iterator for DictIter<'_, K, V> {
    type Item = Result<(K, V)>;
    fn next(&mut self) -> Option<Result<(K, V)>> {
        match self.entries.next() {
            Some((k, v)) => Some(exact_key::<K>(&k).and_then(|k| Ok((k, v.cast::<V>()?)))),
            None if self.entries.changed && !self.reported => {
                self.reported = true;
                Some(Err(Error::runtime_error(
                    "dict changed size during iteration",
                )))
            }
            None => None,
        }
    }
}

/// A stored key read as a `K`: only in `K`'s own form, the form in which lookups with a `K`
/// find it (a foreign write may store the `int` 1 in a `Dict<f64, _>`: a `TypeError`, not a
/// key `1.0` that `get(1.0)` would miss).
fn exact_key<K: for<'a> FromAny<'a>>(key: &Any) -> Result<K> {
    match K::from_any_exact(key.as_view()) {
        Some(key) => Ok(key),
        None => Err(Error::type_error(format!(
            "Dict::iter: key {key:?} is a `{}`, not a `{}`",
            key.type_key(),
            K::type_str()
        ))),
    }
}

impl<K, V> Dict<K, V> {
    /// What `{:?}` lists: each entry, read under the lock one at a time.
    fn debug_entries(&self) -> RawEntries<'_> {
        self.raw_entries()
    }

    /// What `{}` prints: a copy, printed without the lock (printing runs the entries' repr
    /// hooks, user code that must not run under it).
    fn repr_object(&self) -> Result<ObjectRef<DictObj>> {
        self.snapshot()
            .and_then(|entries| {
                let flat: Vec<[Any; 2]> = entries.into_iter().map(|(k, v)| [k, v]).collect();
                DICT_NEW.get()?.call(flat.as_flattened())
            })
            .and_then(|copy| copy.cast::<ObjectRef<DictObj>>())
    }
}

container_traits!(Dict<K, V>, item = (K, V), debug_map, "dict", iter = DictIter);

/// A runtime write of a locked dict: a key hook that failed inside it is its error.
fn write_dict<R>(dict: &Locked<'_, DictObj>, write: impl FnOnce() -> Result<R>) -> Result<R> {
    dict.write(|| reporting_hook_failures(HookFailureIn::Write, write))
}
