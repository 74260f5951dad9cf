//! `match_any!` on something that is no TVM-FFI value, and with an arm type that is not one.
use tvm_ffi::{match_any, Any};

fn scrutinee_not_a_value(values: Vec<i64>) -> usize {
    match_any! { values {
        i64(_) => 1,
        _ => 0,
    }}
}

fn arm_not_a_value(value: &Any) -> usize {
    match_any! { value {
        std::time::Duration(_) => 1,
        _ => 0,
    }}
}

fn main() {
    let _ = (scrutinee_not_a_value, arm_not_a_value);
}
