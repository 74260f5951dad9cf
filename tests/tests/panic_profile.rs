//! Under `panic = "abort"` every designed panic path of the SDK (out of memory in
//! `ObjectRef::new`, the checks it makes) would abort the host process instead of becoming an
//! error for the caller, so the crate refuses that profile at compile time, with a message
//! saying why and what to change.

#[test]
fn panic_abort_profile_is_a_compile_error() {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(&workspace)
        // A target directory of its own: the abort profile rebuilds the dependencies.
        .env(
            "CARGO_TARGET_DIR",
            workspace.join("target").join("panic-abort-check"),
        )
        .env_remove("RUSTFLAGS")
        .args([
            "check",
            "--quiet",
            "--offline",
            "-p",
            "tvm-ffi-sdk",
            "--config",
            "profile.dev.panic=\"abort\"",
        ])
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "tvm-ffi compiled under panic = \"abort\""
    );
    assert!(
        stderr.contains("tvm-ffi requires `panic = \"unwind\"`"),
        "{stderr}"
    );
}
