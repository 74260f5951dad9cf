//! Converting values into the containers (`FromAny`): a value of the container's own type
//! whose elements convert, or a value of its immutable or mutable twin, copied into a new
//! container as C++ converts one (`List` into `Array`, `Dict` into `Map`, and back). The
//! conversions between twins live here, above both, so that neither container file uses the
//! other.
//!
//! Keys of `Map` and `Dict` are hashed and compared by type (the `int` 1 is no key `1.0`), so a
//! conversion keeps or makes every key in `K`'s own form ([`key_in_form`]): a `Map` is shared
//! only when its keys are, otherwise copied with its keys re-encoded (as C++ copies it); a
//! `Dict`, shared for writes, is refused instead of copied (a copy would silently stop sharing).
use super::array::{Array, ARRAY_NEW};
use super::dict::{Dict, DICT_NEW};
use super::list::{List, LIST_NEW};
use super::map::{key_in_form, Map, Misfit, MAP_NEW};
use crate::base::error::Error;
use crate::base::object::builtin::{ArrayObj, DictObj, ListObj, MapObj};
use crate::base::object::{ObjectRef, ObjectType};
use crate::base::value::{Any, AnyView, FromAny, IntoAny};
use crate::call::function::GlobalCache;

/// Whether every value converts to `T`.
fn all_convert<'a, T: for<'b> FromAny<'b>>(
    mut values: impl Iterator<Item = &'a AnyView<'a>>,
) -> bool {
    T::ACCEPTS_ANY || values.all(|v| T::converts(v))
}

