"""A PEP 517 / PEP 660 build backend for Rust crates that register TVM-FFI types and functions.

The package is a Rust ``cdylib`` (built with cargo) plus a Python package whose
``_ffi_api.py`` loads it and holds the classes and typed stubs that ``tvm-ffi-stubgen``
generates from the built library. Pure Python, standard library only (``tomli`` on
Python < 3.11); used through ``backend-path``, so nothing is installed to build.

``pyproject.toml``::

    [build-system]
    requires = ["apache-tvm-ffi==0.1.15.post2"]
    build-backend = "tvm_ffi_build"
    backend-path = ["build_backend"]

    [project]
    name = "my_package"
    version = "0.1.0"                      # or dynamic = ["version"]: Cargo's version
    dependencies = ["apache-tvm-ffi>=0.1.14,<0.2"]

    [tool.tvm-ffi-build]                    # all optional
    python-source = "python"                # holds the package directory
    package = "my_package"                  # the Python package the library goes into
    manifest = "Cargo.toml"                 # the crate with crate-type = ["cdylib"]
    profile = "release"                     # cargo profile of wheels
    editable-profile = "dev"                # cargo profile of `pip install -e`
    prefix = "my_package"                   # the registry prefix of the package's types/functions
    stubgen-imports = []                    # modules stubgen imports first (parents' types)

What it does:

* ``build_wheel``: ``cargo build --lib`` (``TVM_FFI_LIBDIR`` is the build environment's
  libtvm_ffi unless set), copies the Python package to a staging directory, runs
  ``tvm-ffi-stubgen`` on it with the built library loaded (the ``tvm-ffi-stubgen(begin)``
  blocks of ``_ffi_api.py`` get the registered classes, fields, methods and functions), puts
  the library next to it and writes a ``py3-none-<platform>`` wheel: the library never
  touches the Python ABI. The wheel never contains libtvm_ffi (``import tvm_ffi`` loads it;
  the dynamic linker matches the library's ``DT_NEEDED`` by soname) and a library carrying
  an rpath or runpath is refused (it would point at the build machine).
* ``build_editable`` (``pip install -e``): the same build in the ``dev`` profile; the stubs
  are refreshed in the source tree, a ``.pth`` file points Python at the source package,
  and the library is installed where stubgen's loader looks (the distribution's
  ``RECORD``). After changing Rust code, ``python build_backend/tvm_ffi_build.py develop``
  rebuilds, rewrites the stubs and replaces the installed library (or re-run
  ``pip install -e .``).
* ``build_sdist``: the crate's files, the Python package and this backend, plus every path
  dependency of the crate copied under ``vendor/`` with workspace inheritance resolved and
  path dependencies rewritten, so the sdist builds anywhere into the same wheel.

Commands (``python build_backend/tvm_ffi_build.py COMMAND`` in the project directory):
``develop`` (the rebuild after ``pip install -e .``), ``lib --out PATH [--release]`` (the
library under the file name a loader expects, e.g. ``build/add_one_cpu.so``; cargo names it
``lib<crate>.so``), ``stubs [--check]`` and ``cpp-header --out PATH`` (a C++ header for the
package's types, written by ``tvm_ffi_cpp_header.py`` beside this file: layout structs with
``static_assert``\\ s and typed accessors for C++ code reading the objects in place).

Config settings (``pip wheel --config-settings KEY=VALUE``): ``profile``, and
``platform-tag`` (e.g. ``manylinux_2_28_x86_64`` when building in a manylinux container).
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import keyword
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

BACKEND = "tvm_ffi_build"
BACKEND_VERSION = "0.1.0"

# Never copied into an sdist or a wheel: build outputs, environments, caches.
_SKIP_DIRS = {
    "target", ".git", ".hg", ".venv", "venv", "dist", "__pycache__", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", ".tox", ".nox",
}
_LIB_SUFFIXES = (".so", ".dylib", ".dll", ".pyd")
_DEP_TABLES = ("dependencies", "build-dependencies", "dev-dependencies")


class BuildError(RuntimeError):
    """A build that cannot go on; the message says what to do."""


# ---- configuration -----------------------------------------------------------------------


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


class _Project:
    """pyproject.toml of the project being built (the current directory)."""

    def __init__(self, root: Path, config_settings: dict | None) -> None:
        self.root = root.resolve()
        pyproject = self.root / "pyproject.toml"
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        self.project = data.get("project")
        if not isinstance(self.project, dict) or "name" not in self.project:
            raise BuildError(f"{pyproject}: a [project] table with a `name` is required")
        tool = data.get("tool", {}).get("tvm-ffi-build", {})
        self.settings = dict(config_settings or {})
        self.name = self.project["name"]
        self.dist = _normalize(self.name)
        self.python_source = self.root / tool.get("python-source", "python")
        self.package = tool.get("package", self.dist)
        self.manifest = (self.root / tool.get("manifest", "Cargo.toml")).resolve()
        self.profile = tool.get("profile", "release")
        self.editable_profile = tool.get("editable-profile", "dev")
        self.prefix = tool.get("prefix", self.package)
        self.stubgen_imports = list(tool.get("stubgen-imports", []))
        if not self.manifest.is_file():
            raise BuildError(f"no Cargo manifest at {self.manifest}")
        deps = self.project.get("dependencies", [])
        if not any(re.match(r"apache[-_.]tvm[-_.]ffi\b", d, re.I) for d in deps):
            raise BuildError(
                f"{pyproject}: [project] dependencies must include apache-tvm-ffi (e.g. "
                '"apache-tvm-ffi>=0.1.14,<0.2"): the library needs the libtvm_ffi '
                "that `import tvm_ffi` loads"
            )
        self._version: str | None = None

    @property
    def version(self) -> str:
        if self._version is None:
            if "version" in self.project:
                self._version = str(self.project["version"])
            elif "version" in self.project.get("dynamic", []):
                self._version = _pep440(_cargo_package(self.manifest)["version"])
            else:
                raise BuildError("[project] needs `version` or dynamic = [\"version\"]")
        return self._version

    def setting(self, key: str, default: str) -> str:
        value = self.settings.get(key, default)
        return value[-1] if isinstance(value, list) else value


def _pep440(cargo_version: str) -> str:
    """`1.2.3-alpha.1` -> `1.2.3a1` (Cargo's SemVer pre-releases in PEP 440 spelling)."""
    base, _, pre = cargo_version.partition("-")
    m = re.fullmatch(r"(alpha|a|beta|b|rc)\.?(\d+)", pre.split("+")[0]) if pre else None
    if m:
        return base + {"alpha": "a", "a": "a", "beta": "b", "b": "b", "rc": "rc"}[m[1]] + m[2]
    return base if not pre else f"{base}.dev0"


# ---- cargo -------------------------------------------------------------------------------


def _cargo() -> str:
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if not cargo:
        home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
        if (home / "bin" / "cargo").exists():
            cargo = str(home / "bin" / "cargo")
    if not cargo:
        raise BuildError("cargo was not found: install Rust (https://rustup.rs) and retry")
    return cargo


def _cargo_metadata(manifest: Path, no_deps: bool) -> dict:
    cmd = [_cargo(), "metadata", "--format-version", "1", "--manifest-path", str(manifest)]
    if no_deps:
        cmd.append("--no-deps")
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE)
    return json.loads(out.stdout)


