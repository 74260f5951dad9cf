"""Downstream: crates outside this repository built from the *packaged* crates.

`cargo package` makes the three `.crate` files a user would download; they are unpacked into a
directory source that replaces crates.io (with the third-party crates they need, vendored by
`cargo vendor`), so the crates below resolve `tvm-ffi-sdk = "0.1"` exactly as they will once it
is published, and nothing points into this repository. Checked: a library crate's unit tests,
integration tests and `cargo run` work with no build script, no `-sys` dependency and no
`LD_LIBRARY_PATH`; the template builds a wheel; a program uses this SDK and Apache's `tvm-ffi`
crate at once; and libtvm_ffi is found (or a build error says how to install it) without the
repository's `.venv`.
"""
import hashlib
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

import pytest
from tvm_ffi.libinfo import find_libtvm_ffi

from conftest import ROOT

CRATES = ["tvm-ffi-sdk-sys", "tvm-ffi-sdk-macros", "tvm-ffi-sdk"]
# Apache's own bindings (the crate that owns the name `tvm-ffi` on crates.io).
UPSTREAM = "0.1.15"
VENV_BIN = ROOT / ".venv" / "bin"
CARGO = shutil.which("cargo")


def run(cmd, **kwargs):
    """Runs `cmd`, failing the test with its output when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def fresh(path: pathlib.Path) -> pathlib.Path:
    """`path`, emptied (the cached directory may hold an earlier run's crate)."""
    shutil.rmtree(path, ignore_errors=True)
    return path


def write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


LIBDIR = str(pathlib.Path(find_libtvm_ffi()).parent)


def user_env(**extra) -> dict:
    """A user's shell: no virtual environment, no library path, no SDK variables."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "TVM_FFI_LIBDIR", "LD_LIBRARY_PATH", "CARGO_TARGET_DIR",
                        "PYTHONPATH", "RUSTFLAGS", "CARGO_BUILD_RUSTFLAGS")}
    env.update(extra)
    return env


def build_env(target: pathlib.Path, **extra) -> dict:
    """A user's shell for the downstream builds. `TVM_FFI_LIBDIR` names the runtime as the
    wheel build does (the build backend sets it), so that the builds share one compilation;
    the search without it is the `probe` tests'."""
    return user_env(CARGO_TARGET_DIR=str(target), TVM_FFI_LIBDIR=LIBDIR, **extra)


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    """A directory holding `.cargo/config.toml` (crates.io replaced by the packaged crates and
    the vendored third-party ones); crates written below it build as a user's would. Returns
    (that directory, a target directory reused while the packaged crates are unchanged)."""
    run([CARGO, "package", "--no-verify", "--allow-dirty", "-q", *[f"-p{c}" for c in CRATES]],
        cwd=ROOT)
    version = json.loads(run([CARGO, "metadata", "--no-deps", "--format-version", "1"],
                             cwd=ROOT).stdout)
    version = next(p["version"] for p in version["packages"] if p["name"] == "tvm-ffi-sdk")
    crates = {name: (ROOT / "target" / "package" / f"{name}-{version}.crate").read_bytes()
              for name in CRATES}
    # Outside this repository (no `.venv` above it), and kept while the packaged bytes are the
    # same: cargo identifies registry crates by name and version, so a changed SDK must get a
    # directory (and a target directory) of its own; an unchanged one reuses its build.
    digest = hashlib.sha256(b"".join(crates.values()) + str(ROOT).encode()).hexdigest()[:16]
    cache = pathlib.Path(tempfile.gettempdir()) / "tvm-ffi-sdk-downstream"
    home = cache / digest
    if cache.is_dir():
        for old in cache.iterdir():
            # Another worktree's directories are its own business; this one's stale ones go.
            if old != home and (old / "root").is_file() and (old / "root").read_text() == str(ROOT):
                shutil.rmtree(old)
    if not (home / ".cargo" / "config.toml").is_file():
        shutil.rmtree(home, ignore_errors=True)
        write(home / "root", str(ROOT))
        _make_directory_source(home, crates, version)
    return home, home / "target"


def _make_directory_source(home: pathlib.Path, crates: dict, version: str) -> None:
    ours = home / "packaged"
    for data in crates.values():
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(ours, filter="data")
    # The third-party crates of this SDK and of Apache's crate: resolved once with the packaged
    # crates patched in, then vendored (from cargo's download cache, or crates.io).
    resolve = home / "resolve"
    write(resolve / "Cargo.toml", f"""
[package]
name = "resolve"
version = "0.0.0"
edition = "2021"

[dependencies]
tvm-ffi-sdk = "0.1"
upstream = {{ package = "tvm-ffi", version = "={UPSTREAM}" }}

[patch.crates-io]
""" + "".join(f'{n} = {{ path = "{ours}/{n}-{version}" }}\n' for n in CRATES))
    write(resolve / "src" / "lib.rs", "")
    vendor = home / "vendor"
    run([CARGO, "vendor", "-q", "--manifest-path", str(resolve / "Cargo.toml"), str(vendor)],
        env=user_env())
    for name, data in crates.items():
        shutil.copytree(ours / f"{name}-{version}", vendor / name)
        # A directory source checks a package's files against this list (none: the package
        # checksum is the .crate's, as in a registry).
        write(vendor / name / ".cargo-checksum.json",
              json.dumps({"files": {}, "package": hashlib.sha256(data).hexdigest()}))
    # Written last: its presence marks a complete directory.
    write(home / ".cargo" / "config.toml", f"""
[source.crates-io]
replace-with = "packaged"

[source.packaged]
directory = "{vendor}"
""")


LIB_RS = """\
//! A crate of a user: a type and a function, registered when the binary loads.
use tvm_ffi::{ffi_func, Function, Object, ObjectRef};

/// A named variable.
#[derive(Object, Clone)]
#[ffi_type(key = "acme_ir.Var")]
#[repr(C)]
pub struct Var {
    /// Its name.
    pub name: tvm_ffi::String,
}

/// Makes a variable.
#[ffi_func(name = "acme_ir.var")]
pub fn var(name: &str) -> ObjectRef<Var> {
    ObjectRef::new(Var { name: name.into() })
}

/// Makes a variable through the runtime's global function table and reads its name back.
pub fn name_through_runtime(name: &str) -> String {
    let made: ObjectRef<Var> = Function::get_global_required("acme_ir.var")
        .unwrap()
        .call((name,))
        .unwrap()
        .cast()
        .unwrap();
    made.name.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn unit_test_calls_through_the_runtime() {
        assert_eq!(super::name_through_runtime("unit"), "unit");
    }
}
"""


def test_a_crate_that_depends_only_on_the_sdk_tests_and_runs(packaged):
    home, target = packaged
    crate = fresh(home / "acme_ir")
    # The README's dependency line; no build.rs, no `-sys` dependency, no `[lib] test = false`.
    write(crate / "Cargo.toml", """
[package]
name = "acme_ir"
version = "0.1.0"
edition = "2021"

[dependencies]
tvm-ffi-sdk = "0.1"
""")
    write(crate / "src" / "lib.rs", LIB_RS)
    write(crate / "tests" / "registry.rs", """
#[test]
fn integration_test_calls_through_the_runtime() {
    assert_eq!(acme_ir::name_through_runtime("integration"), "integration");
}
""")
    write(crate / "src" / "main.rs", """
fn main() {
    println!("{}", acme_ir::name_through_runtime("from cargo run"));
}
""")
    env = build_env(target)
    tested = run([CARGO, "test", "-q"], cwd=crate, env=env)
    # The unit test and the integration test each ran and passed (the bin and doc harnesses
    # have none).
    assert tested.stdout.count("test result: ok. 1 passed") == 2, tested.stdout
    ran = run([CARGO, "run", "-q"], cwd=crate, env=env)
    assert ran.stdout == "from cargo run\n", ran.stdout
    # The binary carries no rpath to the build machine: cargo's library path found libtvm_ffi.
    dynamic = run(["readelf", "-d", str(target / "debug" / "acme_ir")]).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, dynamic
    assert "Shared library: [libtvm_ffi.so]" in dynamic


def test_the_template_builds_a_wheel_from_the_packaged_crates(packaged, tmp_path):
    home, target = packaged
    project = fresh(home / "acme_pkg")
    shutil.copytree(ROOT / "template", project,
                    ignore=shutil.ignore_patterns("target", "__pycache__", "*.so"))
    for path in project.rglob("*"):
        if path.is_file() and "my_package" in path.read_text():
            path.write_text(path.read_text().replace("my_package", "acme_pkg"))
    (project / "python" / "my_package").rename(project / "python" / "acme_pkg")
    manifest = project / "Cargo.toml"
    # The README's step: the repository's path dependency becomes the published one.
    text = manifest.read_text()
    line = 'tvm-ffi-sdk = { path = "../tvm-ffi", version = "0.1.0" }'
    assert line in text
    manifest.write_text(text.replace(line, 'tvm-ffi-sdk = "0.1"'))
    env = build_env(target)
    tested = run([CARGO, "test", "-q"], cwd=project, env=env)
    assert "test result: ok. 1 passed" in tested.stdout, tested.stdout
    # The repository's Python has the build requirements (no isolation: no index needed).
    out = tmp_path / "dist"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--config-settings", "profile=dev", "-w", str(out), str(project)],
        env=build_env(target))
    (wheel,) = out.glob("acme_pkg-0.1.0-py3-none-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        whl.extractall(tmp_path / "site")
    proc = run([sys.executable, "-c", """
import acme_pkg
c = acme_pkg.Counter("c")
assert (c.add(2), c.add(3), acme_pkg.greet("wheel")) == (2, 5, "hello, wheel")
print("ok")
"""], cwd=tmp_path, env=user_env(PYTHONPATH=str(tmp_path / "site")))
    assert proc.stdout == "ok\n", proc.stdout


COEXIST_RS = """\
//! This SDK and Apache's `tvm-ffi` crate in one program, each linking the one libtvm_ffi.
use tvm_ffi::{ffi_func, Object, ObjectRef};

/// A counter defined in Rust with this SDK.
#[derive(Object, Clone)]
#[ffi_type(key = "coexist.Counter")]
#[repr(C)]
pub struct Counter {
    /// The count.
    pub count: i64,
}

#[ffi_func(name = "coexist.make_counter")]
fn make_counter(count: i64) -> ObjectRef<Counter> {
    ObjectRef::new(Counter { count })
}

#[ffi_func(name = "coexist.count_of")]
fn count_of(counter: ObjectRef<Counter>) -> i64 {
    counter.count
}

fn main() {
    // Apache's crate makes our object through our function and hands it back to another.
    let make = upstream::Function::get_global("coexist.make_counter").unwrap();
    let counter = make.call_tuple((41i64,)).unwrap();
    let count_of = upstream::Function::get_global("coexist.count_of").unwrap();
    let count = count_of.call_packed(&[upstream::AnyView::from(&counter)]).unwrap();
    let count = i64::try_from(count).unwrap();
    // A function Apache's crate registers, called from this SDK with our value.
    let twice = upstream::Function::from_typed(|x: i64| -> upstream::Result<i64> { Ok(2 * x) });
    upstream::Function::register_global("coexist.twice", twice).unwrap();
    let doubled = tvm_ffi::Function::get_global_required("coexist.twice")
        .unwrap()
        .call((count,))
        .unwrap()
        .cast::<i64>()
        .unwrap();
    println!("{count} {doubled}");
}
"""


def test_a_program_uses_this_sdk_and_apaches_tvm_ffi_crate_at_once(packaged):
    home, target = packaged
    crate = fresh(home / "coexist")
    write(crate / "Cargo.toml", f"""
[package]
name = "coexist"
version = "0.1.0"
edition = "2021"

[dependencies]
tvm-ffi-sdk = "0.1"
# Both libraries are named `tvm_ffi`: one is renamed.
upstream = {{ package = "tvm-ffi", version = "={UPSTREAM}" }}
""")
    write(crate / "src" / "main.rs", COEXIST_RS)
    # Apache's tvm-ffi-sys finds libtvm_ffi through tvm-ffi-config on PATH.
    env = build_env(target, PATH=f"{VENV_BIN}:{os.environ['PATH']}")
    ran = run([CARGO, "run", "-q"], cwd=crate, env=env)
    assert ran.stdout == "41 82\n", ran.stdout


@pytest.fixture(scope="module")
def probe(packaged):
    """A crate that depends on the -sys crate only, with a target directory outside this
    repository (so no `.venv` lies above it): builds only the library search."""
    home, _ = packaged
    crate = fresh(home / "probe")
    write(crate / "Cargo.toml", """
[package]
name = "probe"
version = "0.1.0"
edition = "2021"

[dependencies]
tvm-ffi-sdk-sys = "0.1"
""")
    write(crate / "src" / "lib.rs", "")
    return crate, home / "probe-target"


def found_via(probe, **env):
    """Builds the probe in a user's shell plus `env`; returns how libtvm_ffi was found, or the
    build's stderr when it failed."""
    crate, target = probe
    # Only cargo's own directory and the system's: no tvm-ffi-config, no python with tvm_ffi.
    shell = {"PATH": f"{pathlib.Path(CARGO).parent}:/usr/bin:/bin", "PYTHON": "/nonexistent/python3"}
    env = user_env(CARGO_TARGET_DIR=str(target), **{**shell, **env})
    proc = subprocess.run([CARGO, "build", "-q"], cwd=crate, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr
    (output,) = (target / "debug" / "build").glob("tvm-ffi-sdk-sys-*/output")
    found = [line for line in output.read_text().splitlines() if "TVM_FFI_FOUND_VIA=" in line]
    return found[0].split("=", 2)[2]


@pytest.mark.parametrize("how, env, expected", [
    ("virtual env", {"VIRTUAL_ENV": str(ROOT / ".venv")}, "VIRTUAL_ENV"),
    ("tvm-ffi-config", {"PATH": f"{VENV_BIN}:/usr/bin:/bin"}, "tvm-ffi-config"),
    ("python", {"PYTHON": str(VENV_BIN / "python")}, str(VENV_BIN / "python")),
    ("variable", {"TVM_FFI_LIBDIR": str(pathlib.Path(find_libtvm_ffi()).parent)},
     "TVM_FFI_LIBDIR"),
])
def test_libtvm_ffi_is_found_outside_the_repository(probe, how, env, expected):
    if "PATH" in env:  # cargo itself must stay reachable
        env["PATH"] = f"{pathlib.Path(CARGO).parent}:{env['PATH']}"
    assert found_via(probe, **env) == expected


def test_a_missing_runtime_is_a_build_error_that_lists_the_search_and_the_fix(probe):
    stderr = found_via(probe)
    assert "libtvm_ffi (the runtime of the Python package apache-tvm-ffi) was not found." in stderr
    for tried in ["TVM_FFI_LIBDIR: not set", "VIRTUAL_ENV: not set",
                  "a .venv above the crate or the target directory: none",
                  "`tvm-ffi-config --libdir`: cannot run it",
                  "`/nonexistent/python3` importing tvm_ffi: cannot run it"]:
        assert f"  - {tried}" in stderr, stderr
    assert "Fix: `pip install 'apache-tvm-ffi>=0.1.14,<0.2'`" in stderr


def readme_block(marker: str) -> str:
    """The fenced code block after `<!-- quick-start:MARKER` in README.md."""
    text = (ROOT / "README.md").read_text()
    after = text.split(f"<!-- quick-start:{marker}", 1)[1]
    block = after.split("```", 2)[1]
    return block.split("\n", 1)[1]


def test_the_readme_quick_start_builds_and_runs_as_written(packaged):
    home, target = packaged
    crate = fresh(home / "acme")
    # `cargo new --lib acme`, `cargo add tvm-ffi-sdk` and the crate-type line of the README.
    write(crate / "Cargo.toml", """
[package]
name = "acme"
version = "0.1.0"
edition = "2021"

[lib]
crate-type = ["cdylib", "rlib"]

[dependencies]
tvm-ffi-sdk = "0.1"
""")
    write(crate / "src" / "lib.rs", readme_block("rust"))
    # The target directory is the crate's own, as the README's Python line expects.
    (crate / "target").symlink_to(target)
    run([CARGO, "build", "-q"], cwd=crate, env=build_env(target))
    script = readme_block("python")
    assert "# 3 25" in script
    proc = run([sys.executable, "-c", script], cwd=crate, env=user_env())
    assert proc.stdout == "3 25\n", proc.stdout
