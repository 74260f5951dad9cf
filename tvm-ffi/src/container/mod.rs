//! Containers of the runtime, typed on the Rust side: [`Array<T>`] (`ffi.Array`) and
//! [`Map<K, V>`] (`ffi.Map`).
mod array;
mod map;

pub use array::Array;
pub use map::Map;

use crate::error::Result;

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
