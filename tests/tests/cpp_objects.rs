//! A C++ program compiled here against the wheel's headers uses the Rust types of
//! `examples/point`: constructs them through `__ffi_init__`, reads fields through reflection and
//! through a mirroring C++ struct, calls reflected methods, and writes fields through setters.
use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>`, where cargo put the example cdylib (`scripts/test.sh` builds the whole
/// workspace before running the tests).
fn artifact_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn cpp_program_uses_rust_objects() {
    let lib = artifact_dir().join("libtvm_ffi_example_point.so");
    assert!(
        lib.exists(),
        "{} is missing: build the workspace first (`bash scripts/test.sh` does)",
        lib.display()
    );
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpp_objects");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/cpp/objects.cc");
    let libdir = tvm_ffi::build_info::LIBDIR;
    let status = Command::new("c++")
        .args([
            "-std=c++17",
            "-O1",
            "-I",
            tvm_ffi::build_info::INCLUDEDIR,
            source,
            "-o",
        ])
        .arg(&out)
        .args([
            format!("-L{libdir}"),
            "-ltvm_ffi".into(),
            format!("-Wl,-rpath,{libdir}"),
            "-ldl".into(),
        ])
        .status()
        .expect("a C++ compiler (c++) is needed for the cross-language tests");
    assert!(status.success(), "compiling {source} failed");
    let run = Command::new(&out)
        .arg(format!("{libdir}/libtvm_ffi_testing.so"))
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
