//! Shared helpers of the cross-language test suite.
use std::ffi::CString;
use std::sync::Once;

extern "C" {
    fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    fn dlerror() -> *const std::ffi::c_char;
}

/// A global function by name, through the safe lookup (the wheel's `testing.*` functions are
/// loaded first). Panics when it is missing or refused.
pub fn global(name: &str) -> tvm_ffi::Function {
    load_cpp_testing_library();
    tvm_ffi::Function::get_global_required(name).unwrap_or_else(|err| panic!("{err}"))
}

/// A builtin of the runtime that the safe lookup refuses (a `List`/`Dict` writer, ...), for the
/// tests that compare the SDK with the runtime's own functions.
///
/// # Safety
/// Every call of the returned function keeps the builtin's contract: for the container
/// writers, no other thread uses the container meanwhile.
pub unsafe fn runtime_builtin(name: &str) -> tvm_ffi::Function {
    // SAFETY: the caller's contract.
    unsafe { tvm_ffi::Function::get_global_unchecked(name) }
        .unwrap_or_else(|| panic!("builtin `{name}` missing"))
}

/// Path of the wheel's C++ test peer, `libtvm_ffi_testing.so` (it defines the C++ parent of
/// the example's `my_ext.CxxChild`, so C++ programs load it before the example).
pub fn cpp_testing_library_path() -> String {
    format!("{}/libtvm_ffi_testing.so", tvm_ffi::build_info::LIBDIR)
}

/// Loads the wheel's C++ test peer (`libtvm_ffi_testing.so`, which registers `testing.*`), as
/// `import tvm_ffi` does in Python.
pub fn load_cpp_testing_library() {
    static LOAD: Once = Once::new();
    LOAD.call_once(|| {
        let path = cpp_testing_library_path();
        let c = CString::new(path.clone()).unwrap();
        // SAFETY: dlopen with a valid path; RTLD_NOW | RTLD_GLOBAL.
        let handle = unsafe { dlopen(c.as_ptr(), 0x2 | 0x100) };
        if handle.is_null() {
            // SAFETY: dlerror returns a valid C string after a failure.
            let msg = unsafe { std::ffi::CStr::from_ptr(dlerror()) };
            panic!("cannot load {path}: {msg:?}");
        }
    });
}

/// The `examples/point` cdylib built by cargo, for the C/C++ peers that load it.
///
/// # Panics
/// As [`workspace_cdylib`].
pub fn example_cdylib() -> std::path::PathBuf {
    workspace_cdylib("tvm_ffi_example_point", "examples/point")
}

/// The `tests/testing-twins` cdylib: Rust twins of the wheel's C++ testing types.
///
/// # Panics
/// As [`workspace_cdylib`].
pub fn twins_cdylib() -> std::path::PathBuf {
    workspace_cdylib("tvm_ffi_testing_twins", "tests/testing-twins")
}

/// The `tests/peer` cdylib: Rust functions using modules and foreign objects by name.
///
/// # Panics
/// As [`workspace_cdylib`].
pub fn peer_cdylib() -> std::path::PathBuf {
    workspace_cdylib("tvm_ffi_test_peer", "tests/peer")
}

/// The `examples/ir` cdylib: the expression IR example.
///
/// # Panics
/// As [`workspace_cdylib`].
pub fn ir_cdylib() -> std::path::PathBuf {
    workspace_cdylib("tvm_ffi_example_ir", "examples/ir")
}

/// The `tests/containers` cdylib: functions and a type over Shape, List, Dict, Map and BigInt.
///
/// # Panics
/// As [`workspace_cdylib`].
pub fn containers_cdylib() -> std::path::PathBuf {
    workspace_cdylib("tvm_ffi_test_containers", "tests/containers")
}

/// The cdylib `lib<name>.so` of the workspace crate in `crate_dir`, built by cargo.
///
/// A test cannot build it itself (`cargo build` inside `cargo test` would wait on the build
/// directory lock that the running `cargo test` holds), and a cdylib cannot be a dependency of a
/// test binary on stable cargo. So it is the workspace build's artifact, next to the test
/// binary's directory: `target/<profile>/lib<name>.so` (`scripts/test.sh` builds the workspace
/// before `cargo test`). `TVM_FFI_TARGET_DIR` overrides the directory, as for pytest.
///
/// # Panics
/// When the library is missing, or older than the sources it is built from (a stale library
/// would test old code); the message says what to run.
pub fn workspace_cdylib(name: &str, crate_dir: &str) -> std::path::PathBuf {
    let package = crate_dir.rsplit('/').next().unwrap_or(crate_dir);
    let dir = match std::env::var_os("TVM_FFI_TARGET_DIR") {
        Some(dir) => std::path::PathBuf::from(dir),
        // target/<profile>/deps/<test binary> -> target/<profile>
        None => std::env::current_exe()
            .expect("the test binary's path")
            .parent()
            .and_then(|deps| deps.parent())
            .expect("the test binary lives in target/<profile>/deps")
            .to_path_buf(),
    };
    let lib = dir.join(format!("lib{name}.so"));
    let rebuild =
        format!("`cargo build --workspace` (`bash scripts/test.sh` does it; crate `{package}`)");
    let built = std::fs::metadata(&lib)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| {
            panic!(
                "{} is missing: build it first with {rebuild}",
                lib.display()
            )
        });
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for src_dir in [
        &format!("{crate_dir}/src"),
        "tvm-ffi/src",
        "tvm-ffi-macros/src",
    ] {
        for entry in std::fs::read_dir(root.join(src_dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            let changed = entry.metadata().and_then(|m| m.modified());
            if changed.is_ok_and(|t| t > built) {
                panic!(
                    "{} is older than {}: rebuild it with {rebuild}",
                    lib.display(),
                    entry.path().display()
                );
            }
        }
    }
    lib
}

