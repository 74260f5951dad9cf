//! [`Map<K, V>`]: the runtime's immutable `ffi.Map` (Python `dict` on the way in), read in
//! place.
use super::traits::container_traits;
use std::marker::PhantomData;

use super::hash::KeyProbe;
use super::table::{self, Cursor, RawEntry, Table};
use crate::abi::sys::TVMFFIAny;
use crate::base::error::{Error, Result};
use crate::base::object::builtin::MapObj;
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny, TryIntoAny};
use crate::call::function::{object_view, GlobalCache, IntoArg};

pub(super) static MAP_NEW: GlobalCache = GlobalCache::new("ffi.Map");
static MAP_GET: GlobalCache = GlobalCache::new("ffi.MapGetItemOrMissing");
static MISSING_FN: GlobalCache = GlobalCache::new("ffi.GetInvalidObject");

/// The runtime's MISSING sentinel (a singleton object), fetched once rather than per lookup.
pub(super) fn missing_sentinel() -> Option<&'static Any> {
    static MISSING: std::sync::OnceLock<Any> = std::sync::OnceLock::new();
    if let Some(m) = MISSING.get() {
        return Some(m);
    }
    let m = MISSING_FN.get().ok()?.call(()).ok()?;
    Some(MISSING.get_or_init(|| m))
}

/// The value `lookup` (`ffi.MapGetItemOrMissing` or `ffi.DictGetItemOrMissing`) returned, or
/// `None` for the runtime's MISSING sentinel.
pub(super) fn unless_missing(out: Any) -> Option<Any> {
    let missing = missing_sentinel()?;
    let same = out.as_raw().type_index == missing.as_raw().type_index
        // SAFETY: both hold an object pointer when their indices are object indices.
        && unsafe { out.as_raw().value.v_obj == missing.as_raw().value.v_obj };
    (!same).then_some(out)
}