def _cargo_package(manifest: Path) -> dict:
    for package in _cargo_metadata(manifest, no_deps=True)["packages"]:
        if Path(package["manifest_path"]).resolve() == manifest:
            return package
    raise BuildError(f"{manifest} is a virtual manifest: point `manifest` at the crate")


def _libtvm_ffi_dir() -> str:
    try:
        from tvm_ffi.libinfo import find_libtvm_ffi
    except ImportError as err:
        raise BuildError(
            "apache-tvm-ffi is not installed in the build environment: list it in "
            f"[build-system] requires ({err})"
        ) from err
    return str(Path(find_libtvm_ffi()).parent)


# What a shipped (release) library is built with unless the package's workspace sets its own
# `[profile.release]` or the environment sets these: link-time optimisation in one codegen unit
# keeps only the standard library and SDK code the library calls, so `import` maps fewer pages
# (a 1-type library: 17 -> 11 page faults, load 1.35x -> about 1.05x its C++ twin's).
SHIPPED_PROFILE_ENV = {
    "CARGO_PROFILE_RELEASE_LTO": "true",
    "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "1",
}


def _shipped_profile_env(project: _Project) -> dict:
    """`SHIPPED_PROFILE_ENV`, or nothing when the workspace's Cargo.toml has a release profile."""
    root = Path(_cargo_metadata(project.manifest, no_deps=True)["workspace_root"])
    if re.search(r"^\s*\[profile\.release\]", (root / "Cargo.toml").read_text(), re.M):
        return {}
    return dict(SHIPPED_PROFILE_ENV)


