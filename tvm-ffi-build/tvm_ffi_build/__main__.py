"""`python -m tvm_ffi_build COMMAND`, in the package's directory (the one with pyproject.toml)."""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from .project import BuildError, Project, build_library
from .stubs import stubgen


def _replace(source: Path, dest: Path) -> None:
    """Copies through a rename: a process that has the old library mapped keeps it intact."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.partial")
    shutil.copy2(source, partial)
    os.replace(partial, dest)


def develop(project: Project) -> int:
    """After `pip install -e .`: the rebuild, the stubs and the installed library replaced."""
    try:
        dist = metadata.distribution(project.name)
    except metadata.PackageNotFoundError:
        raise BuildError(f"{project.name} is not installed here: run `pip install -e .` first") from None
    library = build_library(project, project.editable_profile)
    installed = [f for f in dist.files or [] if f.name == library.name]
    if not installed:
        raise BuildError(f"{project.name} is installed without {library.name}: run `pip install -e .`")
    with tempfile.TemporaryDirectory() as tmp:
        stubgen(project, project.python_source, Path(shutil.copy2(library, tmp)))
    _replace(library, Path(str(dist.locate_file(installed[0]))))
    return 0


def stubs(project: Project, check: bool) -> int:
    """Rewrites the package's stubs in place or, with `--check`, lists (exit status 1) the
    files that differ from what a build writes."""
    library = build_library(project, project.editable_profile)
    if not check:
        stubgen(project, project.python_source, library)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "python"
        shutil.copytree(project.python_source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        stubgen(project, copy, library)
        stale = [p for p in sorted(copy.rglob("*.py")) if not (project.python_source / p.relative_to(copy)).is_file()
                 or not filecmp.cmp(p, project.python_source / p.relative_to(copy), shallow=False)]
    for path in stale:
        print(f"stale: {project.python_source / path.relative_to(copy)}", file=sys.stderr)
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm_ffi_build")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("develop", help="after `pip install -e .`: rebuild the library, rewrite the stubs, reinstall")
    check = commands.add_parser("stubs", help="rewrite the stubs (or check that they are current)")
    check.add_argument("--check", action="store_true")
    lib = commands.add_parser("lib", help="build the library and copy it to PATH (e.g. build/add_one_cpu.so)")
    lib.add_argument("--out", required=True, type=Path)
    lib.add_argument("--release", action="store_true")
    header = commands.add_parser("cpp-header", help="write a C++ header for the library's types")
    header.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    project = Project(Path.cwd())
    if args.command == "develop":
        return develop(project)
    if args.command == "stubs":
        return stubs(project, args.check)
    library = build_library(project, "release" if getattr(args, "release", False) else project.editable_profile)
    if args.command == "lib":
        _replace(library, args.out)
    else:  # a process of its own: the generator loads the library
        cmd = [sys.executable, "-m", "tvm_ffi_build.cpp_header", str(library), "--prefix", f"{project.prefix}."]
        if subprocess.run([*cmd, "--out", str(args.out)]).returncode != 0:
            return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BuildError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
