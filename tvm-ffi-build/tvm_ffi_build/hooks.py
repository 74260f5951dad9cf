"""The hatchling plugins (entry point group `hatch`): the build hook and the `cargo` version source."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import tomli_w
from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from hatchling.plugin import hookimpl
from hatchling.version.source.plugin.interface import VersionSourceInterface

from .project import BuildError, Project, build_library, cargo_version, path_dependencies, platform_tag, standalone_manifest, workspace_of
from .stubs import stubgen

_SKIP = shutil.ignore_patterns("target", ".git", "__pycache__", "*.pyc", "*.so", "*.dylib", "*.dll", "*.pyd")


class CargoVersionSource(VersionSourceInterface):
    """`[project] dynamic = ["version"]`: the crate's version, in PEP 440 spelling."""

    PLUGIN_NAME = "cargo"

    def get_version_data(self) -> dict[str, Any]:
        return {"version": cargo_version(Project(Path(self.root)).manifest)}


class TvmFfiBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Wheel: cargo builds the library, stubgen writes the stubs, both go into the package
    (`py3-none-<platform>`: the library never touches the Python ABI). Editable: the stubs are
    rewritten in the source tree and the library is installed where the package's loader looks
    (the distribution's RECORD). Sdist: the crate's path dependencies under `vendor/`."""

    PLUGIN_NAME = "tvm-ffi"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        project = Project(Path(self.root))
        self._tmp = Path(tempfile.mkdtemp(prefix="tvm-ffi-build-"))
        if self.target_name == "sdist":
            build_data["force_include"].update(self._vendor(project))
            return
        editable = version == "editable"
        profile = self.config.get("profile") or (project.editable_profile if editable else project.profile)
        library = build_library(project, profile)
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{self.config.get('platform-tag') or platform_tag()}"
        lib_copy = self._tmp / library.name  # stubgen must not load a stale library in the package
        shutil.copy2(library, lib_copy)
        if editable:
            stubgen(project, project.python_source, lib_copy)
            build_data["force_include_editable"] = {str(lib_copy): f"{project.package_path}/{library.name}"}
            return
        staged = self._tmp / "staged" / project.package_path
        shutil.copytree(project.package_dir, staged, ignore=_SKIP)
        stubgen(project, self._tmp / "staged", lib_copy)
        build_data["force_include"][str(staged)] = project.package_path
        build_data["force_include"][str(lib_copy)] = f"{project.package_path}/{library.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _vendor(self, project: Project) -> dict[str, str]:
        """Every path dependency of the crate copied under `vendor/`, each Cargo.toml standing
        alone (workspace inheritance resolved, path dependencies pointed into `vendor/`), so
        that the sdist builds anywhere, offline, into the same wheel."""
        crate_dir = project.manifest.parent
        if crate_dir != project.root:
            raise BuildError("the Cargo manifest must sit next to pyproject.toml for an sdist")
        vendored = path_dependencies(project.manifest)
        out: dict[str, str] = {}
        for directory, at in [(crate_dir, "."), *((d, f"vendor/{n}") for d, n in vendored.items())]:
            def new_path(dep: Path, at: str = at) -> str:
                return Path(os.path.relpath(f"vendor/{vendored[dep]}", at)).as_posix()

            data, extra = standalone_manifest(directory, new_path, at == ".")
            stage = self._tmp / at
            if at != ".":
                shutil.copytree(directory, stage, ignore=_SKIP)
            stage.mkdir(parents=True, exist_ok=True)
            (stage / "Cargo.toml").write_text(tomli_w.dumps(data))
            for name, path in extra.items():
                shutil.copy2(path, stage / name)
            out.update({str(stage / name): name for name in ["Cargo.toml", *extra]} if at == "." else {str(stage): at})
        lock = workspace_of(crate_dir)[0] / "Cargo.lock"
        if lock.is_file():
            out[str(lock)] = "Cargo.lock"
        return out


@hookimpl
def hatch_register_build_hook() -> type[BuildHookInterface]:  # type: ignore[type-arg]
    return TvmFfiBuildHook


@hookimpl
def hatch_register_version_source() -> type[VersionSourceInterface]:
    return CargoVersionSource
