//! Finds libtvm_ffi (the PyPI wheel `apache-tvm-ffi`) and links against it.
//!
//! Search order: `TVM_FFI_LIBDIR`, an active `VIRTUAL_ENV`, a `.venv` above this crate or above
//! the target directory (a project-local environment, e.g. the one `scripts/setup.sh` creates),
//! `tvm-ffi-config --libdir` on `PATH`, then the Python (`PYTHON`, else `python3`) that can import
//! `tvm_ffi`. The library is linked through a symbolic link inside `OUT_DIR`: Cargo puts
//! link-search directories that lie inside the target directory on the dynamic library path of
//! `cargo run` and `cargo test`, so every dependent's binaries, tests and doctests run without
//! `LD_LIBRARY_PATH`, an rpath or a build script of their own. A link (never a copy): the process
//! then loads the very file that `import tvm_ffi` loads, one runtime per process.
use std::path::{Path, PathBuf};
use std::process::Command;

const LIB_FILE: &str = "libtvm_ffi.so";
/// The one command that makes a failed search succeed.
const FIX: &str = "pip install 'apache-tvm-ffi>=0.1.14,<0.2'";

fn venv_libdir(venv: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(venv.join("lib"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages/tvm_ffi/lib"))
        .filter(|p| p.join(LIB_FILE).exists())
        .collect();
    candidates.sort();
    candidates.pop()
}

/// The directory a command prints on its first line, when it holds the library.
fn libdir_from(cmd: &mut Command) -> Result<PathBuf, String> {
    let out = cmd.output().map_err(|e| format!("cannot run it ({e})"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "failed ({}): {}",
            out.status,
            stderr.trim().lines().last().unwrap_or("")
        ));
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if dir.join(LIB_FILE).exists() {
        Ok(dir)
    } else {
        Err(format!("{} holds no {LIB_FILE}", dir.display()))
    }
}

/// The library directory and how it was found, or every place tried and why it failed.
fn find_libdir() -> Result<(PathBuf, String), Vec<String>> {
    let mut tried = Vec::new();
    println!("cargo:rerun-if-env-changed=TVM_FFI_LIBDIR");
    if let Some(dir) = std::env::var_os("TVM_FFI_LIBDIR") {
        let dir = PathBuf::from(dir);
        if dir.join(LIB_FILE).exists() {
            return Ok((dir, "TVM_FFI_LIBDIR".into()));
        }
        // An explicit choice that fails is an error, never a silent fallback.
        return Err(vec![format!(
            "TVM_FFI_LIBDIR={}: holds no {LIB_FILE}",
            dir.display()
        )]);
    }
    tried.push("TVM_FFI_LIBDIR: not set".to_string());

    println!("cargo:rerun-if-env-changed=VIRTUAL_ENV");
    match std::env::var_os("VIRTUAL_ENV") {
        Some(venv) => match venv_libdir(Path::new(&venv)) {
            Some(found) => return Ok((found, "VIRTUAL_ENV".into())),
            None => tried.push(format!(
                "VIRTUAL_ENV={}: apache-tvm-ffi is not installed there",
                Path::new(&venv).display()
            )),
        },
        None => tried.push("VIRTUAL_ENV: not set".to_string()),
    }

    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let mut seen = Vec::new();
    for dir in manifest.ancestors().chain(out_dir.ancestors()) {
        let venv = dir.join(".venv");
        if seen.contains(&venv) || !venv.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", venv.display());
        if let Some(found) = venv_libdir(&venv) {
            return Ok((found, format!("{}", venv.display())));
        }
        tried.push(format!(
            "{}: apache-tvm-ffi is not installed there",
            venv.display()
        ));
        seen.push(venv);
    }
    if seen.is_empty() {
        tried.push("a .venv above the crate or the target directory: none".to_string());
    }

    // Both remaining searches depend on what PATH (and PYTHON) name.
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-env-changed=PYTHON");
    match libdir_from(Command::new("tvm-ffi-config").arg("--libdir")) {
        Ok(found) => return Ok((found, "tvm-ffi-config".into())),
        Err(why) => tried.push(format!("`tvm-ffi-config --libdir`: {why}")),
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    // find_spec locates the package without importing it (importing loads the library).
    let script = "import importlib.util, os; \
                  s = importlib.util.find_spec('tvm_ffi'); \
                  print(os.path.join(s.submodule_search_locations[0], 'lib') if s else '')";
    match libdir_from(Command::new(&python).args(["-c", script])) {
        Ok(found) => return Ok((found, python)),
        Err(why) => tried.push(format!("`{python}` importing tvm_ffi: {why}")),
    }
    Err(tried)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    let (libdir, source) = match find_libdir() {
        Ok(found) => found,
        // docs.rs builds documentation without the runtime: nothing is linked there.
        Err(_) if std::env::var_os("DOCS_RS").is_some() => {
            println!("cargo:rustc-env=TVM_FFI_LIBDIR=");
            println!("cargo:rustc-env=TVM_FFI_INCLUDEDIR=");
            return;
        }
        Err(tried) => {
            let msg = format!(
                "libtvm_ffi (the runtime of the Python package apache-tvm-ffi) was not found.\n\
                 Tried, in order:\n  - {}\n\
                 Fix: `{FIX}` (into the active virtual environment), then build again; or set \
                 TVM_FFI_LIBDIR to the directory that `tvm-ffi-config --libdir` prints.",
                tried.join("\n  - ")
            );
            eprintln!("error: {msg}");
            panic!("{msg}");
        }
    };
    println!("cargo:rerun-if-changed={}", libdir.join(LIB_FILE).display());
    let linked = link_into_out_dir(&libdir);
    let includedir = libdir.parent().unwrap().join("include");
    println!("cargo:rustc-link-search=native={}", linked.display());
    println!("cargo:rustc-link-lib=dylib=tvm_ffi");
    // This crate's own tests run without cargo's library path too (link arguments of a build
    // script apply to its own package only). Dependents' binaries and tests need no rpath (the
    // link-search directory above is on their library path under cargo), and a cdylib needs
    // none: Python has loaded libtvm_ffi before it, and the dynamic linker matches the
    // library's DT_NEEDED by soname.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", libdir.display());
    // DEP_TVM_FFI_SDK_LIBDIR / DEP_TVM_FFI_SDK_INCLUDE for dependents' build scripts.
    println!("cargo:libdir={}", libdir.display());
    println!("cargo:include={}", includedir.display());
    println!("cargo:rustc-env=TVM_FFI_LIBDIR={}", libdir.display());
    println!(
        "cargo:rustc-env=TVM_FFI_INCLUDEDIR={}",
        includedir.display()
    );
    println!("cargo:rustc-env=TVM_FFI_FOUND_VIA={source}");
}

/// `OUT_DIR/lib/libtvm_ffi.so`, a symbolic link to the found library; returns its directory.
fn link_into_out_dir(libdir: &Path) -> PathBuf {
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("lib");
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/lib");
    let link = dir.join(LIB_FILE);
    match std::fs::remove_file(&link) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("cannot replace {}: {e}", link.display()),
    }
    let target = libdir.join(LIB_FILE);
    // Absolute: the link stays valid wherever the target directory is read from.
    let target = target.canonicalize().unwrap_or(target);
    std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| {
        panic!(
            "cannot link {} to {}: {e}",
            link.display(),
            target.display()
        )
    });
    dir
}