/// C++'s description of why `view` is no `name<T>` (`Array[index 1: int]`): the first element
/// that does not convert, or the value's type.
fn describe_sequence<T: for<'b> FromAny<'b>>(name: &str, view: &AnyView<'_>) -> String {
    let items: Vec<Any> = if let Some(obj) = <&ObjectRef<ArrayObj>>::from_any(view) {
        Array::<Any>::from_object_ref(obj.clone()).iter().collect()
    } else if let Some(obj) = <&ObjectRef<ListObj>>::from_any(view) {
        List::<Any>::from_object_ref(obj.clone())
            .snapshot()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    match items
        .iter()
        .enumerate()
        .find(|(_, v)| T::from_any(v.as_view()).is_none())
    {
        Some((i, bad)) => format!(
            "`{name}[index {i}: {}]`",
            T::describe_mismatch(bad.as_view()).trim_matches('`')
        ),
        None => format!("`{}`", view.type_key()),
    }
}

/// How a conversion treats a key that converts to `K` but is stored in another form.
#[derive(Clone, Copy, PartialEq)]
enum KeyForms {
    /// Re-encodes it into a new container (a `Map` cast, a copy between twins).
    Reencode,
    /// Refuses it (a `Dict` cast, which shares the dict).
    Refuse,
}

/// C++'s description of the first entry of `entries` that does not convert to `(K, V)`
/// (`Map[some key is ..., V]`), naming the container `name`; also a key that converts but
/// that the conversion cannot keep in `K`'s own form (see [`KeyForms`]).
fn describe_entries<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>>(
    name: &str,
    entries: impl Iterator<Item = (AnyView<'a>, AnyView<'a>)>,
    forms: KeyForms,
) -> Option<String> {
    for (k, v) in entries {
        if K::from_any(&k).is_none() {
            return Some(format!(
                "`{name}[some key is {}, V]`",
                K::describe_mismatch(&k).trim_matches('`')
            ));
        }
        if !key_in_form::<K>(&k) {
            let why = match forms {
                KeyForms::Refuse => "a cast shares the dict, so its keys are not converted",
                KeyForms::Reencode if K::reencode(&k).is_none() => "no stored form to convert into",
                KeyForms::Reencode => "",
            };
            if !why.is_empty() {
                return Some(format!(
                    "`{name}[some key is {}, not {} ({why}), V]`",
                    k.type_key(),
                    K::type_str()
                ));
            }
        }
        if V::from_any(&v).is_none() {
            return Some(format!(
                "`{name}[K, some value is {}]`",
                V::describe_mismatch(&v).trim_matches('`')
            ));
        }
    }
    None
}

/// C++'s description of why `view` is no `name<K, V>`: the first entry that does not convert,
/// or the value's type.
fn describe_mapping<K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>>(
    name: &str,
    view: &AnyView<'_>,
) -> String {
    if let Some(obj) = <&ObjectRef<MapObj>>::from_any(view) {
        let map = Map::<Any, Any>::wrap(obj.clone());
        if let Some(text) = describe_entries::<K, V>(name, map.iter_views(), KeyForms::Reencode) {
            return text;
        }
    }
    if let Some(obj) = <&ObjectRef<DictObj>>::from_any(view) {
        let dict = Dict::<Any, Any>::from_object_ref(obj.clone());
        let entries = dict.snapshot().unwrap_or_default();
        let views = entries.iter().map(|(k, v)| (k.view(), v.view()));
        // A dict cast to a `Dict` is shared; to a `Map`, copied.
        let forms = if name == "Dict" {
            KeyForms::Refuse
        } else {
            KeyForms::Reencode
        };
        if let Some(text) = describe_entries::<K, V>(name, views, forms) {
            return text;
        }
    }
    format!("`{}`", view.type_key())
}

/// The entries of a new `Map<K, V>` or `Dict<K, V>` holding `entries` converted, flattened
/// `[key, value, ...]` as `ffi.Map` and `ffi.Dict` take them, or `None` when one does not
/// convert. As C++'s slow path: each key is stored in `K`'s own form (re-encoded when it is in
/// another: `None` when `K` has no form to re-encode into), each value in `V`'s where `V` has
/// one (otherwise as it is: it converts when read).
fn converted_entries<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>>(
    entries: impl Iterator<Item = (AnyView<'a>, AnyView<'a>)>,
) -> Option<Vec<[Any; 2]>> {
    super::try_collect(entries, |(k, v)| {
        let key = if key_in_form::<K>(&k) {
            k.to_owned().ok()
        } else {
            K::reencode(&k)
        };
        let value = if V::ACCEPTS_ANY || V::from_any_exact(&v).is_some() {
            v.to_owned().ok()
        } else if V::converts(&v) {
            V::reencode(&v).or_else(|| v.to_owned().ok())
        } else {
            None
        };
        key.zip(value)
            .map(|(k, v)| [k, v])
            .ok_or_else(|| Error::type_error("entry does not convert"))
    })
    .ok()
}

/// The new object `make` (`ffi.Map`, `ffi.Dict`) builds of `entries` converted to `(K, V)`.
fn rebuilt<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>, O: ObjectType>(
    make: &GlobalCache,
    entries: impl Iterator<Item = (AnyView<'a>, AnyView<'a>)>,
) -> Option<ObjectRef<O>>
where
    ObjectRef<O>: for<'b> FromAny<'b>,
{
    let flat = converted_entries::<K, V>(entries)?;
    let out = make.get().ok()?.call(flat.as_flattened()).ok()?;
    out.cast::<ObjectRef<O>>().ok()
}

impl<'a, T: for<'b> FromAny<'b>> FromAny<'a> for Array<T> {
    /// An `Array` whose elements convert to `T`; a `List` is copied into a new `Array` (as C++
    /// converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<ArrayObj>>::from_any(view) {
            let array = Array::<T>::wrap(obj.clone());
            return array.first_mismatch().is_none().then_some(array);
        }
        let list = <&ObjectRef<ListObj>>::from_any(view)?;
        let items = List::<Any>::from_object_ref(list.clone()).snapshot().ok()?;
        if !all_convert::<T>(items.iter().map(Any::as_view)) {
            return None;
        }
        let out = ARRAY_NEW.get().ok()?.call(items.as_slice()).ok()?;
        Some(Array::wrap(out.cast::<ObjectRef<ArrayObj>>().ok()?))
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_sequence::<T>("Array", view)
    }
    /// Only an `Array` whose elements are exactly `T`s (no copy of a `List`, no element
    /// coercion), as C++ `ObjectRef::as<Array<T>>` checks.
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&ObjectRef<ArrayObj>>::from_any(view)?;
        let array = Array::<T>::wrap(obj.clone());
        (T::ACCEPTS_ANY
            || array
                .as_views()
                .iter()
                .all(|v| T::from_any_exact(v).is_some()))
        .then_some(array)
    }
    /// The array itself when its elements convert (an object key keeps its identity), else
    /// the copy of a `List`.
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<ArrayObj>>::match_type_index(index)
    }
}

impl<'a, T: for<'b> FromAny<'b>> FromAny<'a> for List<T> {
    /// A `List` whose elements convert to `T` (the same object: writes are shared); an
    /// `Array` is copied into a new `List` (as C++ converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<ListObj>>::from_any(view) {
            let list = List::<T>::from_object_ref(obj.clone());
            if T::ACCEPTS_ANY {
                return Some(list);
            }
            let items = list.snapshot().ok()?;
            return all_convert::<T>(items.iter().map(Any::as_view)).then_some(list);
        }
        let array = <&ObjectRef<ArrayObj>>::from_any(view)?;
        let array = Array::<Any>::from_object_ref(array.clone());
        if !all_convert::<T>(array.as_views().iter()) {
            return None;
        }
        let out = LIST_NEW.get().ok()?.call(array.as_views()).ok()?;
        out.cast::<ObjectRef<ListObj>>()
            .ok()
            .map(List::from_object_ref)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_sequence::<T>("List", view)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<ListObj>>::match_type_index(index)
    }
}