/// Views a value stored in a table.
///
/// # Safety
/// `raw` is a valid value that outlives `'a` unchanged.
#[inline]
pub(super) unsafe fn stored_view<'a>(raw: *const TVMFFIAny) -> &'a AnyView<'a> {
    // SAFETY: AnyView is repr(transparent) over TVMFFIAny; validity from the caller.
    unsafe { &*(raw as *const AnyView<'a>) }
}

/// An immutable, reference-counted hash map in insertion order (C++ `ffi::Map<K, V>`).
///
/// Length, lookup and iteration read the runtime's table in place, as C++ does: no call into
/// the runtime (when the layout check made at the first read agrees with the loaded runtime;
/// otherwise they go through the runtime's `ffi.Map*` functions, with the same answers). A lookup hashes and compares the key with the runtime's own `AnyHash` /
/// `AnyEqual` (strings by content, integers and other plain values by value, objects by
/// identity, `ffi.BigInt` by value); only a key object whose type registers a custom
/// `__any_hash__` (e.g. `ffi.StructuralKey`) is looked up through `ffi.MapGetItemOrMissing`.
///
/// A `Map` never changes while a reference to it exists: C++ `Map` mutators copy unless they
/// hold the only reference (copy-on-write), Python's `Map` is immutable and `ffi.Map` builds
/// new maps. So entries are read without copies and key and value types are checked once,
/// when a map is converted from an `Any` or wrapped ([`Map::from_object_ref`]).
///
/// **Keys are stored in `K`'s own form.** The runtime hashes and compares keys by type (the
/// `int` 1 and the `float` 1.0 are different keys), so a `Map<f64, V>` whose keys were the
/// stored `int`s would list `1.0` and miss it on lookup. A cast ([`Any::cast`]) therefore shares
/// the map only when every key is already a `K` as `K` stores it (values may be of any type
/// that converts to `V`: each converts as it is read); otherwise it builds a new map of the
/// converted entries, as C++ does (a key of a type without a stored form to convert into, a
/// type that is no [`IntoAny`](crate::IntoAny), makes the cast fail).
///
/// ```
/// use tvm_ffi::{Any, Map};
/// let ints: Map<i64, i64> = Map::new([(1, 10), (2, 20)]).unwrap();
/// let shared: Map<i64, f64> = Any::new(&ints).cast().unwrap(); // keys already `i64`s
/// assert!(shared.as_object_ref().ptr_eq(ints.as_object_ref()));
/// let floats: Map<f64, f64> = Any::new(&ints).cast().unwrap(); // a new map, keys re-encoded
/// assert!(!floats.as_object_ref().ptr_eq(ints.as_object_ref()));
/// assert_eq!((floats.get(1.0), floats.contains_key(2.0)), (Some(10.0), true));
/// ```
///
/// ```
/// use tvm_ffi::{Map, String};
/// let m: Map<String, i64> = [("a".into(), 1), ("b".into(), 2)].into_iter().collect();
/// assert_eq!(m.get("b"), Some(2));
/// assert_eq!(m.len(), 2);
/// let mut total = 0;
/// for (key, value) in &m {
///     total += value;
///     assert!(key == "a" || key == "b");
/// }
/// assert_eq!(total, 3);
/// assert_eq!(m.to_string(), r#"{"a": 1, "b": 2}"#);
/// ```
#[repr(transparent)]
pub struct Map<K, V> {
    obj: ObjectRef<MapObj>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Map<K, V> {
    /// The table read in place, or `None` when the runtime's layout is not the one read (the
    /// runtime's functions answer then: see `table`).
    #[inline]
    fn table(&self) -> Option<Table<'_>> {
        // SAFETY: `self` keeps the map alive, and a shared map is never written (see the type
        // docs).
        unsafe { Table::new(self.obj.as_raw()) }
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        match self.table() {
            Some(table) => table.len(),
            None => table::runtime_len(object_view(&self.obj), false),
        }
    }
    /// Whether the map is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<MapObj> {
        &self.obj
    }
    /// Unwraps into the object.
    pub fn into_object_ref(self) -> ObjectRef<MapObj> {
        self.obj
    }
    /// Wraps a map object whose keys are known to be in `K`'s own form and whose values are
    /// known to convert to `V` (a map built from `K`s and `V`s, or checked).
    #[inline]
    pub(super) fn wrap(obj: ObjectRef<MapObj>) -> Self {
        Map {
            obj,
            _types: PhantomData,
        }
    }

    /// All entries as borrowed views, in insertion order.
    pub fn iter_views(&self) -> MapViews<'_> {
        let source = match self.table() {
            Some(table) => Source::InPlace(table, table.first()),
            None => Source::Copied(
                table::runtime_entries(object_view(&self.obj), false)
                    .into_iter()
                    .map(|(k, v)| (*k.as_raw(), *v.as_raw()))
                    .collect::<Vec<_>>()
                    .into_iter(),
            ),
        };
        MapViews {
            source,
            remaining: self.len(),
            _map: PhantomData,
        }
    }

    /// The value cells of the table in insertion order, for the structural map's in-place
    /// update of a map that nothing else holds; `None` when the table is not read in place.
    pub(crate) fn value_cells(&self) -> Option<Vec<*mut TVMFFIAny>> {
        let table = self.table()?;
        let mut cursor = table.first();
        let mut cells = Vec::with_capacity(table.len());
        while let Some(entry) = table.next(&mut cursor) {
            // SAFETY: an entry of the live table; the pointer derives from the object's raw
            // handle, so a holder with the only reference may write through it.
            cells.push(unsafe { std::ptr::addr_of!((*entry).value) } as *mut TVMFFIAny);
        }
        Some(cells)
    }

    /// All entries as owned values, in insertion order.
    pub fn entries_any(&self) -> Result<Vec<(Any, Any)>> {
        super::try_collect(self.iter_views(), |(k, v)| {
            Ok((k.to_owned()?, v.to_owned()?))
        })
    }

    /// The stored value for `key`, viewed in place; `Err(key)` when only the runtime can
    /// compare the key, or the table is not read in place.
    #[inline]
    pub(super) fn find_view<'s>(
        &'s self,
        key: &AnyView<'_>,
    ) -> Option<std::result::Result<&'s AnyView<'s>, ()>> {
        let Some(table) = self.table() else {
            return Some(Err(()));
        };
        match KeyProbe::new(key) {
            Some(probe) => {
                let entry = table.find(&probe)?;
                // SAFETY: the entry lives in the map, which `self` keeps alive and unchanged.
                Some(Ok(unsafe {
                    stored_view(std::ptr::addr_of!((*entry).value))
                }))
            }
            None => Some(Err(())),
        }
    }

    /// The value for a key of a type with a custom hash, through the runtime.
    #[cold]
    pub(super) fn get_by_runtime(&self, key: &AnyView<'_>) -> Option<Any> {
        let out = MAP_GET.get().ok()?.call((&self.obj, *key)).ok()?;
        unless_missing(out)
    }

    /// Whether `key` is present.
    pub fn contains_key<Q: IntoArg>(&self, key: Q) -> bool {
        let Ok(holder) = key.into_holder() else {
            return false;
        };
        let key = Q::view(&holder);
        match self.find_view(&key) {
            Some(Ok(_)) => true,
            Some(Err(())) => self.get_by_runtime(&key).is_some(),
            None => false,
        }
    }
}

