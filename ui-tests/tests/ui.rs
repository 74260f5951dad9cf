//! Compile-fail and check-pass cases of the tvm-ffi macros; see ui-tests/README.md.
#[test]
fn ui() {
    // trybuild builds the pass cases as its own project, outside this workspace's rpath
    // settings; point its test binaries at the runtime found by tvm-ffi's build script.
    std::env::set_var("LD_LIBRARY_PATH", tvm_ffi::build_info::LIBDIR);
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