impl<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> FromAny<'a> for Map<K, V> {
    /// A `Map` whose keys are stored as `K`s and whose values convert to `V` (the same
    /// object); a `Map` whose keys convert to `K` but are stored in another form, or a `Dict`,
    /// is copied into a new `Map` of the converted entries (as C++ converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<MapObj>>::from_any(view) {
            let map = Map::<K, V>::wrap(obj.clone());
            return match map.first_misfit() {
                None => Some(map),
                // A value that does not convert fails; a key in another form is re-encoded.
                Some(Misfit::Value { .. }) => None,
                Some(Misfit::Key(_)) => {
                    rebuilt::<K, V, MapObj>(&MAP_NEW, map.iter_views()).map(Map::wrap)
                }
            };
        }
        let dict = <&ObjectRef<DictObj>>::from_any(view)?;
        let entries = Dict::<Any, Any>::from_object_ref(dict.clone())
            .snapshot()
            .ok()?;
        let views = entries.iter().map(|(k, v)| (k.view(), v.view()));
        rebuilt::<K, V, MapObj>(&MAP_NEW, views).map(Map::wrap)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_mapping::<K, V>("Map", view)
    }
    /// Only a `Map` whose keys and values are exactly `K`s and `V`s (no copy of a `Dict`, no
    /// coercion), as C++ `ObjectRef::as<Map<K, V>>` checks.
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&ObjectRef<MapObj>>::from_any(view)?;
        let map = Map::<K, V>::wrap(obj.clone());
        let exact = (K::ACCEPTS_ANY && V::ACCEPTS_ANY)
            || map
                .iter_views()
                .all(|(k, v)| K::from_any_exact(&k).is_some() && V::from_any_exact(&v).is_some());
        exact.then_some(map)
    }
    /// The map itself when it is shared, else the converted copy (an object key keeps its
    /// identity: the same object).
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    /// Whether [`FromAny::from_any`] succeeds, without building the copy it may make.
    fn converts(view: &'a AnyView<'a>) -> bool {
        let entry_converts = |(k, v): (AnyView<'_>, AnyView<'_>)| {
            (key_in_form::<K>(&k) || K::reencode(&k).is_some()) && V::converts(&v)
        };
        if let Some(obj) = <&ObjectRef<MapObj>>::from_any(view) {
            let map = Map::<K, V>::wrap(obj.clone());
            return map.first_misfit().is_none() || map.iter_views().all(entry_converts);
        }
        let Some(dict) = <&ObjectRef<DictObj>>::from_any(view) else {
            return false;
        };
        let Ok(entries) = Dict::<Any, Any>::from_object_ref(dict.clone()).snapshot() else {
            return false;
        };
        entries
            .iter()
            .map(|(k, v)| (k.view(), v.view()))
            .all(entry_converts)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<MapObj>>::match_type_index(index)
    }
}

impl<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> FromAny<'a> for Dict<K, V> {
    /// A `Dict` whose keys are stored as `K`s and whose values convert to `V` (the same
    /// object: writes are shared); a `Map` is copied into a new `Dict` of the converted
    /// entries (as C++ converts one). Unlike C++, a `Dict` whose keys convert to `K` but are
    /// stored in another form (`int`s for a `Dict<f64, _>`) is refused rather than copied: a
    /// copy would silently stop sharing the caller's writes, and the keys as they are stored
    /// would not be found by lookups with `K`s.
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<DictObj>>::from_any(view) {
            let dict = Dict::<K, V>::from_object_ref(obj.clone());
            if K::ACCEPTS_ANY && V::ACCEPTS_ANY {
                return Some(dict);
            }
            let entries = dict.snapshot().ok()?;
            let fits = entries
                .iter()
                .all(|(k, v)| key_in_form::<K>(k.as_view()) && V::converts(v.as_view()));
            return fits.then_some(dict);
        }
        let map = <&ObjectRef<MapObj>>::from_any(view)?;
        let map = Map::<Any, Any>::wrap(map.clone());
        rebuilt::<K, V, DictObj>(&DICT_NEW, map.iter_views()).map(Dict::from_object_ref)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_mapping::<K, V>("Dict", view)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<DictObj>>::match_type_index(index)
    }
}
