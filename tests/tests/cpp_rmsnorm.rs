//! A C++ program compiled here against the wheel's headers uses `examples/rmsnorm` through the
//! C ABI only (`examples/rmsnorm/cpp/main.cc`): the exported functions on CPU tensors (values
//! checked against a float32 reference in C++), an error with the argument named, and the
//! stateful `rmsnorm.Runner` with its caller-allocated workspace through reflection.
use std::path::Path;

#[test]
fn cpp_calls_the_rust_rmsnorm_and_drives_its_runner() {
    let lib = tvm_ffi_tests::workspace_cdylib("tvm_ffi_example_rmsnorm", "examples/rmsnorm");
    let exe = tvm_ffi_tests::compile_cpp_example(
        "examples/rmsnorm/cpp/main.cc",
        "rmsnorm",
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    );
    let (stdout, stderr) = tvm_ffi_tests::run_program(&exe, &[&lib]);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "rmsnorm.max_error_ok=1\n\
         error.kind=ValueError\n\
         error.message=`weight` must have size 7 in dimension 0, got 8 (shape [8])\n\
         fused.residual_ok=1\n\
         fused.max_error_ok=1\n\
         runner.workspace_size=12\n\
         runner.max_error_ok=1\n\
         runner.inv_rms0=0.22361\n\
         runner.workspace_holds_it=1\n"
    );
}
