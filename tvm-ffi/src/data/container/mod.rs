//! Containers of the runtime, typed on the Rust side: the immutable [`Array<T>`] (`ffi.Array`),
//! [`Map<K, V>`] (`ffi.Map`) and [`Shape`] (`ffi.Shape`), and the mutable, shared [`List<T>`]
//! (`ffi.List`) and [`Dict<K, V>`] (`ffi.Dict`).
//!
//! Reads go to the runtime's storage in place, as C++ reads it (no call per length, lookup or
//! element): the immutable containers lend views of their elements; the mutable ones copy each
//! element they read, since any language may write them at any time. `Map` and `Dict` lookups
//! hash and compare keys exactly as the runtime does (`hash`). An `Array` (like a `Shape`) is
//! built in Rust memory, laid out as C++ lays one out (each value converted straight into its
//! slot); construction of `Map`, `List` and `Dict` and their writes go through the runtime's
//! own functions (`ffi.Map`, `ffi.ListAppend`, `ffi.DictSetItem`, ...).
//!
//! The runtime has no tuple type: C++ `Tuple<A, B>` is an `ffi.Array` of two elements at run
//! time, which Rust reads as `Array<Any>` (or `Array<T>` when the elements share a type).
mod array;
mod array_build;
mod convert;
mod dict;
mod hash;
mod list;
mod locked;
mod map;
mod shape;
pub(crate) mod table;
mod traits;
mod value_equality;

pub use array::{Array, ArrayIter};
pub use dict::{Dict, DictIter};
pub(crate) use hash::key_hook_for_runtime;
pub use list::{List, ListIter};
pub use map::{Map, MapIter, MapViews};
pub use shape::Shape;

use crate::base::error::panic::panic_with;
use crate::base::error::Result;

/// Collects `items` through `convert` into a vector whose allocations are fallible: a request
/// the allocator refuses is a `MemoryError`, never an abort of the host.
fn try_collect<I: Iterator, U>(
    items: I,
    mut convert: impl FnMut(I::Item) -> Result<U>,
) -> Result<Vec<U>> {
    let mut out = Vec::new();
    out.try_reserve_exact(items.size_hint().0)?;
    for item in items {
        if out.len() == out.capacity() {
            out.try_reserve(1)?;
        }
        out.push(convert(item)?);
    }
    Ok(out)
}

/// The container a runtime constructor built, behind an infallible API (`FromIterator`,
/// `From<Vec<T>>`, `Default`). With infallible element conversions, those constructors fail
/// only when memory runs out: that panics with a `MemoryError` the FFI boundary raises in the
/// caller (as `ObjectRef::new` does when it cannot allocate). Any other error keeps its kind.
fn built<T>(result: Result<T>) -> T {
    result.unwrap_or_else(|err| panic_with(err))
}
