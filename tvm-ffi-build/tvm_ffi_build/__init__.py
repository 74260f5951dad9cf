"""tvm-ffi-build: the PEP 517 / PEP 660 build backend of Python packages whose library is a Rust
crate written with the tvm-ffi Rust SDK (`build-backend = "tvm_ffi_build"`).

It is hatchling (which writes the wheels, RECORD files, editable installs and sdists) with the
`tvm-ffi` build hook and the `cargo` version source preconfigured, so a package's pyproject.toml
needs no `[tool.hatch]` table: `[tool.tvm-ffi-build]` (all optional) says where things are:

    python-source = "python"     # holds the package directory
    package = "my_package"       # the Python package the library goes into
    manifest = "Cargo.toml"      # the crate with crate-type = ["cdylib"]
    profile = "release"          # cargo profile of wheels (`editable-profile`: "dev")
    prefix = "my_package"        # the registry prefix of the package's types and functions
    stubgen-imports = []         # modules stubgen imports first (parents' types)

A `[tool.hatch...]` setting of the package's own wins over these defaults. Config settings
(`pip wheel --config-settings KEY=VALUE`): `profile`, `platform-tag`.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from hatchling.builders.sdist import SdistBuilder
from hatchling.builders.wheel import WheelBuilder

from .project import Project

__all__ = ["build_editable", "build_sdist", "build_wheel", "get_requires_for_build_editable",
           "get_requires_for_build_sdist", "get_requires_for_build_wheel"]


def _config(settings: dict[str, Any] | None) -> dict[str, Any]:
    """pyproject.toml with the hook, the version source and the package's location filled in."""
    project = Project(Path.cwd())
    data = copy.deepcopy(project.pyproject)
    hatch = data.setdefault("tool", {}).setdefault("hatch", {})
    build = hatch.setdefault("build", {})
    hook = build.setdefault("hooks", {}).setdefault("tvm-ffi", {})
    hook.update({k: v[-1] if isinstance(v, list) else v for k, v in (settings or {}).items()})
    if "version" in data.get("project", {}).get("dynamic", []):
        hatch.setdefault("version", {}).setdefault("source", "cargo")
    wheel = build.setdefault("targets", {}).setdefault("wheel", {})
    source = project.python_source.relative_to(project.root).as_posix()
    wheel.setdefault("exclude", ["*"])  # the hook adds the package (stubs written) and the library
    wheel.setdefault("dev-mode-dirs", [source])  # editable: a .pth file naming python-source
    build.setdefault("targets", {}).setdefault("sdist", {}).setdefault("exclude", ["/target", "/dist", "*.so", "_ffi_helpers.py"])
    return data


def _build(builder: Any, directory: str, version: str) -> str:
    return os.path.basename(str(next(builder.build(directory=directory, versions=[version]))))


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    return _build(WheelBuilder(os.getcwd(), config=_config(config_settings)), wheel_directory, "standard")


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    return _build(WheelBuilder(os.getcwd(), config=_config(config_settings)), wheel_directory, "editable")


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return _build(SdistBuilder(os.getcwd(), config=_config(config_settings)), sdist_directory, "standard")


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []  # [build-system] requires has it all (cargo comes from the machine)


get_requires_for_build_editable = get_requires_for_build_sdist = get_requires_for_build_wheel
