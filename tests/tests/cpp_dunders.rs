//! A C++ program compiled here against the wheel's headers compares, orders, hashes and prints
//! `my_ext.Version` (examples/point, `#[ffi_type(frozen, eq, hash, ord, str)]`) through the
//! runtime functions C++ calls, and cannot write its fields.
use std::path::Path;
use std::process::Command;

#[test]
fn cpp_program_sees_the_rust_traits_of_a_frozen_value_type() {
    let lib = tvm_ffi_tests::example_cdylib();
    let exe = tvm_ffi_tests::compile_cpp("dunders", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let run = Command::new(&exe)
        .arg(tvm_ffi_tests::cpp_testing_library_path())
        .arg(&lib)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let expected = [
        "same_object=0",
        "eq(a,b)=1",
        "eq(a,c)=0",
        "lt(a,c)=1",
        "le(a,b)=1",
        "gt(a,c)=0",
        "ge(c,a)=1",
        "hash(a)==hash(b)=1",
        "repr(c)=1.10.0",
        "repr([c,a])=(1.10.0, 1.2.0)",
        "newest=1.10.0",
        "set=AttributeError",
        "after_set=1.2.0",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected, "stderr:\n{stderr}");
    assert!(!stderr.contains("tvm-ffi:"), "{stderr}");
}