/// Compiles the C++ program `tests/cpp/<name>.cc` with the system `c++` (or `$CXX`) against the
/// wheel's headers, linked to libtvm_ffi (rpath, so it runs without `LD_LIBRARY_PATH`), into
/// `out_dir` (an integration test passes `env!("CARGO_TARGET_TMPDIR")`), and returns the
/// executable's path.
pub fn compile_cpp(name: &str, out_dir: &std::path::Path) -> std::path::PathBuf {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cpp")
        .join(format!("{name}.cc"));
    compile_cpp_source(&source, name, out_dir)
}

/// [`compile_cpp`] for a C++ source elsewhere in the workspace (`examples/ir/cpp/main.cc`),
/// given relative to the workspace root; the executable is `out_dir/cpp_<name>`.
pub fn compile_cpp_example(
    source: &str,
    name: &str,
    out_dir: &std::path::Path,
) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    compile_cpp_source(&root.join(source), name, out_dir)
}

fn compile_cpp_source(
    source: &std::path::Path,
    name: &str,
    out_dir: &std::path::Path,
) -> std::path::PathBuf {
    let out = out_dir.join(format!("cpp_{name}"));
    let libdir = tvm_ffi::build_info::LIBDIR;
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let mut command = std::process::Command::new(&cxx);
    // Under `scripts/asan.sh` the Rust libraries these programs load are instrumented: the
    // program carries the sanitizer's runtime (and checks its own accesses too).
    if std::env::var("TVM_FFI_SANITIZE").as_deref() == Ok("address") {
        command.arg("-fsanitize=address");
    }
    let status = command
        // `-isystem`: warnings are ours to fix, not the wheel headers'.
        .args([
            "-std=c++17",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-isystem",
        ])
        .arg(tvm_ffi::build_info::INCLUDEDIR)
        .arg(source)
        .arg("-o")
        .arg(&out)
        .args([
            format!("-L{libdir}"),
            "-ltvm_ffi".into(),
            format!("-Wl,-rpath,{libdir}"),
            "-ldl".into(),
        ])
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler `{cxx}`: {e}"));
    assert!(status.success(), "compiling {} failed", source.display());
    out
}

/// Runs a helper binary of this crate (`tests/src/bin`) that provokes load errors in a process
/// of its own, and returns its stdout and stderr for the caller to assert on: the diagnostics
/// are checked, never printed into the test suite's output.
///
/// # Panics
/// When the helper cannot be run or does not exit successfully (the message shows its output).
pub fn run_helper(path: &str) -> (String, String) {
    run_program(std::path::Path::new(path), &[])
}

/// Runs `program` with `args` and returns its stdout and stderr.
///
/// # Panics
/// When it cannot be run or does not exit successfully (the message shows its output).
pub fn run_program(program: &std::path::Path, args: &[&std::path::Path]) -> (String, String) {
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{} exited with {}:\n{stdout}{stderr}",
        program.display(),
        out.status
    );
    (stdout, stderr)
}

/// The examples of `docs/hooks.md`, run as doctests (`cargo test -p tvm-ffi-tests --doc`).
#[doc = include_str!("../../docs/hooks.md")]
mod hook_docs {}

/// An iterator whose `size_hint` claims `claimed` items exactly, whatever it yields (a lying
/// iterator, for the array builders' fallbacks).
pub struct Claims<I> {
    /// What it yields.
    pub inner: I,
    /// What it says it yields.
    pub claimed: usize,
}

impl<I: Iterator> Iterator for Claims<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.inner.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.claimed, Some(self.claimed))
    }
}

/// The message of a caught panic: a typed error's (`panic_with`, as the SDK raises where it
/// cannot return one) as `Kind: message`, or the text of a plain panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(err) = payload.downcast_ref::<tvm_ffi::Error>() {
        return format!("{}: {}", err.kind().as_str(), err.message());
    }
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
