//! Finds libtvm_ffi (the PyPI wheel `apache-tvm-ffi`) and links against it.
//!
//! Search order: `TVM_FFI_LIBDIR`, the project's own `.venv` (created by `scripts/setup.sh`),
//! an active `VIRTUAL_ENV`, then `tvm-ffi-config --libdir` on `PATH`.
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB_FILE: &str = "libtvm_ffi.so";

fn venv_libdir(venv: &Path) -> Option<PathBuf> {
    let lib = venv.join("lib");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages/tvm_ffi/lib"))
        .filter(|p| p.join(LIB_FILE).exists())
        .collect();
    candidates.sort();
    candidates.pop()
}

fn find_libdir() -> Result<(PathBuf, &'static str), String> {
    println!("cargo:rerun-if-env-changed=TVM_FFI_LIBDIR");
    println!("cargo:rerun-if-env-changed=VIRTUAL_ENV");
    if let Ok(dir) = std::env::var("TVM_FFI_LIBDIR") {
        let dir = PathBuf::from(dir);
        if dir.join(LIB_FILE).exists() {
            return Ok((dir, "TVM_FFI_LIBDIR"));
        }
        return Err(format!(
            "TVM_FFI_LIBDIR={} does not contain {LIB_FILE}",
            dir.display()
        ));
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    for dir in manifest.ancestors() {
        let venv = dir.join(".venv");
        if venv.is_dir() {
            println!("cargo:rerun-if-changed={}", venv.display());
            if let Some(found) = venv_libdir(&venv) {
                return Ok((found, "project .venv"));
            }
        }
    }
    if let Ok(venv) = std::env::var("VIRTUAL_ENV") {
        if let Some(found) = venv_libdir(Path::new(&venv)) {
            return Ok((found, "VIRTUAL_ENV"));
        }
    }
    if let Ok(out) = Command::new("tvm-ffi-config").arg("--libdir").output() {
        if out.status.success() {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if dir.join(LIB_FILE).exists() {
                return Ok((dir, "tvm-ffi-config"));
            }
        }
    }
    Err("libtvm_ffi was not found.\n\
         Run `bash scripts/setup.sh` from the repository root: it creates the project-local \
         Python environment `.venv` with the pinned wheel `apache-tvm-ffi==0.1.15.post2`.\n\
         Alternatively set TVM_FFI_LIBDIR to the directory printed by `tvm-ffi-config --libdir`."
        .to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let (libdir, source) = match find_libdir() {
        Ok(found) => found,
        Err(msg) => {
            eprintln!("error: {msg}");
            panic!("{msg}");
        }
    };
    let includedir = libdir.parent().unwrap().join("include");
    let libdir_s = libdir.display().to_string();
    println!("cargo:rustc-link-search=native={libdir_s}");
    println!("cargo:rustc-link-lib=dylib=tvm_ffi");
    // This crate's own tests and doctests run without LD_LIBRARY_PATH.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{libdir_s}");
    // Exposed to dependents' build scripts as DEP_TVM_FFI_LIBDIR / DEP_TVM_FFI_INCLUDE.
    println!("cargo:libdir={libdir_s}");
    println!("cargo:include={}", includedir.display());
    println!("cargo:rustc-env=TVM_FFI_LIBDIR={libdir_s}");
    println!(
        "cargo:rustc-env=TVM_FFI_INCLUDEDIR={}",
        includedir.display()
    );
    println!("cargo:rustc-env=TVM_FFI_FOUND_VIA={source}");
}
