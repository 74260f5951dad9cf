//! `match_any!` written wrong: no fallback, a guard on the fallback, an arm after the
//! fallback, `break` in a guard, an arm without its binding.
use tvm_ffi::{match_any, Any};

fn no_fallback(value: &Any) -> i64 {
    match_any! { value {
        i64(n) => n,
    }}
}

fn guarded_fallback(value: &Any) -> i64 {
    match_any! { value {
        i64(n) => n,
        _ if true => 0,
    }}
}

fn arm_after_fallback(value: &Any) -> i64 {
    match_any! { value {
        _ => 0,
        i64(n) => n,
    }}
}

fn break_in_guard(values: &[Any]) -> i64 {
    let mut total = 0;
    for value in values {
        total += match_any! { value {
            i64(n) if { if n < 0 { break } else { true } } => n,
            _ => 0,
        }};
    }
    total
}

fn no_binding(value: &Any) -> i64 {
    match_any! { value {
        i64 => 1,
        _ => 0,
    }}
}

fn main() {
    let _ = (no_fallback, guarded_fallback, arm_after_fallback, break_in_guard, no_binding);
}
