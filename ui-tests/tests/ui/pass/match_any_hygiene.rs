//! `match_any!` under `#![no_implicit_prelude]` and `#![forbid(unsafe_code)]`, next to user
//! items named like its helpers and types named `Option`, with the table (4+ arms) and without.
#![no_implicit_prelude]
#![forbid(unsafe_code)]

#[allow(dead_code)]
struct Option;
#[allow(dead_code)]
static __TVM_FFI_MATCH_TABLE: i64 = 0;

fn classify(value: &::tvm_ffi::Any) -> i64 {
    let __tvm_ffi_match_view = 100i64;
    let __tvm_ffi_match_mask = 1000i64;
    ::tvm_ffi::match_any! { value {
        bool(_) => 0,
        i64(n) if n > 0 => n + __tvm_ffi_match_view,
        f64(_) => __tvm_ffi_match_mask,
        ::tvm_ffi::Array<i64>(a) => a.len() as i64,
        _ => -1,
    }}
}

fn small(value: ::tvm_ffi::AnyView<'_>) -> bool {
    ::tvm_ffi::match_any! { value { ::tvm_ffi::String(_) => true, _ => false } }
}

fn main() {
    ::std::assert_eq!(classify(&::tvm_ffi::Any::new(1i64)), 101);
    ::std::assert_eq!(classify(&::tvm_ffi::Any::new(1.5f64)), 1000);
    ::std::assert_eq!(classify(&::tvm_ffi::Any::new(true)), 0);
    ::std::assert_eq!(classify(&::tvm_ffi::Any::none()), -1);
    let text = ::tvm_ffi::Any::new("text");
    ::std::assert!(small(text.view()));
}
