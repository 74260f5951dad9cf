//! [`Map<K, V>`]: the runtime's immutable `ffi.Map` (Python `dict` on the way in).
use std::marker::PhantomData;

use crate::error::Result;
use crate::function::{impl_into_arg_borrowed, object_view, Function, GlobalCache, IntoArg};
use crate::object::builtin::MapObj;
use crate::object::ObjectRef;
use crate::value::{Any, AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};

static MAP_NEW: GlobalCache = GlobalCache::new("ffi.Map");
static MAP_SIZE: GlobalCache = GlobalCache::new("ffi.MapSize");
static MAP_GET: GlobalCache = GlobalCache::new("ffi.MapGetItemOrMissing");
static MAP_COUNT: GlobalCache = GlobalCache::new("ffi.MapCount");
static MAP_ITER: GlobalCache = GlobalCache::new("ffi.MapForwardIterFunctor");
static MISSING_FN: GlobalCache = GlobalCache::new("ffi.GetInvalidObject");

/// The runtime's MISSING sentinel (a singleton object), fetched once rather than per lookup.
fn missing_sentinel() -> Option<&'static Any> {
    static MISSING: std::sync::OnceLock<Any> = std::sync::OnceLock::new();
    if let Some(m) = MISSING.get() {
        return Some(m);
    }
    let m = MISSING_FN.get().ok()?.call(()).ok()?;
    Some(MISSING.get_or_init(|| m))
}

/// An immutable, reference-counted hash map in insertion order. Its memory layout is private
/// to the runtime, so every access goes through the runtime's `ffi.Map*` functions.
#[repr(transparent)]
pub struct Map<K, V> {
    obj: ObjectRef<MapObj>,
    _types: PhantomData<fn() -> (K, V)>,
}

impl<K, V> Clone for Map<K, V> {
    fn clone(&self) -> Self {
        Map {
            obj: self.obj.clone(),
            _types: PhantomData,
        }
    }
}

impl<K, V> Map<K, V> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        MAP_SIZE
            .get()
            .and_then(|f| f.call_as::<i64, _>((&self.obj,)))
            .map(|n| n as usize)
            .unwrap_or(0)
    }
    /// Whether the map is empty.
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
    /// Wraps a map object without checking entry types.
    pub fn from_object_ref(obj: ObjectRef<MapObj>) -> Self {
        Map {
            obj,
            _types: PhantomData,
        }
    }

    /// All entries as owned values, in insertion order.
    pub fn entries_any(&self) -> Result<Vec<(Any, Any)>> {
        let n = self.len();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return Ok(out);
        }
        let it: Function = MAP_ITER.get()?.call_as((&self.obj,))?;
        loop {
            out.push((it.call((0i64,))?, it.call((1i64,))?));
            if !it.call_as::<bool, _>((2i64,))? {
                break;
            }
        }
        Ok(out)
    }
}

impl<K: TryIntoAny, V: TryIntoAny> Map<K, V> {
    /// Builds a map from key/value pairs (a later duplicate key wins).
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
        let out = MAP_NEW.get()?.call(args)?;
        Ok(Map::from_object_ref(out.cast::<ObjectRef<MapObj>>()?))
    }
}

impl<K, V: for<'a> FromAny<'a>> Map<K, V> {
    /// The value for `key`, if present.
    pub fn get<Q: IntoArg>(&self, key: Q) -> Option<V> {
        let out = MAP_GET.get().ok()?.call((&self.obj, key)).ok()?;
        let missing = missing_sentinel()?;
        if out.as_raw().type_index == missing.as_raw().type_index
            // SAFETY: both hold an object pointer when their indices are object indices.
            && unsafe { out.as_raw().value.v_obj == missing.as_raw().value.v_obj }
        {
            return None;
        }
        out.try_cast::<V>()
    }

    /// Whether `key` is present.
    pub fn contains_key<Q: IntoArg>(&self, key: Q) -> bool {
        MAP_COUNT
            .get()
            .and_then(|f| f.call_as::<i64, _>((&self.obj, key)))
            .map(|n| n > 0)
            .unwrap_or(false)
    }
}

impl<K: for<'a> FromAny<'a>, V: for<'a> FromAny<'a>> Map<K, V> {
    /// All entries, converted, in insertion order.
    pub fn entries(&self) -> Vec<(K, V)> {
        self.entries_any()
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| {
                (
                    k.try_cast::<K>().expect("key type checked on entry"),
                    v.try_cast::<V>().expect("value type checked on entry"),
                )
            })
            .collect()
    }
}

impl<K: TypeSchema, V: TypeSchema> TypeSchema for Map<K, V> {
    fn type_str() -> String {
        format!("Map<{}, {}>", K::type_str(), V::type_str())
    }
    fn type_schema() -> String {
        format!(
            r#"{{"type":"ffi.Map","args":[{},{}]}}"#,
            K::type_schema(),
            V::type_schema()
        )
    }
}

impl<K, V> IntoAny for Map<K, V> {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl<K, V> IntoAny for &Map<K, V> {
    fn into_any(self) -> Any {
        self.obj.clone().into_any()
    }
}

impl<'a, K: for<'b> FromAny<'b>, V: for<'b> FromAny<'b>> FromAny<'a> for Map<K, V> {
    fn try_cast(view: &'a AnyView<'a>) -> Option<Self> {
        let obj = <&ObjectRef<MapObj>>::try_cast(view)?;
        let map = Map::<K, V>::from_object_ref(obj.clone());
        if K::ACCEPTS_ANY && V::ACCEPTS_ANY {
            return Some(map);
        }
        let entries = map.entries_any().ok()?;
        entries
            .iter()
            .all(|(k, v)| K::try_cast(k.as_view()).is_some() && V::try_cast(v.as_view()).is_some())
            .then_some(map)
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        if let Some(obj) = <&ObjectRef<MapObj>>::try_cast(view) {
            let map = Map::<Any, Any>::from_object_ref(obj.clone());
            for (k, v) in map.entries_any().unwrap_or_default() {
                if K::try_cast(k.as_view()).is_none() {
                    return format!(
                        "`Map[some key is {}, V]`",
                        K::describe_mismatch(k.as_view()).trim_matches('`')
                    );
                }
                if V::try_cast(v.as_view()).is_none() {
                    return format!(
                        "`Map[K, some value is {}]`",
                        V::describe_mismatch(v.as_view()).trim_matches('`')
                    );
                }
            }
        }
        format!("`{}`", view.type_key())
    }
}

impl_into_arg_borrowed! {
    [K, V] Map<K, V> => |h| object_view(h.as_object_ref());
}
