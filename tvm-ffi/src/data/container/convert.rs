//! Converting values into the containers (`FromAny`): a value of the container's own type
//! whose elements convert, or a value of its immutable or mutable twin, copied into a new
//! container as C++ converts one (`List` into `Array`, `Dict` into `Map`, and back). The
//! conversions between twins live here, above both, so that neither container file uses the
//! other.
use super::array::{Array, ARRAY_NEW};
use super::dict::{Dict, DICT_NEW};
use super::list::{List, LIST_NEW};
use super::map::{Map, MAP_NEW};
use crate::base::object::builtin::{ArrayObj, DictObj, ListObj, MapObj};
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny};

/// Whether every value converts to `T`.
fn all_convert<'a, T: for<'b> FromAny<'b>>(
    mut values: impl Iterator<Item = &'a AnyView<'a>>,
) -> bool {
    T::ACCEPTS_ANY || values.all(|v| T::from_any(v).is_some())
}

/// Whether every entry of `entries` converts to `(K, V)`.
fn entries_convert<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>>(
    mut entries: impl Iterator<Item = (AnyView<'a>, AnyView<'a>)>,
) -> bool {
    (K::ACCEPTS_ANY && V::ACCEPTS_ANY)
        || entries.all(|(k, v)| K::from_any(&k).is_some() && V::from_any(&v).is_some())
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

/// C++'s description of the first entry of `entries` that does not convert to `(K, V)`
/// (`Map[some key is ..., V]`), naming the container `name`.
fn describe_entries<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>>(
    name: &str,
    entries: impl Iterator<Item = (AnyView<'a>, AnyView<'a>)>,
) -> Option<String> {
    for (k, v) in entries {
        if K::from_any(&k).is_none() {
            return Some(format!(
                "`{name}[some key is {}, V]`",
                K::describe_mismatch(&k).trim_matches('`')
            ));
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
        let map = Map::<Any, Any>::from_object_ref(obj.clone());
        if let Some(text) = describe_entries::<K, V>(name, map.iter_views()) {
            return text;
        }
    }
    if let Some(obj) = <&ObjectRef<DictObj>>::from_any(view) {
        let dict = Dict::<Any, Any>::from_object_ref(obj.clone());
        let entries = dict.snapshot().unwrap_or_default();
        let views = entries.iter().map(|(k, v)| (k.view(), v.view()));
        if let Some(text) = describe_entries::<K, V>(name, views) {
            return text;
        }
    }
    format!("`{}`", view.type_key())
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
    /// A `Map` whose entries convert to `(K, V)`; a `Dict` is copied into a new `Map` (as C++
    /// converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<MapObj>>::from_any(view) {
            let map = Map::<K, V>::from_object_ref(obj.clone());
            return entries_convert::<K, V>(map.iter_views()).then_some(map);
        }
        let dict = <&ObjectRef<DictObj>>::from_any(view)?;
        let dict = Dict::<Any, Any>::from_object_ref(dict.clone());
        let flat =
            super::try_collect(dict.snapshot().ok()?.into_iter(), |(k, v)| Ok([k, v])).ok()?;
        if !entries_convert::<K, V>(flat.iter().map(|[k, v]| (k.view(), v.view()))) {
            return None;
        }
        let out = MAP_NEW.get().ok()?.call(flat.as_flattened()).ok()?;
        Some(Map::from_object_ref(out.cast::<ObjectRef<MapObj>>().ok()?))
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_mapping::<K, V>("Map", view)
    }
    /// Only a `Map` whose keys and values are exactly `K`s and `V`s (no copy of a `Dict`, no
    /// coercion), as C++ `ObjectRef::as<Map<K, V>>` checks.
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&ObjectRef<MapObj>>::from_any(view)?;
        let map = Map::<K, V>::from_object_ref(obj.clone());
        let exact = (K::ACCEPTS_ANY && V::ACCEPTS_ANY)
            || map
                .iter_views()
                .all(|(k, v)| K::from_any_exact(&k).is_some() && V::from_any_exact(&v).is_some());
        exact.then_some(map)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<MapObj>>::match_type_index(index)
    }
}

impl<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> FromAny<'a> for Dict<K, V> {
    /// A `Dict` whose entries convert to `(K, V)` (the same object: writes are shared); a
    /// `Map` is copied into a new `Dict` (as C++ converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<DictObj>>::from_any(view) {
            let dict = Dict::<K, V>::from_object_ref(obj.clone());
            if K::ACCEPTS_ANY && V::ACCEPTS_ANY {
                return Some(dict);
            }
            let entries = dict.snapshot().ok()?;
            let views = entries.iter().map(|(k, v)| (k.view(), v.view()));
            return entries_convert::<K, V>(views).then_some(dict);
        }
        let map = <&ObjectRef<MapObj>>::from_any(view)?;
        let map = Map::<Any, Any>::from_object_ref(map.clone());
        if !entries_convert::<K, V>(map.iter_views()) {
            return None;
        }
        let flat = super::try_collect(map.iter_views(), |(k, v)| {
            Ok([k.to_owned()?, v.to_owned()?])
        })
        .ok()?;
        let out = DICT_NEW.get().ok()?.call(flat.as_flattened()).ok()?;
        out.cast::<ObjectRef<DictObj>>()
            .ok()
            .map(Dict::from_object_ref)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        describe_mapping::<K, V>("Dict", view)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<DictObj>>::match_type_index(index)
    }
}
