//! A C++ program compiled here against the wheel's headers uses the Rust types of
//! `examples/point`: constructs them through `__ffi_init__`, reads fields through reflection and
//! through a mirroring C++ struct, calls reflected methods, and writes fields through setters.
use std::path::Path;
use std::process::Command;

#[test]
fn cpp_program_uses_rust_objects() {
    let lib = tvm_ffi_tests::example_cdylib();
    let exe = tvm_ffi_tests::compile_cpp("objects", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let run = Command::new(&exe)
        .arg(tvm_ffi_tests::cpp_testing_library_path())
        .arg(&lib)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    let expected = [
        "type_key=my_ext.Point",
        "reflect.x=3",
        "reflect.y=4",
        "reflect.label=pt",
        "mirror.x=3",
        "mirror.y=4",
        "mirror.label=pt",
        "norm2=25",
        "lift.type_key=my_ext.Point3",
        "lift.mirror=3,4,5",
        "lift.reflect.z=5",
        "origin.label=origin",
        "after_set.x=10",
        "after_set.norm2=116",
        "ro_set=AttributeError",
        "after_ro_set.y=4",
        "interval.length=2.5",
        "interval.error=ValueError: empty interval: lo=2 > hi=1",
        "child.v_i64=5",
        "child.total=11",
        "child.note=from c++",
    ];
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines, expected, "stderr:\n{stderr}");
    // Loading the library registered everything without errors.
    assert!(!stderr.contains("tvm-ffi:"), "{stderr}");
}
