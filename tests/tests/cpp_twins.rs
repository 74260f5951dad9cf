//! The Rust twins of the wheel's C++ testing types, seen from C++: `tests/cpp/twins.cc` runs
//! the same C++ calls on every `testing.<T>` and its twin `testing.rs.<T>` and compares.
use std::path::Path;

#[test]
fn cpp_sees_the_rust_twins_as_the_cxx_originals() {
    let twins = tvm_ffi_tests::twins_cdylib();
    let exe = tvm_ffi_tests::compile_cpp("twins", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let testing = std::path::PathBuf::from(tvm_ffi_tests::cpp_testing_library_path());
    let (stdout, stderr) = tvm_ffi_tests::run_program(&exe, &[&testing, &twins]);
    let diffs: Vec<&str> = stdout.lines().filter(|l| l.starts_with("DIFF ")).collect();
    assert!(diffs.is_empty(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("probes=34 diffs=0"), "{stdout}");
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("same ")).count(),
        34
    );
    assert!(stderr.is_empty(), "{stderr}");
}
