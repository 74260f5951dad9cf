// The runtime rewrites a shared error's backtrace in place (Python's re-raise), without
// synchronisation: the error cell is not readable from safe code; `Error::backtrace` returns
// the copy taken when Rust made or received the error.
fn main() {
    let err = tvm_ffi::Error::new("ValueError", "x");
    let _ = err.as_object_ref().cell;
}