def _build_library(project: _Project, profile: str) -> Path:
    """`cargo build --lib` of the crate; returns the cdylib."""
    env = dict(os.environ)
    env.setdefault("TVM_FFI_LIBDIR", _libtvm_ffi_dir())
    if profile == "release":
        for key, value in _shipped_profile_env(project).items():
            env.setdefault(key, value)
    cmd = [_cargo(), "build", "--lib", "--message-format=json-render-diagnostics",
           "--manifest-path", str(project.manifest)]
    if profile == "release":
        cmd.append("--release")
    elif profile != "dev":
        cmd += ["--profile", profile]
    print(f"{BACKEND}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env, cwd=project.root, text=True)
    library = None
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if (
            msg.get("reason") == "compiler-artifact"
            and "cdylib" in msg["target"]["crate_types"]
            and Path(msg["manifest_path"]).resolve() == project.manifest
        ):
            libs = [f for f in msg["filenames"] if f.endswith(_LIB_SUFFIXES)]
            if libs:
                library = Path(libs[0])
    if proc.wait() != 0:
        raise BuildError(f"cargo build failed (exit status {proc.returncode})")
    if library is None:
        raise BuildError(f'{project.manifest} has no [lib] crate-type = ["cdylib"]')
    _check_no_rpath(library)
    return library


def _check_no_rpath(library: Path) -> None:
    """Refuses a library that carries an rpath/runpath: it would name the build machine."""
    found = elf_dynamic(library).get("rpath")
    if found:
        raise BuildError(
            f"{library.name} carries the rpath {found!r}. A library loaded by Python needs "
            "none (`import tvm_ffi` has loaded libtvm_ffi), and a shipped one must not point "
            "at the build machine: emit `-Wl,-rpath` only for tests and binaries "
            "(`cargo:rustc-link-arg-tests=...`), never with plain `cargo:rustc-link-arg`"
        )


def elf_dynamic(path: Path) -> dict:
    """The dynamic section of a 64-bit little-endian ELF file: `needed` (list), `rpath` (a
    DT_RPATH or DT_RUNPATH, or None) and `nodelete` (DF_1_NODELETE). Non-ELF files: {}."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out: dict = {"needed": [], "rpath": None, "nodelete": False}
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link][4]

        def string(at: int) -> str:
            end = data.index(b"\0", strtab + at)
            return data[strtab + at:end].decode()

        for i in range(size // (entsize or 16)):
            tag, val = struct.unpack_from("<qQ", data, offset + i * 16)
            if tag == 1:
                out["needed"].append(string(val))
            elif tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                out["rpath"] = string(val)
            elif tag == 0x6FFFFFFB:  # DT_FLAGS_1
                out["nodelete"] = bool(val & 0x8)
    return out


# ---- stubs -------------------------------------------------------------------------------


def _stubgen(project: _Project, source_root: Path, library: Path) -> None:
    """Runs tvm-ffi-stubgen over `source_root` (the directory holding the package) with
    `library` loaded, in `--init-*` mode: it writes `__init__.py` and `_ffi_api.py` when they
    are missing, appends a class for each registered type under the prefix that has none yet,
    and regenerates every `tvm-ffi-stubgen(begin)` block. `PYTHONHASHSEED=0`: the same library
    gives the same file."""
    target = library.name
    for suffix in _LIB_SUFFIXES:
        target = target.removesuffix(suffix)
    if target.startswith("lib") and not library.name.endswith(".dll"):
        target = target[3:]
    cmd = [sys.executable, "-m", "tvm_ffi.stub.cli", "--dlls", str(library),
           "--init-pypkg", project.dist, "--init-lib", target,
           "--init-prefix", f"{project.prefix}.", str(source_root)]
    if project.stubgen_imports:
        cmd += ["--imports", ";".join(project.stubgen_imports)]
    env = dict(os.environ, PYTHONHASHSEED="0")
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if run.returncode != 0:
        raise BuildError(f"tvm-ffi-stubgen failed:\n{run.stdout}")
    query = subprocess.run([sys.executable, "-c", _TYPE_QUERY, str(library), f"{project.prefix}."],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if query.returncode != 0:
        raise BuildError(f"reading the enums and comparison hooks of {library.name} failed:\n{query.stdout}")
    found = json.loads(query.stdout.strip().splitlines()[-1])
    enums, hooks = found["enums"], found["hooks"]
    query = subprocess.run([sys.executable, "-c", _PARAMS_QUERY, str(library), f"{project.prefix}."],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if query.returncode != 0:
        raise BuildError(f"reading the parameter names of {library.name} failed:\n{query.stdout}")
    params = json.loads(query.stdout.strip().splitlines()[-1])
    for path in sorted((source_root / project.package.replace(".", "/")).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        refined = _refine_stubs(text, enums, hooks, params)
        if refined != text:
            path.write_text(refined, encoding="utf-8")


# ---- stub refinements ---------------------------------------------------------------------
#
# What tvm-ffi-stubgen (0.1.15) writes needs five repairs before a package imports and passes
# `mypy --strict` and `pyright`; each is applied after every stubgen run (stubgen regenerates
# its blocks, so the repairs are idempotent edits of its output):
# 1. enum classes: stubgen imports `IntEnum`/`StrEnum` from `tvm_ffi` (they live in
#    `tvm_ffi.dataclasses`) and registers them with `@register_object`, which skips the enum
#    machinery (`.name`, payload `==`, entries as class attributes). They become
#    `class OpKind(IntEnum, type_key="pkg.OpKind")` with one `Add: ClassVar[OpKind]` per entry
#    (the enum base binds each annotation to the registered singleton at import);
# 2. `Any` used in a signature (`Callable[..., Any]`) without being imported;
# 3. an explicit constructor (`#[ffi(init)]`): stubgen derives `__init__` from the fields, but
#    the runtime's `__init__` forwards to `__ffi_init__`, so `__init__` gets its parameters;
#    a subclass's `__ffi_init__` that differs from its parent's is marked as an override;
# 4. the package's `__init__.py` re-exports `__all__` in a form type checkers can follow;
# 6. parameters: stubgen numbers them (`_0: int`); the SDK registers their names and defaults
#    (metadata `arg_names`, `arg_defaults`), which replace the numbers. Functions and methods
#    stay positional-only (`/`): the runtime's `Function.__call__` takes no keyword arguments.
#    A constructor (`__ffi_init__`, hence `__init__`) takes keywords: the runtime's `__init__`
#    passes them in its KWARGS convention, which the SDK binds by name. The module ends with
#    a call that gives the functions, methods and constructors their `inspect.signature`
#    (`help()`, IDEs) from the same metadata, once at import (no per-call cost).
# 5. a type with comparison hooks (`#[ffi_type(eq, hash, ord)]`, or methods marked
#    `#[ffi(eq)]`, `#[ffi(compare)]`, `#[ffi(hash)]`) is registered with
#    `@c_class(key, eq=True, order=True, unsafe_hash=True)` (the options its hooks call for),
#    so that Python's `==`, `<`, `hash()` call them (`register_object` compares identities).

# For every type under a prefix, run with the built library loaded: the entries (string
# indices, in order) of each enum type, and for each type with comparison hooks the `c_class`
# options that install the Python operators calling them.
_TYPE_QUERY = r"""
import json, sys
import tvm_ffi
from tvm_ffi import core
tvm_ffi.load_module(sys.argv[1])
enums, hooks = {}, {}
for key in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")():
    if not str(key).startswith(sys.argv[2]):
        continue
    index = core._object_type_key_to_index(str(key))
    attr = lambda name: None if index is None else core._lookup_type_attr(index, name)
    state = attr("__ffi_enum__")
    if state is not None:
        enums[str(key)] = [str(entry._str_index) for entry in state.entries]
    eq, compare = attr("__ffi_eq__") is not None, attr("__ffi_compare__") is not None
    hash_ = attr("__ffi_hash__") is not None
    options = []
    if eq or compare:
        options.append("eq=True")
    if compare:
        options.append("order=True")
    if eq or compare or hash_:
        options.append("unsafe_hash=True")
    if options:
        hooks[str(key)] = ", ".join(options)
print(json.dumps({"enums": enums, "hooks": hooks}))
"""

# The registered parameter names and defaults of the functions and methods under a prefix:
# {"pkg.func": {"arg_names": [..], "arg_defaults": {..}}, "pkg.Type.method": {..}}.
_PARAMS_QUERY = r"""
import json, sys
import tvm_ffi
from tvm_ffi import core
tvm_ffi.load_module(sys.argv[1])
out = {}
keep = ("arg_names", "arg_defaults")
for name in tvm_ffi.registry.list_global_func_names():
    if name.startswith(sys.argv[2]):
        meta = tvm_ffi.get_global_func_metadata(name)
        if "arg_names" in meta:
            out[name] = {k: meta[k] for k in keep if k in meta}
for key in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")():
    if not str(key).startswith(sys.argv[2]):
        continue
    info = core._lookup_or_register_type_info_from_type_key(str(key))
    for method in info.methods:
        if "arg_names" in method.metadata:
            out[f"{key}.{method.name}"] = {k: method.metadata[k] for k in keep if k in method.metadata}
print(json.dumps(out))
"""

_ENUM_BASES = {"IntEnum": "_ffi_IntEnum", "StrEnum": "_ffi_StrEnum", "Enum": "_ffi_Enum"}
_REFINED_IMPORTS = "# tvm_ffi_build: names the refined stubs use\n"
_C_CLASS_IMPORT = "from tvm_ffi.dataclasses import c_class as _ffi_c_class\n"


def _refine_stubs(text: str, enums: dict[str, list[str]], hooks: dict[str, str],
                  params: dict[str, dict] | None = None) -> str:
    text = _refine_enum_classes(text, enums)
    text = _refine_hook_classes(text, hooks)
    text = _refine_param_names(text, params or {})
    text = _refine_init_signatures(text)
    text = _refine_signature_block(text)
    text = _refine_export_block(text)
    return _refine_imports(text)


def _refine_enum_classes(text: str, enums: dict[str, list[str]]) -> str:
    # `from tvm_ffi import IntEnum as _ffi_IntEnum, Object as _ffi_Object, ...`: the enum bases
    # move to an import of their own from tvm_ffi.dataclasses.
    def split_import(match: re.Match) -> str:
        names = [n.strip() for n in match.group(1).split(",")]
        enum_names = [n for n in names if n.split(" as ")[0] in _ENUM_BASES]
        if not enum_names:
            return match.group(0)
        rest = [n for n in names if n not in enum_names]
        lines = [f"from tvm_ffi.dataclasses import {', '.join(enum_names)}"]
        if rest:
            lines.append(f"from tvm_ffi import {', '.join(rest)}")
        return "\n".join(lines)

    text = re.sub(r"^from tvm_ffi import (.+)$", split_import, text, flags=re.M)
    for key, entries in enums.items():
        header = re.compile(
            rf'^@_FFI_REG_OBJ\("{re.escape(key)}"\)\nclass (\w+)\((_ffi_\w*Enum)\):$', re.M
        )
        text = header.sub(rf'class \1(\2, type_key="{key}"):', text)
        match = re.search(rf'^class (\w+)\(_ffi_\w*Enum, type_key="{re.escape(key)}"\):$', text,
                          re.M)
        block = f"# tvm-ffi-stubgen(begin): object/{key}\n"
        if match is None or block not in text:
            continue
        cls = match.group(1)
        at = text.index(block) + len(block)
        indent = " " * (len(text[:text.index(block)].rsplit("\n", 1)[-1]))
        fmt_off = f"{indent}# fmt: off\n"
        if text.startswith(fmt_off, at):
            at += len(fmt_off)
        names = [e for e in entries if e.isidentifier() and not keyword.iskeyword(e)]
        declared = "".join(f"{indent}{name}: ClassVar[{cls}]\n" for name in names)
        if not text.startswith(declared, at):
            text = text[:at] + declared + text[at:]
    return text


_STUB_DEF = re.compile(r"^(?P<head> *def (?P<name>\w+)\()(?P<params>.*)(?P<tail>\) -> .*: \.\.\..*)$")


def _split_params(params: str) -> list[str]:
    """`a: int, b: Mapping[str, int], /` split at the top-level commas."""
    out, depth, start = [], 0, 0
    for at, c in enumerate(params):
        depth += 1 if c in "[(" else -1 if c in "])" else 0
        if c == "," and depth == 0:
            out.append(params[start:at].strip())
            start = at + 1
    if params[start:].strip():
        out.append(params[start:].strip())
    return out


def _python_literal(value) -> str:
    return "None" if value is None else repr(value)


def _named_def(line: str, info: dict) -> str:
    """A stub `def` line with its numbered parameters (`_0: int`) renamed and given their
    defaults from `info` (`arg_names`, `arg_defaults`), taking keywords (a method's `self`
    stays positional-only): the runtime's `__init__`/`__ffi_init__` pass keywords in its KWARGS
    convention, and the package's functions and methods take them (`SIGNATURES_HELPER`)."""
    m = _STUB_DEF.match(line)
    if m is None:
        return line
    names, defaults = info.get("arg_names", []), info.get("arg_defaults", {})
    parts = _split_params(m.group("params"))
    out = []
    for part in parts:
        numbered = re.match(r"_(\d+): (.*)$", part)
        if numbered is None or int(numbered.group(1)) >= len(names):
            out.append(part)
            continue
        name = names[int(numbered.group(1))]
        text = f"{name}: {numbered.group(2)}"
        if name in defaults:
            text += f" = {_python_literal(defaults[name])}"
        out.append(text)
    out = [p for p in out if p != "/"]
    if out[:1] == ["self"] and m.group("name") not in ("__init__", "__ffi_init__"):
        out.insert(1, "/")
    return f"{m.group('head')}{', '.join(out)}{m.group('tail')}"


def _refine_param_names(text: str, params: dict[str, dict]) -> str:
    """Names the numbered parameters of the functions and methods stubgen wrote."""
    out = []
    scope = ""  # the prefix of the block being read: `pkg.` (functions) or `pkg.Type.` (methods)
    for line in text.split("\n"):
        block = re.match(r"^\s*# tvm-ffi-stubgen\(begin\): (global|object)/(\S+)$", line)
        if block is not None:
            scope = block.group(2) + "."
        elif re.match(r"^\s*# tvm-ffi-stubgen\(end\)", line):
            scope = ""
        m = _STUB_DEF.match(line)
        if scope and m is not None and f"{scope}{m.group('name')}" in params:
            line = _named_def(line, params[f"{scope}{m.group('name')}"])
        out.append(line)
    return "\n".join(out)


_SIGNATURES_BEGIN = "# tvm_ffi_build(begin): signatures\n"
_SIGNATURES_END = "# tvm_ffi_build(end)\n"

# Sets `__signature__` (what `inspect.signature` and `help()` read) of the module's functions and
# of its classes' methods and explicit constructors, from the names and defaults the SDK
# registers (metadata `arg_names`, `arg_defaults`: literals), and makes the module's functions
# and methods take keywords. The runtime's `Function.__call__` takes positional arguments only;
# each function and member method with named parameters is replaced by a generated Python
# function with those parameters and defaults, which Python binds and which calls the runtime's
# function with every argument in position (a name Python cannot take, or a default before a
# parameter without one, gets a function passing keywords in the runtime's `KWARGS` convention,
# which the Rust binder reads). A method binds the object it is read from as any Python
# function does.
SIGNATURES_HELPER = '''\
def _ffi_parameters(names: list[str], defaults: dict[str, object], scope: dict[str, object]) -> str | None:
    # The parameter list of a generated `def` taking `names`, with `defaults` (stored in
    # `scope`), or None where Python cannot take them: a repeated name, one that is no
    # identifier, a keyword or one of `scope`'s, or a default before a parameter without one.
    import keyword

    first = next((i for i, name in enumerate(names) if name in defaults), len(names))
    if (len(set(names)) != len(names) or not all(name in defaults for name in names[first:])
            or any(not name.isidentifier() or keyword.iskeyword(name) or name in scope
                   or name.startswith("__d") for name in names)):
        return None
    params = []
    for i, name in enumerate(names):
        if name in defaults:
            scope[f"__d{i}"] = defaults[name]
            params.append(f"{name}=__d{i}")
        else:
            params.append(name)
    return ", ".join(params)


def _ffi_signatures(namespace: dict[str, object], prefix: str, lib: object = None) -> None:
    import inspect
    import itertools
    from typing import Any

    import tvm_ffi
    from tvm_ffi import core

    param = inspect.Parameter

    def signature(meta: dict[str, object], keywords: bool) -> inspect.Signature | None:
        names = meta.get("arg_names")
        if not isinstance(names, list):
            return None
        found = meta.get("arg_defaults")
        defaults: dict[str, object] = found if isinstance(found, dict) else {}
        kind = param.POSITIONAL_OR_KEYWORD if keywords else param.POSITIONAL_ONLY
        return inspect.Signature([
            param(str(name), param.POSITIONAL_ONLY if name == "self" else kind,
                  default=defaults.get(str(name), param.empty))
            for name in names
        ])

    marker = core.KWARGS
    pairs = itertools.chain.from_iterable

    def keyword_callable(function: Any, meta: dict[str, Any]) -> Any:
        names = [str(name) for name in meta["arg_names"]]
        scope: dict[str, Any] = {"__f": function}
        params = _ffi_parameters(names, meta.get("arg_defaults") or {}, scope)
        if params is not None:  # `def f(a, b=1): return __f(a, b)`
            if names[:1] == ["self"]:
                params = "self, /" + params[len("self"):]
            exec(f"def call({params}):\\n    return __f({', '.join(names)})\\n", scope)
            call: Any = scope["call"]
        else:
            def with_kwargs(*args: Any, **kwargs: Any) -> Any:
                if kwargs:
                    return function(*args, marker, *pairs(kwargs.items()))
                return function(*args)

            call = with_kwargs

        setattr(call, "__ffi_keywords__", True)  # what a second run over the namespace leaves alone
        return call

    # The runtime's wrapper of a member method (`_member_method_wrapper`): only that one is
    # replaced (a class may define its own method of the name).
    probe: Any = getattr(core, "_member_method_wrapper", None)
    wrapper_code: Any = getattr(probe(len) if probe else None, "__code__", None)

    def is_runtime_wrapper(attr: Any) -> bool:
        code = getattr(attr, "__code__", None)
        return (code is not None and wrapper_code is not None
                and (code.co_filename, code.co_name) == (wrapper_code.co_filename, wrapper_code.co_name))

    # A convenience: a runtime without the metadata API (or objects that refuse attributes, or
    # a name not registered) leaves those functions positional-only and their signatures unset
    # rather than failing the import.
    get_metadata = getattr(tvm_ffi, "get_global_func_metadata", None)
    for name, value in list(namespace.items()):
        try:
            if type(value) is core.Function and value.__chandle__():
                meta = get_metadata(prefix + name) if get_metadata else {}
                sig = signature(meta, True)
                if sig is not None:
                    made = namespace[name] = keyword_callable(value, meta)
                    made.__name__ = made.__qualname__ = name
                    made.__module__ = str(namespace.get("__name__", made.__module__))
                    made.__doc__ = getattr(value, "__doc__", None)
                    setattr(made, "__signature__", sig)
                continue
            if not isinstance(value, type):
                continue
            info = getattr(value, "__tvm_ffi_type_info__", None)
            for method in getattr(info, "methods", None) or []:
                meta = getattr(method, "metadata", None) or {}
                attr = value.__dict__.get(method.name)
                target = getattr(attr, "__func__", attr)
                if getattr(target, "__ffi_keywords__", False):
                    continue  # made by an earlier run over the same class
                if method.name == "__ffi_init__":
                    sig = signature(meta, True)
                    init = value.__dict__.get("__init__")
                    if sig is not None and init is not None:
                        self_param = param("self", param.POSITIONAL_ONLY)
                        sig = sig.replace(parameters=[self_param, *sig.parameters.values()])
                        setattr(init, "__signature__", sig)
                        if target is not None:
                            setattr(target, "__signature__", sig)
                    continue
                static = isinstance(attr, staticmethod) and target is method.func
                member = not static and is_runtime_wrapper(attr)
                usable = type(method.func) is core.Function and bool(method.func.__chandle__())
                sig = signature(meta, usable and (static or member))
                if sig is not None and usable and (static or member):
                    made = keyword_callable(method.func, meta)
                    for key in ("__module__", "__name__", "__qualname__", "__doc__"):
                        if hasattr(target, key):  # the names the runtime gave the method
                            setattr(made, key, getattr(target, key))
                    setattr(value, method.name, made if member else staticmethod(made))
                    target = made
                if sig is not None and target is not None:
                    setattr(target, "__signature__", sig)
        except Exception:
            continue
'''

# Makes `Type(1, 2)` call the type's `__ffi_init__` directly (about a third of the runtime's
# `__init__`, a Python function that copies and normalizes its arguments and then constructs
# through `__init_handle_by_constructor__`). Each eligible class gets a metaclass of its own whose
# `__call__` hands the arguments straight to `__ffi_init__`, keywords in the runtime's `KWARGS`
# convention exactly as the runtime's `__init__` passes them (the object comes back wrapped in
# the class registered for its type, i.e. this one): errors, defaults and keyword binding stay
# those of `__ffi_init__`.
# Eligible: a class registered for its type whose `__init__` is the runtime's generated one and
# for which that `__init__` adds nothing to the call: no `__post_init__`, no init properties, no
# field whose value it converts (fields of a Python `IntEnum`/`StrEnum` type). A Python subclass
# gets the plain metaclass back when it is created, so it constructs as it always did. Anything
# unexpected (another runtime version's internals) leaves the class as it was.
CONSTRUCTORS_HELPER = '''\
def _ffi_fast_constructors(namespace: dict[str, object], lib: object = None) -> None:
    import inspect
    import itertools
    from typing import Any

    import tvm_ffi
    from tvm_ffi import _dunder, core

    base: Any = type(tvm_ffi.Object)
    marker, missing = core.KWARGS, core.MISSING
    pairs = itertools.chain.from_iterable

    def eligible_init(cls: type) -> Any:
        info: Any = cls.__dict__.get("__tvm_ffi_type_info__")
        if info is None or getattr(info, "type_cls", None) is not cls or type(cls) is not base:
            return None
        code: Any = getattr(cls.__dict__.get("__init__"), "__code__", None)
        if code is None or code.co_filename != _dunder._make_init.__code__.co_filename:
            return None
        if hasattr(cls, "__post_init__") or _dunder._collect_init_property_funcs(cls):
            return None
        _, fields = _dunder._init_normalization_fields(info)
        if any(field._is_payload_enum_field() for field in fields.values()):
            return None
        for method in info.methods:
            if method.name == "__ffi_init__":
                return method.func
        return core._lookup_type_attr(info.type_index, "__ffi_init__")

    def generated(cls: Any, make: Any, slow: Any) -> Any:
        # For a Rust constructor (`arg_names`, literal `arg_defaults`): `def Type(a, b=1)`
        # calling `make(a, b)`, Python binding the keywords (a static `__call__` of the
        # metaclass: not given the class); a `MISSING` value (which the runtime's `__init__`
        # drops) takes the general path.
        meta: dict[str, Any] = {}
        for method in cls.__dict__["__tvm_ffi_type_info__"].methods:
            if method.name == "__ffi_init__":
                meta = dict(method.metadata)
        names = [str(name) for name in meta.get("arg_names", ())]
        scope: dict[str, Any] = {"__make": make, "__M": missing, "__slow": slow, "__cls": cls}
        params = _ffi_parameters(names, meta.get("arg_defaults") or {}, scope)
        if not names or params is None:
            return None
        given = ", ".join(names)
        exec(f"def call({params}):\\n"
             f"    if {' or '.join(f'{n} is __M' for n in names)}:\\n"
             f"        return __slow(__cls, {', '.join(f'{n}={n}' for n in names)})\\n"
             f"    return __make({given})\\n", scope)
        call = scope["call"]
        call.__name__ = call.__qualname__ = cls.__name__
        return call

    def fast_metaclass(cls: Any, make: Any) -> Any:
        def __call__(cls: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs:  # as the runtime's `__init__` passes them (`MISSING` values left out)
                if any(value is missing for value in kwargs.values()):
                    kwargs = {k: v for k, v in kwargs.items() if v is not missing}
                return make(*args, marker, *pairs(kwargs.items()))
            return make(*args)

        plain = generated(cls, make, __call__)
        call: Any = __call__ if plain is None else staticmethod(plain)
        try:
            setattr(plain or __call__, "__signature__", inspect.signature(cls.__dict__["__init__"]))
        except (KeyError, TypeError, ValueError):
            pass

        def __init__(sub: Any, *args: Any, **kwargs: Any) -> None:
            base.__init__(sub, *args, **kwargs)
            sub.__class__ = base  # a subclass constructs through its own `__init__`

        return type(f"{cls.__name__}Meta", (base,), {"__call__": call, "__init__": __init__,
                                                     "__module__": cls.__module__})

    for value in list(namespace.values()):
        try:
            if isinstance(value, type) and (make := eligible_init(value)) is not None:
                value.__class__ = fast_metaclass(value, make)
        except (AttributeError, TypeError, ValueError):
            continue
'''


# What the end of a package's `_ffi_api.py` defines (tests and benchmarks run it too).
HELPERS = SIGNATURES_HELPER + "\n\n" + CONSTRUCTORS_HELPER


def _refine_signature_block(text: str) -> str:
    """Appends (or renews) the call of `SIGNATURES_HELPER` at the end of the module that
    loads the library's functions (`_FFI_INIT_FUNC("prefix", __name__)`)."""
    init = re.search(r'^_FFI_INIT_FUNC\("([^"]+)", __name__\)$', text, re.M)
    if init is None:
        return text
    if _SIGNATURES_BEGIN in text:
        start = text.index(_SIGNATURES_BEGIN)
        end = text.index(_SIGNATURES_END, start) + len(_SIGNATURES_END)
        text = text[:start].rstrip("\n") + "\n" + text[end:].lstrip("\n")
    block = (_SIGNATURES_BEGIN + HELPERS
             + f'_ffi_signatures(globals(), "{init.group(1)}.", globals().get("LIB"))\n'
             + '_ffi_fast_constructors(globals(), globals().get("LIB"))\n' + _SIGNATURES_END)
    return text.rstrip("\n") + "\n\n" + block


def _refine_hook_classes(text: str, hooks: dict[str, str]) -> str:
    """`@_FFI_REG_OBJ("key")` becomes `@_ffi_c_class("key", <options>)` for a type with
    comparison hooks (and back, with the options brought up to date, when they change)."""
    def decorator(match: re.Match) -> str:
        key = match.group(1) or match.group(2)
        options = hooks.get(key)
        return f'@_ffi_c_class("{key}", {options})' if options else f'@_FFI_REG_OBJ("{key}")'

    return re.sub(r'^@(?:_FFI_REG_OBJ\("([\w.]+)"\)|_ffi_c_class\("([\w.]+)", [\w=, ]+\))$',
                  decorator, text, flags=re.M)


_DEF = re.compile(r"^(?P<indent> +)def (?P<name>__init__|__ffi_init__)\(self(?P<params>.*)\) -> None: \.\.\.(?P<tail>.*)$",
                  re.M)


def _refine_init_signatures(text: str) -> str:
    classes = list(re.finditer(r"^class (\w+)\(([^)]*)\):$", text, re.M))
    ffi_init: dict[str, str] = {}
    out = []
    last = 0
    for i, cls in enumerate(classes):
        end = classes[i + 1].start() if i + 1 < len(classes) else len(text)
        body = text[cls.start():end]
        defs = {m.group("name"): m.group("params") for m in _DEF.finditer(body)}
        ffi_params = defs.get("__ffi_init__")
        if ffi_params is not None:
            ffi_init[cls.group(1)] = ffi_params
            if "__init__" in defs and defs["__init__"] != ffi_params:
                body = _DEF.sub(lambda m: m.group(0) if m.group("name") != "__init__" else
                                f"{m.group('indent')}def __init__(self{ffi_params}) -> None: ...",
                                body)
            base = cls.group(2).split(",")[0].strip()
            if not base.startswith("_ffi_") and ffi_init.get(base, ffi_params) != ffi_params:
                body = _DEF.sub(lambda m: m.group(0) if m.group("name") != "__ffi_init__" or
                                "type: ignore" in m.group("tail") else
                                m.group(0) + "  # type: ignore[override]", body)
        out.append(text[last:cls.start()] + body)
        last = end
    out.append(text[last:])
    return "".join(out)


def _refine_export_block(text: str) -> str:
    old = ('from ._ffi_api import __all__ as _ffi_api__all__\n'
           'if "__all__" not in globals():\n'
           '    __all__ = []\n'
           '__all__.extend(_ffi_api__all__)\n')
    new = ('from . import _ffi_api\n'
           '__all__ = []  # the library\'s names; append names of your own below the block\n'
           '__all__ += _ffi_api.__all__\n')
    return text.replace(old, new)


def _refine_imports(text: str) -> str:
    """Imports `Any` and `ClassVar` where the refined stubs use them (after stubgen's import
    block, which stubgen rewrites)."""
    end = "# tvm-ffi-stubgen(end)\n"
    start = text.find("# tvm-ffi-stubgen(begin): import-section\n")
    if start < 0:
        return text
    at = text.index(end, start) + len(end)
    if text.startswith(_REFINED_IMPORTS, at):
        at_end = at + len(_REFINED_IMPORTS)
        while text.startswith(("from typing import ", _C_CLASS_IMPORT), at_end):
            at_end = text.index("\n", at_end) + 1
        text = text[:at] + text[at_end:]
    code = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    imported = text[start:at]
    needed = [name for name in ("Any", "ClassVar")
              if re.search(rf"\b{name}\b", code) and not re.search(rf"import .*\b{name}\b", imported)]
    lines = [f"from typing import {', '.join(needed)}\n"] if needed else []
    if re.search(r"^@_ffi_c_class\(", code, re.M):
        lines.append(_C_CLASS_IMPORT)
    if not lines:
        return text
    return text[:at] + _REFINED_IMPORTS + "".join(lines) + text[at:]


# ---- metadata ----------------------------------------------------------------------------


def _metadata(project: _Project) -> str:
    p = project.project
    lines = ["Metadata-Version: 2.1", f"Name: {project.name}", f"Version: {project.version}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    for key, field in (("requires-python", "Requires-Python"), ("keywords", "Keywords")):
        if key in p:
            lines.append(f"{field}: {','.join(p[key]) if isinstance(p[key], list) else p[key]}")
    lic = p.get("license")
    if isinstance(lic, str):
        lines.append(f"License: {lic}")
    elif isinstance(lic, dict) and "text" in lic:
        lines.append(f"License: {lic['text']}")
    for who, field in (("authors", "Author-email"), ("maintainers", "Maintainer-email")):
        emails = [f"{a.get('name', '')} <{a['email']}>".strip() for a in p.get(who, []) if "email" in a]
        if emails:
            lines.append(f"{field}: {', '.join(emails)}")
    for classifier in p.get("classifiers", []):
        lines.append(f"Classifier: {classifier}")
    for label, url in p.get("urls", {}).items():
        lines.append(f"Project-URL: {label}, {url}")
    for dep in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            req, _, marker = dep.partition(";")
            cond = f"({marker.strip()}) and extra == '{extra}'" if marker else f"extra == '{extra}'"
            lines.append(f"Requires-Dist: {req.strip()}; {cond}")
    body = ""
    readme = p.get("readme")
    if readme:
        if isinstance(readme, str):
            readme = {"file": readme}
        text = readme.get("text") or (project.root / readme["file"]).read_text(encoding="utf-8")
        kind = readme.get("content-type") or {
            ".md": "text/markdown", ".rst": "text/x-rst"
        }.get(Path(readme.get("file", "")).suffix, "text/plain")
        lines.append(f"Description-Content-Type: {kind}")
        body = "\n" + text
    return "\n".join(lines) + "\n" + body


def _entry_points(project: _Project) -> str | None:
    groups = dict(project.project.get("entry-points", {}))
    for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
        if project.project.get(key):
            groups[group] = project.project[key]
    if not groups:
        return None
    return "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()) + "\n"
        for group, entries in groups.items()
    )


def _platform_tag(project: _Project) -> str:
    tag = project.setting("platform-tag", "")
    return tag or re.sub(r"[-.]", "_", sysconfig.get_platform())


def _dist_info_files(project: _Project, tag: str) -> dict[str, bytes]:
    info = f"{project.dist}-{project.version}.dist-info"
    files = {
        f"{info}/METADATA": _metadata(project).encode(),
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: {BACKEND} {BACKEND_VERSION}\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n"
        ).encode(),
    }
    entry_points = _entry_points(project)
    if entry_points:
        files[f"{info}/entry_points.txt"] = entry_points.encode()
    return files