/// Whether a stored key is in `K`'s own form: the form in which a lookup with a `K` finds it
/// (the runtime hashes and compares keys by type: the `int` 1 is no key `1.0`).
#[inline]
pub(super) fn key_in_form<K: for<'a> FromAny<'a>>(key: &AnyView<'_>) -> bool {
    K::ACCEPTS_ANY || K::from_any_exact(key).is_some()
}

/// Why a map cannot be a `Map<K, V>` as it is stored: which half of which entry.
pub(super) enum Misfit<'a> {
    /// A key not in `K`'s own form ([`key_in_form`]).
    Key(AnyView<'a>),
    /// The value of `key`, which does not convert to `V`.
    Value {
        key: AnyView<'a>,
        value: AnyView<'a>,
    },
}

impl<K: for<'a> FromAny<'a>, V: for<'a> FromAny<'a>> Map<K, V> {
    /// Wraps a map object, checking that every key is stored in `K`'s own form (the form in
    /// which lookups find it: a map of `int` keys is no `Map<f64, _>`, cast it with
    /// [`Any::cast`] to convert it) and every value converts to `V`. `Map<Any, Any>` checks
    /// nothing.
    ///
    /// ```
    /// use tvm_ffi::Map;
    /// let map: Map<i64, i64> = Map::new([(1, 10)]).unwrap();
    /// let same: Map<i64, f64> = Map::from_object_ref(map.as_object_ref().clone());
    /// assert_eq!(same.get(1), Some(10.0)); // values convert as they are read
    /// ```
    ///
    /// # Panics
    /// When a key or value does not fit, naming it; [`Map::try_from_object_ref`] and
    /// [`Any::cast`] report that as an error.
    pub fn from_object_ref(obj: ObjectRef<MapObj>) -> Self {
        match Map::checked(obj, "Map::from_object_ref") {
            Ok(map) => map,
            Err(message) => panic!("{message}"),
        }
    }

    /// Wraps a map object, or fails with a `TypeError` naming the first key not stored in
    /// `K`'s own form or value that does not convert to `V` (never panics).
    ///
    /// ```
    /// use tvm_ffi::Map;
    /// let map: Map<i64, i64> = Map::new([(1, 10)]).unwrap();
    /// let err = Map::<f64, i64>::try_from_object_ref(map.as_object_ref().clone()).unwrap_err();
    /// assert_eq!(err.message(), "Map::try_from_object_ref: key 1 is a `int`, not a `float`");
    /// let err = Map::<i64, String>::try_from_object_ref(map.into_object_ref()).unwrap_err();
    /// assert_eq!(
    ///     err.message(),
    ///     "Map::try_from_object_ref: the value of key 1 is a `int`, not a `str`"
    /// );
    /// ```
    pub fn try_from_object_ref(obj: ObjectRef<MapObj>) -> Result<Self> {
        Map::checked(obj, "Map::try_from_object_ref").map_err(Error::type_error)
    }

    /// The map, or the message of `what` naming the first entry that does not fit.
    fn checked(
        obj: ObjectRef<MapObj>,
        what: &str,
    ) -> std::result::Result<Self, std::string::String> {
        let map = Map::wrap(obj);
        let message = match map.first_misfit() {
            None => None,
            Some(Misfit::Key(key)) => Some(format!(
                "{what}: key {key:?} is a `{}`, not a `{}`",
                key.type_key(),
                K::type_str()
            )),
            Some(Misfit::Value { key, value }) => Some(format!(
                "{what}: the value of key {key:?} is a `{}`, not a `{}`",
                value.type_key(),
                V::type_str()
            )),
        };
        match message {
            None => Ok(map),
            Some(message) => Err(message),
        }
    }

