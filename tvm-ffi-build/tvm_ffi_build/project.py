"""A package's configuration (`[tool.tvm-ffi-build]`), its cargo build and its vendored crates."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LIB_SUFFIXES = (".so", ".dylib", ".dll", ".pyd")


class BuildError(RuntimeError):
    """A build that cannot go on; the message says what to do."""


class Project:
    """pyproject.toml of the package in `root`, with the defaults of `[tool.tvm-ffi-build]`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.pyproject: dict[str, Any] = tomllib.loads((self.root / "pyproject.toml").read_text())
        meta = self.pyproject.get("project", {})
        tool = self.pyproject.get("tool", {}).get("tvm-ffi-build", {})
        self.name: str = meta["name"]
        self.dist = re.sub(r"[-_.]+", "_", self.name).lower()
        self.python_source = self.root / tool.get("python-source", "python")
        self.package: str = tool.get("package", self.dist)
        self.package_path = self.package.replace(".", "/")  # in the wheel
        self.package_dir = self.python_source / self.package_path
        self.manifest = (self.root / tool.get("manifest", "Cargo.toml")).resolve()
        self.profile: str = tool.get("profile", "release")
        self.editable_profile: str = tool.get("editable-profile", "dev")
        self.prefix: str = tool.get("prefix", self.package)
        self.stubgen_imports: list[str] = list(tool.get("stubgen-imports", []))
        if not any(re.match(r"apache[-_.]tvm[-_.]ffi\b", d, re.I) for d in meta.get("dependencies", [])):
            raise BuildError('[project] dependencies must include apache-tvm-ffi (e.g. "apache-tvm-ffi>=0.1.14,<0.2"): '
                             "the library needs the libtvm_ffi that `import tvm_ffi` loads")


def platform_tag() -> str:
    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def pep440(cargo_version: str) -> str:
    """`1.2.3-alpha.1` -> `1.2.3a1` (Cargo's SemVer pre-releases in PEP 440 spelling)."""
    base, _, pre = cargo_version.partition("-")
    m = re.fullmatch(r"(alpha|a|beta|b|rc)\.?(\d+)", pre.split("+")[0]) if pre else None
    if m:
        return base + {"alpha": "a", "beta": "b"}.get(m[1], m[1]) + m[2]
    return base if not pre else f"{base}.dev0"


def cargo(*args: str) -> list[str]:
    found = os.environ.get("CARGO") or shutil.which("cargo") or shutil.which(str(Path.home() / ".cargo/bin/cargo"))
    if not found:
        raise BuildError("cargo was not found: install Rust (https://rustup.rs) and retry")
    return [found, *args]


def metadata(manifest: Path, deps: bool = False) -> dict[str, Any]:
    cmd = cargo("metadata", "--format-version", "1", "--manifest-path", str(manifest))
    out = subprocess.run(cmd + ([] if deps else ["--no-deps"]), check=True, stdout=subprocess.PIPE)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def cargo_version(manifest: Path) -> str:
    for package in metadata(manifest)["packages"]:
        if Path(package["manifest_path"]).resolve() == manifest:
            return pep440(package["version"])
    raise BuildError(f"{manifest} is a virtual manifest: point `manifest` at the crate")


