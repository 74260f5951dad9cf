//! JSON graph serialization (`ffi.ToJSONGraphString` / `ffi.FromJSONGraphString`): what
//! `pickle` and `tvm_ffi.serialization` use, for any value of a type with a creator (every
//! `#[derive(Object)]` type) or a `__data_to_json__` hook.
//!
//! ```
//! use tvm_ffi::{serialization, Array, Any};
//! let a = Array::new([1i64, 2]).unwrap();
//! let json = serialization::to_json_graph(&a).unwrap();
//! let back: Array<i64> = serialization::from_json_graph(&json).unwrap().cast().unwrap();
//! assert_eq!(back.iter().collect::<Vec<_>>(), vec![1, 2]);
//! ```
use crate::base::error::Result;
use crate::base::value::Any;
use crate::call::function::{GlobalCache, IntoArg};

static TO_JSON: GlobalCache = GlobalCache::new("ffi.ToJSONGraphString");
static FROM_JSON: GlobalCache = GlobalCache::new("ffi.FromJSONGraphString");

/// `value` as a JSON graph string.
pub fn to_json_graph<A: IntoArg>(value: A) -> Result<std::string::String> {
    TO_JSON.get()?.call_as((value, ()))
}

/// The value a JSON graph string describes (objects made through their creators and
/// setters).
pub fn from_json_graph(json: &str) -> Result<Any> {
    FROM_JSON.get()?.call((json,))
}
