//! Containers of the runtime, typed on the Rust side: [`Array<T>`] (`ffi.Array`) and
//! [`Map<K, V>`] (`ffi.Map`).
mod array;
mod map;

pub use array::Array;
pub use map::Map;
