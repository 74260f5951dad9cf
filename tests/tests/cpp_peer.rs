//! C++ hands Rust a module and objects of C++ types (`tests/cpp/peer.cc`, `tests/peer`).
use std::path::Path;

#[test]
fn cpp_passes_modules_and_its_objects_to_rust() {
    let exe = tvm_ffi_tests::compile_cpp("peer", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let testing = std::path::PathBuf::from(tvm_ffi_tests::cpp_testing_library_path());
    let peer = tvm_ffi_tests::peer_cdylib();
    let module = tvm_ffi_tests::example_cdylib();
    let (stdout, stderr) = tvm_ffi_tests::run_program(&exe, &[&testing, &peer, &module]);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "module_call=42",
            "module_call.missing=AttributeError: Module has no function 'missing'",
            "get_int_field=7",
            "get_field=hello",
            "after_set=35",
            "call_method=42",
            "get_field.missing=AttributeError: Cannot find field `nope` in testing.TestObjectBase",
        ],
        "{stderr}"
    );
    assert!(stderr.is_empty(), "{stderr}");
}