    /// The first entry that keeps the map from being a `Map<K, V>` as it is stored, if any.
    pub(super) fn first_misfit(&self) -> Option<Misfit<'_>> {
        if K::ACCEPTS_ANY && V::ACCEPTS_ANY {
            return None;
        }
        self.iter_views().find_map(|(key, value)| {
            if !key_in_form::<K>(&key) {
                Some(Misfit::Key(key))
            } else if !V::ACCEPTS_ANY && !V::converts(&value) {
                Some(Misfit::Value { key, value })
            } else {
                None
            }
        })
    }
}

impl<K: TryIntoAny, V: TryIntoAny> Map<K, V> {
    /// Builds a map from key/value pairs (a later duplicate key wins). A key's
    /// `__any_equal__` hook that fails while the runtime compares the keys is the error
    /// returned (the runtime itself could only take the keys as unequal).
    ///
    /// ```
    /// let m = tvm_ffi::Map::new([("a", 1i64), ("b", 2)]).unwrap();
    /// assert_eq!(m.get("b"), Some(2));
    /// ```
    pub fn new(entries: impl IntoIterator<Item = (K, V)>) -> Result<Self> {
        let pairs = super::try_collect(entries.into_iter(), |(k, v)| {
            Ok([k.try_into_any()?, v.try_into_any()?])
        })?;
        let args = pairs.as_flattened();
        let make = MAP_NEW.get()?;
        // A key's equality hook that fails is an error here, not a map of "unequal" keys.
        let out = super::hash::reporting_hook_failures(super::hash::HookFailureIn::Build, || {
            make.call(args)
        })?;
        Ok(Map::wrap(out.cast::<ObjectRef<MapObj>>()?))
    }

    /// [`Map::new`] from a `Vec` (the expansion of `container_traits!` calls it).
    fn build_from_vec(entries: Vec<(K, V)>) -> Result<Self> {
        Self::new(entries)
    }
}

impl<K, V: for<'a> FromAny<'a>> Map<K, V> {
    /// The value for `key`, if present.
    ///
    /// ```
    /// let map = tvm_ffi::Map::<tvm_ffi::String, i64>::new([("a".into(), 1)]).unwrap();
    /// assert_eq!((map.get("a"), map.get("b")), (Some(1), None));
    /// ```
    #[inline]
    pub fn get<Q: IntoArg>(&self, key: Q) -> Option<V> {
        let holder = key.into_holder().ok()?;
        let key = Q::view(&holder);
        match self.find_view(&key)? {
            Ok(value) => V::from_any(value),
            Err(()) => self.get_by_runtime(&key)?.checked_cast::<V>(),
        }
    }
}

impl<K, V: for<'a> FromAny<'a>> Map<K, V> {
    /// [`Map::get`] in the shape of [`Dict::try_get`](crate::Dict::try_get): `Ok(None)` when
    /// absent; an error only when the key cannot be passed to the runtime.
    pub fn try_get<Q: IntoArg>(&self, key: Q) -> Result<Option<V>> {
        let holder = key.into_holder()?;
        let key = Q::view(&holder);
        Ok(match self.find_view(&key) {
            None => None,
            Some(Ok(value)) => V::from_any(value),
            Some(Err(())) => self
                .get_by_runtime(&key)
                .and_then(|v| v.checked_cast::<V>()),
        })
    }
}

impl<K: for<'a> FromAny<'a>, V: for<'a> FromAny<'a>> Map<K, V> {
    /// The entries, converted, in insertion order (C++'s order: a small map keeps a
    /// re-assigned key in place, a dense one moves it to the end).
    pub fn iter(&self) -> MapIter<'_, K, V> {
        MapIter {
            views: self.iter_views(),
            _types: PhantomData,
        }
    }

    /// The keys, in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = K> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values, in insertion order.
    pub fn values(&self) -> impl Iterator<Item = V> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// All entries, converted, in insertion order.
    pub fn entries(&self) -> Vec<(K, V)> {
        self.iter().collect()
    }
}

/// The entries of a [`Map`] as views of its storage ([`Map::iter_views`]).
///
/// ```
/// use tvm_ffi::Map;
/// let map: Map<i64, f64> = Map::new([(1, 0.5), (2, 1.5)]).unwrap();
/// // Views borrow the map's storage: nothing is converted, no reference count changes.
/// let keys: Vec<&str> = map.iter_views().map(|(k, _)| k.type_key()).collect();
/// assert_eq!(keys, ["int", "int"]);
/// let (k, v) = map.iter_views().next().unwrap();
/// assert_eq!((k.cast::<i64>().unwrap(), v.cast::<f64>().unwrap()), (1, 0.5));
/// ```
#[derive(Clone)]
pub struct MapViews<'a> {
    source: Source<'a>,
    remaining: usize,
    _map: PhantomData<&'a ObjectRef<MapObj>>,
}