# What a shipped (release) library is built with unless the workspace's Cargo.toml has its own
# `[profile.release]`: link-time optimisation in one codegen unit keeps only the standard library
# and SDK code the library calls, so `import` maps fewer pages (a 1-type library: 17 -> 11 page
# faults, load 1.35x -> about 1.05x its C++ twin's).
SHIPPED_PROFILE_ENV = {"CARGO_PROFILE_RELEASE_LTO": "true", "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "1"}


def shipped_profile_env(manifest: Path) -> dict[str, str]:
    root = Path(metadata(manifest)["workspace_root"])
    if re.search(r"^\s*\[profile\.release\]", (root / "Cargo.toml").read_text(), re.M):
        return {}
    return dict(SHIPPED_PROFILE_ENV)


def build_library(project: Project, profile: str) -> Path:
    """`cargo build --lib` of the crate (cargo's own progress on stderr); returns the cdylib."""
    from tvm_ffi.libinfo import find_libtvm_ffi

    env = {**(shipped_profile_env(project.manifest) if profile == "release" else {}), **os.environ}
    env.setdefault("TVM_FFI_LIBDIR", str(Path(find_libtvm_ffi()).parent))
    cmd = cargo("build", "--lib", "--message-format=json-render-diagnostics", "--manifest-path",
                str(project.manifest), *(["--profile", profile] if profile != "dev" else []))
    print(f"tvm-ffi-build: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, env=env, cwd=project.root, text=True)
    if proc.returncode != 0:
        raise BuildError(f"cargo build failed (exit status {proc.returncode})")
    library = None
    for line in proc.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        if (msg.get("reason") == "compiler-artifact" and "cdylib" in msg["target"]["crate_types"]
                and Path(msg["manifest_path"]).resolve() == project.manifest):
            library = next((Path(f) for f in msg["filenames"] if f.endswith(LIB_SUFFIXES)), library)
    if library is None:
        raise BuildError(f'{project.manifest} has no [lib] crate-type = ["cdylib"]')
    check_no_rpath(library)
    return library


def check_no_rpath(library: Path) -> None:
    """Refuses a library that carries an rpath/runpath: it would name the build machine."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    with library.open("rb") as f:
        try:
            dynamic: Any = ELFFile(f).get_section_by_name(".dynamic")
        except ELFError:
            return  # not ELF (macOS, Windows)
        found = [t for t in (dynamic.iter_tags() if dynamic else []) if t.entry.d_tag in ("DT_RPATH", "DT_RUNPATH")]
    if found:
        raise BuildError(
            f"{library.name} carries an rpath. A library loaded by Python needs none (`import tvm_ffi` has "
            "loaded libtvm_ffi), and a shipped one must not point at the build machine: emit `-Wl,-rpath` only "
            "for tests and binaries (`cargo:rustc-link-arg-tests=...`), never with plain `cargo:rustc-link-arg`")


def path_dependencies(manifest: Path) -> dict[Path, str]:
    """The crate's path dependencies (normal and build, transitively): directory -> vendor name."""
    meta = metadata(manifest, deps=True)
    by_id = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = next(p["id"] for p in meta["packages"] if Path(p["manifest_path"]).resolve() == manifest)
    out: dict[Path, str] = {}
    todo, seen = [root], {root}
    while todo:
        for dep in nodes[todo.pop()]["deps"]:
            if dep["pkg"] in seen or {k["kind"] for k in dep["dep_kinds"]} <= {"dev"}:
                continue
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
            pkg = by_id[dep["pkg"]]
            if pkg["source"] is None:
                name = pkg["name"] if pkg["name"] not in out.values() else f"{pkg['name']}-{pkg['version']}"
                out[Path(pkg["manifest_path"]).parent.resolve()] = name
    return out


def workspace_of(crate_dir: Path) -> tuple[Path, dict[str, Any]]:
    """The root and manifest of the workspace governing `crate_dir` (the crate itself if none)."""
    for parent in [crate_dir, *crate_dir.parents]:
        if (parent / "Cargo.toml").is_file():
            data = tomllib.loads((parent / "Cargo.toml").read_text())
            if "workspace" in data:
                return parent, data
    return crate_dir, {}


def standalone_manifest(crate_dir: Path, new_path: Callable[[Path], str], is_root: bool) -> tuple[dict[str, Any], dict[str, Path]]:
    """The crate's manifest as it stands alone in an sdist: workspace inheritance resolved,
    dev-dependencies dropped, path dependencies pointed at `new_path(absolute crate dir)`;
    also the files outside the crate it names (readme, license) to copy next to it."""
    data = tomllib.loads((crate_dir / "Cargo.toml").read_text())
    ws_root, ws_data = workspace_of(crate_dir) if "workspace" not in data else (crate_dir, {})
    ws = ws_data.get("workspace", {})
    package, extra = data.get("package", {}), {}
    for key, value in list(package.items()):
        if isinstance(value, dict) and value.get("workspace") is True:
            if key not in ws.get("package", {}):
                raise BuildError(f"{crate_dir}: `{key}.workspace = true` but the workspace has none")
            package[key] = ws["package"][key]
            if key in ("readme", "license-file"):
                package[key] = os.path.relpath(ws_root / package[key], crate_dir)
    for key in ("readme", "license-file"):
        path = (crate_dir / package[key]).resolve() if isinstance(package.get(key), str) else None
        if path and path.is_file() and crate_dir.resolve() not in path.parents:
            package[key], extra[path.name] = path.name, path
    if isinstance(data.get("lints"), dict) and data["lints"].get("workspace") is True:
        data["lints"] = ws.get("lints", {})
    for section in (data, *data.get("target", {}).values()):
        section.pop("dev-dependencies", None)
        for table in (section.get("dependencies", {}), section.get("build-dependencies", {})):
            for name, dep in table.items():
                base = crate_dir
                if isinstance(dep, dict) and dep.get("workspace") is True:
                    inherited = ws.get("dependencies", {}).get(name)
                    if inherited is None:
                        raise BuildError(f"{crate_dir}: dependency `{name}` not in [workspace.dependencies]")
                    inherited = {"version": inherited} if isinstance(inherited, str) else inherited
                    features = sorted({*inherited.get("features", []), *dep.get("features", [])})
                    dep = {**inherited, **{k: v for k, v in dep.items() if k != "workspace"}}
                    dep.update({"features": features} if features else {})
                    base = ws_root
                if isinstance(dep, dict) and "path" in dep:
                    dep["path"] = new_path((base / dep["path"]).resolve())
                table[name] = dep
    data.pop("workspace", None)
    if is_root:  # the sdist is its own workspace, with the origin workspace's profiles and patches
        data["workspace"] = {}
        data.update({k: ws_data[k] for k in ("profile", "patch") if k in ws_data and k not in data})
    return data, extra