def _write_metadata_dir(project: _Project, directory: str) -> str:
    tag = f"py3-none-{_platform_tag(project)}"
    for name, data in _dist_info_files(project, tag).items():
        path = Path(directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return f"{project.dist}-{project.version}.dist-info"


# ---- wheels ------------------------------------------------------------------------------


def _zip_time() -> tuple:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    return time.gmtime(max(epoch, 315532800))[:6]


def _write_wheel(project: _Project, directory: str, files: dict[str, bytes | Path]) -> str:
    tag = f"py3-none-{_platform_tag(project)}"
    name = f"{project.dist}-{project.version}-{tag}.whl"
    entries = dict(sorted(files.items()))
    entries.update(_dist_info_files(project, tag))
    record_name = f"{project.dist}-{project.version}.dist-info/RECORD"
    record = io.StringIO()
    when = _zip_time()
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, content in entries.items():
            data = content.read_bytes() if isinstance(content, Path) else content
            executable = isinstance(content, Path) and os.access(content, os.X_OK)
            info = zipfile.ZipInfo(arcname, when)
            info.external_attr = (0o755 if executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.write(f"{arcname},sha256={digest.decode()},{len(data)}\n")
        record.write(f"{record_name},,\n")
        info = zipfile.ZipInfo(record_name, when)
        info.external_attr = 0o644 << 16
        zf.writestr(info, record.getvalue(), zipfile.ZIP_DEFLATED)
    return name


def _package_files(package_dir: Path, prefix: str) -> dict[str, Path]:
    """The files of a Python package, minus caches and built libraries."""
    files = {}
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir)
        if path.is_dir() or _SKIP_DIRS.intersection(rel.parts) or path.suffix in (".pyc",):
            continue
        if path.name.endswith(_LIB_SUFFIXES):
            continue
        files[f"{prefix}/{rel.as_posix()}"] = path
    return files


def get_requires_for_build_wheel(config_settings=None):
    """Nothing beyond [build-system] requires (apache-tvm-ffi; cargo comes from the machine)."""
    return []


def get_requires_for_build_editable(config_settings=None):
    """As for a wheel."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """As for a wheel."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """Writes the .dist-info directory without building."""
    return _write_metadata_dir(_Project(Path.cwd(), config_settings), metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    """As for a wheel."""
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """cargo build, stubgen on a staged copy of the package, then the wheel."""
    project = _Project(Path.cwd(), config_settings)
    source = project.python_source / project.package
    library = _build_library(project, project.setting("profile", project.profile))
    with tempfile.TemporaryDirectory(prefix=f"{BACKEND}-") as tmp:
        staged = Path(tmp) / project.package
        if source.is_dir():
            shutil.copytree(source, staged, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", *(f"*{s}" for s in _LIB_SUFFIXES)))
        else:
            staged.mkdir()
        staged_lib = staged / library.name
        shutil.copy2(library, staged_lib)
        _stubgen(project, staged.parent, staged_lib)
        files: dict[str, bytes | Path] = dict(_package_files(staged, project.package))
        files[f"{project.package}/{library.name}"] = staged_lib
        return _write_wheel(project, wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """cargo build (dev profile), stubs refreshed in the source tree, a .pth to it."""
    project = _Project(Path.cwd(), config_settings)
    source = project.python_source / project.package
    library = _build_library(project, project.setting("profile", project.editable_profile))
    source.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{BACKEND}-") as tmp:
        # Loaded from a private copy: stubgen must not see a stale library in the package.
        lib_copy = Path(tmp) / library.name
        shutil.copy2(library, lib_copy)
        _stubgen(project, project.python_source, lib_copy)
        files: dict[str, bytes | Path] = {
            f"{project.dist}.pth": (str(project.python_source.resolve()) + "\n").encode(),
            # Where stubgen's loader (`load_lib_module`) looks: the distribution's RECORD.
            # The package itself is imported from the source tree through the .pth file.
            f"{project.package}/{library.name}": lib_copy,
        }
        return _write_wheel(project, wheel_directory, files)


# ---- sdist -------------------------------------------------------------------------------


def _copy_tree(src: Path, dst: Path, out: dict[str, Path], skip_python_libs: bool) -> None:
    """Adds the files under `src` (following symlinks, minus build outputs) to `out`."""
    for dirpath, dirnames, filenames in os.walk(src, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if name.endswith(".pyc") or (skip_python_libs and name.endswith(_LIB_SUFFIXES)):
                continue
            out[(dst / path.relative_to(src)).as_posix()] = path


def _workspace_of(crate_dir: Path) -> dict:
    """The [workspace] table governing `crate_dir` (empty when the crate is its own root)."""
    for parent in [crate_dir, *crate_dir.parents]:
        manifest = parent / "Cargo.toml"
        if manifest.is_file():
            data = tomllib.loads(manifest.read_text(encoding="utf-8"))
            if "workspace" in data:
                # Profiles and patches are top-level tables of the workspace root's manifest.
                extra = {f"_{k}": data[k] for k in ("profile", "patch") if k in data}
                return dict(data["workspace"], _root=parent, **extra)
    return {}


def _resolve_manifest(crate_dir: Path, new_path_of, is_root: bool) -> tuple[dict, dict[str, Path]]:
    """The crate's manifest with workspace inheritance resolved, dev-dependencies dropped and
    path dependencies pointed at `new_path_of(absolute crate dir)`; also the files outside
    the crate that it names (readme, license), to be copied next to it."""
    data = tomllib.loads((crate_dir / "Cargo.toml").read_text(encoding="utf-8"))
    ws = _workspace_of(crate_dir) if "workspace" not in data else {}
    ws_root = ws.get("_root", crate_dir)
    package = data.get("package", {})
    extra: dict[str, Path] = {}
    for key, value in list(package.items()):
        if isinstance(value, dict) and value.get("workspace") is True:
            inherited = ws.get("package", {}).get(key)
            if inherited is None:
                raise BuildError(f"{crate_dir}: `{key}.workspace = true` but the workspace has none")
            if key in ("readme", "license-file"):
                inherited = os.path.relpath(ws_root / inherited, crate_dir)
            package[key] = inherited
    package.pop("workspace", None)
    for key in ("readme", "license-file"):
        value = package.get(key)
        if isinstance(value, str):
            path = (crate_dir / value).resolve()
            if not path.is_relative_to(crate_dir.resolve()) and path.is_file():
                package[key] = path.name
                extra[path.name] = path
    if isinstance(data.get("lints"), dict) and data["lints"].get("workspace") is True:
        data["lints"] = ws.get("lints", {})

    def fix_deps(table: dict) -> None:
        for name, dep in list(table.items()):
            if isinstance(dep, str):
                continue
            base = crate_dir
            if dep.get("workspace") is True:
                inherited = ws.get("dependencies", {}).get(name)
                if inherited is None:
                    raise BuildError(f"{crate_dir}: dependency `{name}` not in [workspace.dependencies]")
                if isinstance(inherited, str):
                    inherited = {"version": inherited}
                local = {k: v for k, v in dep.items() if k != "workspace"}
                features = sorted({*inherited.get("features", []), *local.pop("features", [])})
                dep = {**inherited, **local}
                if features:
                    dep["features"] = features
                base = ws_root
            if "path" in dep:
                dep["path"] = new_path_of((base / dep["path"]).resolve())
            table[name] = dep

    for section in (data, *data.get("target", {}).values()):
        section.pop("dev-dependencies", None)
        for key in ("dependencies", "build-dependencies"):
            if key in section:
                fix_deps(section[key])
    data.pop("workspace", None)
    if is_root:
        # The sdist is its own workspace (the vendored crates below it are its members), with
        # the profiles and patches of the workspace the crate came from.
        data["workspace"] = {}
        for key in ("profile", "patch"):
            if f"_{key}" in ws and key not in data:
                data[key] = ws[f"_{key}"]
    return data, extra


def _toml(data: dict) -> str:
    """A TOML writer for Cargo manifests (tables, arrays, strings, numbers, booleans)."""

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
        raise BuildError(f"cannot write {v!r} to TOML")

    out: list[str] = []

    def table(path: list[str], t: dict, array: bool = False) -> None:
        scalars = {k: v for k, v in t.items() if not _is_table(v) and not _is_table_array(v)}
        if path:
            head = ".".join(key(p) for p in path)
            out.append(f"\n[[{head}]]" if array else f"\n[{head}]")
        out.extend(f"{key(k)} = {value(v)}" for k, v in scalars.items())
        for k, v in t.items():
            if _is_table(v):
                table([*path, k], v)
            elif _is_table_array(v):
                for item in v:
                    table([*path, k], item, array=True)

    table([], data)
    return "\n".join(out).lstrip("\n") + "\n"


def _is_table(v) -> bool:
    return isinstance(v, dict)


def _is_table_array(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def build_sdist(sdist_directory, config_settings=None):
    """The project's files plus its Rust path dependencies under vendor/."""
    project = _Project(Path.cwd(), config_settings)
    base = f"{project.dist}-{project.version}"
    crate_dir = project.manifest.parent
    meta = _cargo_metadata(project.manifest, no_deps=False)
    by_id = {p["id"]: p for p in meta["packages"]}
    root_id = next(p["id"] for p in meta["packages"] if Path(p["manifest_path"]).resolve() == project.manifest)
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    # Path dependencies reachable through normal and build dependencies.
    vendored: dict[Path, str] = {}
    todo, seen = [root_id], {root_id}
    while todo:
        for dep in nodes[todo.pop()]["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            if dep["pkg"] in seen or kinds <= {"dev"}:
                continue
            seen.add(dep["pkg"])
            todo.append(dep["pkg"])
            pkg = by_id[dep["pkg"]]
            if pkg["source"] is None:
                name = pkg["name"]
                if name in vendored.values():
                    name = f"{name}-{pkg['version']}"
                vendored[Path(pkg["manifest_path"]).parent.resolve()] = name

    if crate_dir != project.root:
        raise BuildError("the Cargo manifest must sit next to pyproject.toml for an sdist")
    files: dict[str, Path | bytes] = {}
    _copy_tree(project.root, Path(base), files, skip_python_libs=True)

    def add_crate(directory: Path, at: Path, is_root: bool) -> None:
        def new_path_of(dep_dir: Path) -> str:
            if dep_dir not in vendored:
                raise BuildError(f"path dependency {dep_dir} of {directory} is not vendored")
            return Path(os.path.relpath(Path("vendor") / vendored[dep_dir], at)).as_posix()

        data, extra = _resolve_manifest(directory, new_path_of, is_root)
        files[(Path(base) / at / "Cargo.toml").as_posix()] = _toml(data).encode()
        for name, path in extra.items():
            files[(Path(base) / at / name).as_posix()] = path

    add_crate(crate_dir, Path("."), True)
    files.pop(f"{base}/Cargo.lock", None)
    lock = Path(meta["workspace_root"]) / "Cargo.lock"
    if lock.is_file():
        files[f"{base}/Cargo.lock"] = lock
    for directory, name in vendored.items():
        _copy_tree(directory, Path(base) / "vendor" / name, files, skip_python_libs=False)
        add_crate(directory, Path("vendor") / name, False)
    files[f"{base}/PKG-INFO"] = _metadata(project).encode()

    name = f"{base}.tar.gz"
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arcname, content in sorted(files.items()):
            data = content.read_bytes() if isinstance(content, Path) else content
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            info.mtime = mtime
            info.mode = 0o755 if isinstance(content, Path) and os.access(content, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    return name


# ---- command line ------------------------------------------------------------------------


def _stubs_command(check: bool) -> int:
    """`stubs [--check]`: builds the library (dev profile) and rewrites the stubs of the package
    in place, or with `--check` reports (exit status 1) a package whose files differ from what a
    build writes."""
    project = _Project(Path.cwd(), None)
    library = _build_library(project, project.editable_profile)
    if not check:
        _stubgen(project, project.python_source, library)
        return 0
    with tempfile.TemporaryDirectory(prefix=f"{BACKEND}-") as tmp:
        copy = Path(tmp) / "python"
        shutil.copytree(project.python_source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        _stubgen(project, copy, library)
        stale = [
            path for path in sorted(copy.rglob("*.py"))
            if not (project.python_source / path.relative_to(copy)).is_file()
            or (project.python_source / path.relative_to(copy)).read_text() != path.read_text()
        ]
    for path in stale:
        print(f"stale: {project.python_source / path.relative_to(copy)}", file=sys.stderr)
    return 1 if stale else 0


def _replace_file(source: Path, dest: Path) -> None:
    """Copies `source` over `dest` through a rename: a process that has the old library mapped
    keeps its copy intact."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial")
    shutil.copy2(source, partial)
    os.replace(partial, dest)


def _lib_command(out: Path, release: bool) -> int:
    """`lib --out PATH [--release]`: builds the library and copies it to PATH, under the file
    name a loader expects (cargo names it `lib<crate>.so`; e.g. `--out build/add_one_cpu.so`
    for `tvm_ffi.load_module("build/add_one_cpu.so")`)."""
    project = _Project(Path.cwd(), None)
    library = _build_library(project, "release" if release else project.editable_profile)
    _replace_file(library, out)
    print(out)
    return 0


def _cpp_header_command(out: Path) -> int:
    """`cpp-header --out PATH`: builds the library and writes a C++ header for its types (those
    under the project's prefix) with `tvm_ffi_cpp_header.py`, next to this file: layout structs
    with `static_assert`s and typed accessors, so C++ code reads the objects' fields directly."""
    project = _Project(Path.cwd(), None)
    library = _build_library(project, project.editable_profile)
    generator = Path(__file__).resolve().parents[2] / "tvm-ffi-build" / "tvm_ffi_build" / "cpp_header.py"
    if not generator.exists():
        raise BuildError(f"{generator} is missing: copy it from the SDK's template/build_backend")
    # A process of its own: the generator loads the library.
    run = subprocess.run([sys.executable, str(generator), str(library), "--prefix",
                          project.prefix + ".", "--out", str(out)])
    if run.returncode == 0:
        print(out)
    return run.returncode


def _develop_command() -> int:
    """`develop`: after `pip install -e .`, rebuilds the library (dev profile), rewrites the
    stubs and replaces the library that the editable install put where `import` loads it: the
    whole `pip install -e .` without pip."""
    from importlib import metadata  # noqa: PLC0415

    project = _Project(Path.cwd(), None)
    try:
        dist = metadata.distribution(project.name)
    except metadata.PackageNotFoundError:
        raise BuildError(f"{project.name} is not installed here: run `pip install -e .` first")
    library = _build_library(project, project.editable_profile)
    installed = [f for f in dist.files or [] if f.name == library.name]
    if not installed:
        raise BuildError(f"{project.name} is installed without {library.name}: run `pip install -e .`")
    with tempfile.TemporaryDirectory(prefix=f"{BACKEND}-") as tmp:
        lib_copy = Path(tmp) / library.name
        shutil.copy2(library, lib_copy)
        _stubgen(project, project.python_source, lib_copy)
    _replace_file(library, Path(dist.locate_file(installed[0])))
    return 0


USAGE = f"""usage (in the project directory): python {Path(__file__).name} COMMAND
  develop              after `pip install -e .`: rebuild the library, rewrite the stubs, reinstall
  lib --out PATH [--release]
                       build the library and copy it to PATH (e.g. build/add_one_cpu.so)
  stubs [--check]      rewrite the stubs (or check that they are current)
  cpp-header --out PATH
                       write a C++ header for the library's types (layouts, typed accessors)"""


def _main(argv: list[str]) -> int:
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command == "develop" and not args:
        return _develop_command()
    if command == "stubs" and set(args) <= {"--check"}:
        return _stubs_command("--check" in args)
    if command == "cpp-header" and len(args) == 2 and args[0] == "--out":
        return _cpp_header_command(Path(args[1]))
    if command == "lib" and "--out" in args[:-1]:
        rest = [a for a in args if a != "--release"]
        if len(rest) == 2 and rest[0] == "--out":
            return _lib_command(Path(rest[1]), "--release" in args)
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(_main(sys.argv[1:]))
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