/// Where [`MapViews`] reads the entries.
#[derive(Clone)]
enum Source<'a> {
    /// The table, in place.
    InPlace(Table<'a>, Cursor),
    /// Bit copies of the entries the runtime's iterator returned (when the table is not read
    /// in place): plain values, or objects that the map itself holds.
    Copied(std::vec::IntoIter<(TVMFFIAny, TVMFFIAny)>),
}

// SAFETY: a `MapViews` only reads an immutable `ffi.Map` that its borrow keeps alive, as `&Map`
// does (`Map` is `Send + Sync`); the views it yields borrow the map the same way.
unsafe impl Send for MapViews<'_> {}
// SAFETY: as above: shared reads of an immutable map.
unsafe impl Sync for MapViews<'_> {}

impl std::fmt::Debug for MapViews<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapViews")
            .field("remaining", &self.remaining)
            .finish()
    }
}

impl<K, V> Clone for MapIter<'_, K, V> {
    fn clone(&self) -> Self {
        MapIter {
            views: self.views.clone(),
            _types: PhantomData,
        }
    }
}

impl<K, V> std::fmt::Debug for MapIter<'_, K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapIter")
            .field("remaining", &self.views.remaining)
            .finish()
    }
}

impl<'a> Iterator for MapViews<'a> {
    type Item = (AnyView<'a>, AnyView<'a>);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (table, cursor) = match &mut self.source {
            Source::InPlace(table, cursor) => (table, cursor),
            Source::Copied(entries) => {
                let (key, value) = entries.next()?;
                self.remaining = self.remaining.saturating_sub(1);
                // SAFETY: copies of stored values (the runtime's iterator copies them: the same
                // objects), which the map, borrowed for 'a and never written while shared,
                // keeps alive.
                return Some(unsafe { (AnyView::from_raw(key), AnyView::from_raw(value)) });
            }
        };
        let entry: *const RawEntry = table.next(cursor)?;
        self.remaining = self.remaining.saturating_sub(1);
        // SAFETY: the entry lives in the map, borrowed for 'a and never written while shared.
        unsafe {
            Some((
                *stored_view(std::ptr::addr_of!((*entry).key)),
                *stored_view(std::ptr::addr_of!((*entry).value)),
            ))
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}
impl ExactSizeIterator for MapViews<'_> {}

/// The converted entries of a [`Map`] ([`Map::iter`], `for (k, v) in &map`).
///
/// ```
/// use tvm_ffi::Map;
/// let map: Map<String, i64> = Map::new([("x".to_string(), 1), ("y".to_string(), 2)]).unwrap();
/// let entries: Vec<(String, i64)> = map.iter().collect(); // in insertion order
/// assert_eq!(entries, [("x".to_string(), 1), ("y".to_string(), 2)]);
/// let total: i64 = (&map).into_iter().map(|(_, v)| v).sum();
/// assert_eq!(total, 3);
/// ```
pub struct MapIter<'a, K, V> {
    views: MapViews<'a>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> Iterator for MapIter<'_, K, V> {
    type Item = (K, V);
    #[inline]
    fn next(&mut self) -> Option<(K, V)> {
        let (k, v) = self.views.next()?;
        Some((
            K::from_any(&k).expect("keys are checked when a map is wrapped"),
            V::from_any(&v).expect("values are checked when a map is wrapped"),
        ))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.views.size_hint()
    }
}
impl<K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> ExactSizeIterator for MapIter<'_, K, V> {}

impl<K, V> Map<K, V> {
    /// What `{:?}` lists: the entries, read in place.
    fn debug_entries(&self) -> MapViews<'_> {
        self.iter_views()
    }

    /// What `{}` prints: the map itself (immutable: no lock is needed).
    fn repr_object(&self) -> Result<ObjectRef<MapObj>> {
        Ok(self.obj.clone())
    }
}

container_traits!(Map<K, V>, item = (K, V), debug_map, "map", iter = MapIter);
