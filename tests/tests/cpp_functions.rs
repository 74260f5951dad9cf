//! A C++ program compiled here against the wheel's headers calls the Rust functions of
//! `examples/point` through the plain C ABI: globals through `TVMFFIFunctionGetGlobal` +
//! `TVMFFIFunctionCall`, module exports through `dlsym("__tvm_ffi_<name>")` and through the
//! runtime's library module, and reads error kinds through `TVMFFIErrorMoveFromRaised`.
//!
//! The example library is the workspace build's artifact (see
//! [`tvm_ffi_tests::example_cdylib`] for why the test does not build it).
use std::path::Path;
use std::process::Command;

/// Runs the C++ caller and returns its `name=value` lines.
fn run_cpp_caller() -> Vec<(String, String)> {
    let lib = tvm_ffi_tests::example_cdylib();
    let exe = tvm_ffi_tests::compile_cpp("functions", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let run = Command::new(&exe)
        .arg(&lib)
        .arg(tvm_ffi_tests::cpp_testing_library_path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    // Loading the library registered everything without errors.
    assert!(!stderr.contains("tvm-ffi:"), "{stderr}");
    stdout
        .lines()
        .map(|line| {
            let (name, value) = line.split_once('=').expect("name=value");
            (name.to_string(), value.to_string())
        })
        .collect()
}

#[test]
fn cpp_calls_rust_globals_and_exports() {
    let lines = run_cpp_caller();
    let get = |name: &str| -> &str {
        lines
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("the C++ caller printed no `{name}`: {lines:?}"))
    };
    // Globals: results and C++-style argument errors.
    assert_eq!(get("add"), "42");
    assert_eq!(
        get("add.wrong_type"),
        "TypeError: Mismatched type on argument #1 (`b`) when calling: `my_ext.add(a: int, b: int) -> int`. Expected `int` but got `float`"
    );
    assert_eq!(
        get("add.wrong_arity"),
        "TypeError: Mismatched number of arguments when calling: `my_ext.add(a: int, b: int) -> int`. Expected 2 but got 1 arguments"
    );
    // Names and defaults from C: an omitted argument takes its default, keywords bind in the
    // runtime's KWARGS convention, errors name the keyword, the metadata has the names.
    let shift = "`my_ext.shift(x: int, by: int = 1) -> int`";
    assert_eq!(get("shift.default"), "2");
    assert_eq!(get("shift.keyword"), "6");
    assert_eq!(get("shift.keywords_only"), "7");
    assert_eq!(
        get("shift.unknown_keyword"),
        format!("TypeError: Unexpected keyword argument `step` when calling: {shift}")
    );
    assert_eq!(
        get("shift.repeated_keyword"),
        format!("TypeError: Multiple values for argument `x` when calling: {shift}")
    );
    assert_eq!(
        get("shift.missing"),
        format!("TypeError: Missing argument `x` when calling: {shift}")
    );
    assert!(
        get("shift.metadata").ends_with(r#","arg_names":["x","by"],"arg_defaults":{"by":1}}"#),
        "{}",
        get("shift.metadata")
    );
    // A borrowed C string converts to `&str`; a Rust `Err` keeps its kind.
    assert_eq!(get("parse"), "12");
    assert_eq!(
        get("parse.error"),
        "ValueError: invalid digit found in string"
    );
    // A panic is a RuntimeError naming the function and the panic site; the next call works.
    let panic = get("checked_div.panic");
    assert!(
        panic.starts_with("RuntimeError: Rust panic in `my_ext.checked_div` at ")
            && panic.contains("examples/point/src/lib.rs:")
            && panic.ends_with(": division by zero in checked_div"),
        "{panic}"
    );
    assert_eq!(get("checked_div.after_panic"), "3");
    // A packed function receives every argument.
    assert_eq!(get("count_args"), "4");

    // Exports through dlsym: same conversions, errors naming the export (as C++ does).
    assert_eq!(get("export.add_one"), "42");
    assert_eq!(
        get("export.add_one.wrong_type"),
        "TypeError: Mismatched type on argument #0 (`x`) when calling: `add_one(x: int) -> int`. Expected `int` but got `float`"
    );
    assert_eq!(
        get("export.add_one.wrong_arity"),
        "TypeError: Mismatched number of arguments when calling: `add_one(x: int) -> int`. Expected 1 but got 0 arguments"
    );
    let panic = get("export.checked_div.panic");
    assert!(
        panic.starts_with("RuntimeError: Rust panic in `checked_div` at ")
            && panic.ends_with(": division by zero in checked_div"),
        "{panic}"
    );
    assert_eq!(get("export.checked_div.after_panic"), "3");
    assert_eq!(
        get("export.add_one.metadata"),
        r#"{"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],\"params\":[{\"type\":\"int\"}]}}","arg_names":["x"]}"#
    );
    assert_eq!(
        get("export.add_one.doc"),
        r"Adds one: a module export, `tvm_ffi.load_module(lib).add_one(1) == 2` (the symbol\n`__tvm_ffi_add_one`), not a global function."
    );

    // Exports as function objects of the runtime's library module.
    assert_eq!(get("module.add_one"), "2");
    assert_eq!(
        get("module.add_one.wrong_type"),
        "TypeError: Mismatched type on argument #0 (`x`) when calling: `add_one(x: int) -> int`. Expected `int` but got `float`"
    );
    assert_eq!(lines.len(), 24, "{lines:?}");
}
