//! A C++ program compiled here against the wheel's headers sets and reads streams around the
//! Rust functions of `examples/kernels` (`tests/cpp/env.cc`): a stream set in C++ is seen by
//! Rust, a stream set by Rust for a scope is seen by a C callback and restored, and Rust's
//! signal checks pass without Python.
use std::path::Path;

#[test]
fn streams_cross_between_cpp_and_rust() {
    let lib = tvm_ffi_tests::workspace_cdylib("tvm_ffi_example_kernels", "examples/kernels");
    let exe = tvm_ffi_tests::compile_cpp("env", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (stdout, stderr) = tvm_ffi_tests::run_program(&exe, &[&lib]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "default=0\ncpp_set_rust_reads=4660\nother_device=0\nrust_set_cpp_reads=22136\n\
         restored=4660\nspin_iterations_positive=1\n"
    );
}
