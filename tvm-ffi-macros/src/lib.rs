//! Procedural macros of `tvm-ffi`; use them through the `tvm_ffi` re-exports.
//!
//! Each macro is built in three stages: parse the attribute and item into a validated model
//! (collecting every error instead of stopping at the first), then generate code that refers to
//! the runtime only through absolute `::tvm_ffi::` paths, with helper items hidden inside
//! `const _: () = { ... };`. On error the user's item is re-emitted unchanged next to the
//! errors, so one mistake does not cascade.
use proc_macro::TokenStream;

mod diagnostics;
mod docs;
mod func;

/// Registers a Rust function as a TVM-FFI global function when the library loads.
///
/// ```ignore
/// /// Adds two integers.
/// #[tvm_ffi::ffi_func(name = "my_ext.add")]
/// pub fn add(a: i64, b: i64) -> i64 { a + b }
/// ```
///
/// Arguments are converted with the runtime's rules (borrowed forms such as `&str`, `&[u8]`,
/// `AnyView` and `&ObjectRef<T>` avoid copies and reference counting); the result may be any
/// convertible value, `()` or a `Result` whose error converts into `tvm_ffi::Error`. The
/// `///` doc and the `type_schema` metadata are registered with the function.
#[proc_macro_attribute]
pub fn ffi_func(attr: TokenStream, item: TokenStream) -> TokenStream {
    func::expand(attr.into(), item.into()).into()
}
