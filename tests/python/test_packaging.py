"""Shipping: `examples/point` and the template as pip-installable Python packages.

The build backend is `tvm-ffi-build` (this repository's `tvm-ffi-build/`, a hatchling build hook).
Builds run as a user's would: pip with build isolation, no `.venv`, no `TVM_FFI_LIBDIR`; pip
reads the pinned runtime wheel and the backend's dependencies from a local wheelhouse (filled
once from PyPI) and the backend from a wheel of this checkout (built for each session, as a user
does before the tool is published), and cargo builds into `target/packaging-<digest>` so that
later runs reuse the compiled dependencies.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

import pytest

from conftest import ROOT

WHEELHOUSE = ROOT / "target" / "wheelhouse"


def _packaging_target():
    """`target/packaging-<digest of the sources the packages vendor>`. The sdist writes its files
    with one fixed mtime (reproducible archives), which cargo's mtime-based freshness cannot
    tell apart: a target directory reused across source changes would link stale vendored
    crates. One directory per source state (older ones removed) keeps the reuse safe."""
    import hashlib
    digest = hashlib.sha256()
    for crate in ("tvm-ffi", "tvm-ffi-sys", "tvm-ffi-macros", "examples/point", "template"):
        for path in sorted((ROOT / crate).rglob("*")):
            rel = path.relative_to(ROOT)
            if path.is_file() and not {"target", "__pycache__", "build", "dist"} & set(rel.parts):
                digest.update(str(rel).encode() + b"\0" + path.read_bytes())
    target = ROOT / "target" / f"packaging-{digest.hexdigest()[:16]}"
    for old in (ROOT / "target").glob("packaging*"):
        if old != target:
            shutil.rmtree(old, ignore_errors=True)
    return target


CARGO_TARGET = _packaging_target()
POINT = ROOT / "examples" / "point"
TEMPLATE = ROOT / "template"
PINNED = "apache-tvm-ffi==0.1.15.post2"
# The backend's own requirements (tvm-ffi-build/pyproject.toml), at the versions .venv pins.
BACKEND_REQUIREMENTS = ["hatchling==1.33.0", "tomli-w==1.2.0", "pyelftools==0.33"]
PLATFORM = re.sub(r"[-.]", "_", sysconfig.get_platform())


def run(cmd, **kwargs):
    """Runs `cmd`, failing the test with its output when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def user_env():
    """A user's environment: no virtual env, no TVM_FFI_LIBDIR; packages from the wheelhouse."""
    if not list(WHEELHOUSE.glob("apache_tvm_ffi-0.1.15.post2-*.whl")) or not list(
            WHEELHOUSE.glob("hatchling-1.33.0-*.whl")):
        run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
             PINNED, *BACKEND_REQUIREMENTS, "-d", str(WHEELHOUSE)])
    # tvm-ffi-build from this checkout (not published yet): the README's `pip wheel` recipe.
    for old in WHEELHOUSE.glob("tvm_ffi_build-*.whl"):
        old.unlink()
    run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "-w", str(WHEELHOUSE), str(ROOT / "tvm-ffi-build")])
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "TVM_FFI_LIBDIR", "PYTHONPATH", "CARGO_TARGET_DIR")}
    env.update(
        CARGO_TARGET_DIR=str(CARGO_TARGET),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(WHEELHOUSE),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def pip(env, *args):
    return run([sys.executable, "-m", "pip", *args], env=env)


def fresh_venv(path: pathlib.Path, env) -> pathlib.Path:
    """A new virtual environment (pip drives it from outside with `--python`)."""
    run([sys.executable, "-m", "venv", "--without-pip", str(path)], env=env)
    return path / "bin" / "python"


def run_script(python: pathlib.Path, script: str, cwd: pathlib.Path):
    """Runs `script` with `python` in `cwd` (not the source tree); it must print only `ok`."""
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": os.environ["PATH"]})
    assert proc.returncode == 0, proc.stderr
    assert (proc.stdout, proc.stderr) == ("ok\n", ""), (proc.stdout, proc.stderr)


def dynamic_section(library: pathlib.Path) -> str:
    return run(["readelf", "-d", str(library)]).stdout


@pytest.fixture(scope="module")
def point_wheel(user_env, tmp_path_factory) -> pathlib.Path:
    """`pip wheel ./examples/point`: the wheel a user's `pip install ./examples/point` installs."""
    out = tmp_path_factory.mktemp("wheel")
    pip(user_env, "wheel", "--no-deps", "-w", str(out), str(POINT))
    (wheel,) = out.glob("*.whl")
    return wheel


def test_point_wheel_is_tagged_for_the_platform_and_ships_only_the_package(point_wheel, tmp_path):
    assert point_wheel.name == f"my_ext-0.1.0-py3-none-{PLATFORM}.whl"
    with zipfile.ZipFile(point_wheel) as whl:
        assert sorted(whl.namelist()) == [
            "my_ext-0.1.0.dist-info/METADATA",
            "my_ext-0.1.0.dist-info/RECORD",
            "my_ext-0.1.0.dist-info/WHEEL",
            "my_ext/__init__.py",
            "my_ext/_ffi_api.py",
            "my_ext/_ffi_helpers.py",
            "my_ext/libtvm_ffi_example_point.so",
            "my_ext/py.typed",
        ]
        metadata = whl.read("my_ext-0.1.0.dist-info/METADATA").decode()
        wheel_info = whl.read("my_ext-0.1.0.dist-info/WHEEL").decode()
        api = whl.read("my_ext/_ffi_api.py").decode()
        helpers = whl.read("my_ext/_ffi_helpers.py").decode()
        whl.extract("my_ext/libtvm_ffi_example_point.so", tmp_path)
    assert "Requires-Dist: apache-tvm-ffi<0.2,>=0.1.14\n" in metadata  # hatchling sorts them
    # The helpers `_ffi_api.py` imports: the backend's module, copied (nothing of the backend is
    # needed at run time).
    assert helpers == (ROOT / "tvm-ffi-build" / "tvm_ffi_build" / "ffi_helpers.py").read_text()
    assert "from ._ffi_helpers import signatures as _ffi_signatures" in api
    assert f"Tag: py3-none-{PLATFORM}\n" in wheel_info
    assert "Root-Is-Purelib: false\n" in wheel_info
    # The stubs tvm-ffi-stubgen wrote from the built library.
    for line in [
        'LIB = _FFI_LOAD_LIB("my_ext", "tvm_ffi_example_point")',
        '@_FFI_REG_OBJ("my_ext.Point")',
        "class Point3(Point):",
        "        def __init__(self, x: int, y: int = ..., *, label: str = ...) -> None: ...",
        "        def norm2(self, /) -> int: ...",
        # Parameter names and defaults registered by the SDK; functions and methods take
        # keywords (the package's `KeywordFunction`s and keyword methods), `self` does not.
        "    def add(a: int, b: int) -> int: ...",
        "    def shift(x: int, by: int = 1) -> int: ...",
        "        def at(x: int, y: int = 0) -> Point: ...",
        "        def moved(self, /, dx: int, dy: int = 0) -> Point: ...",
        # Enums: classes of the runtime's enum bases, one typed attribute per variant.
        "from tvm_ffi.dataclasses import IntEnum as _ffi_IntEnum, StrEnum as _ffi_StrEnum",
        'class Marker(_ffi_IntEnum, type_key="my_ext.Marker"):',
        "    Dot: ClassVar[Marker]\n    Cross: ClassVar[Marker]\n",
        'class Color(_ffi_StrEnum, type_key="my_ext.Color"):',
        "    red: ClassVar[Color]\n    green: ClassVar[Color]\n",
        # An explicit constructor: `__init__` takes what `__ffi_init__` takes, keywords too.
        "        def __init__(self, lo: float, hi: float) -> None: ...",
    ]:
        assert line in api, line
    dynamic = dynamic_section(tmp_path / "my_ext" / "libtvm_ffi_example_point.so")
    assert "Shared library: [libtvm_ffi.so]" in dynamic
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, dynamic
    assert "NODELETE" in dynamic, dynamic


def test_point_wheel_installs_into_a_fresh_venv(point_wheel, user_env, tmp_path):
    python = fresh_venv(tmp_path / "venv", user_env)
    pip(user_env, "--python", str(python), "install", str(point_wheel))  # + apache-tvm-ffi
    run_script(python, f"""
import copy, pickle, sys
import my_ext
assert my_ext.__file__.startswith({str(tmp_path / "venv")!r}), my_ext.__file__
p = my_ext.Point(3, label="a")
assert (p.x, p.y, p.label, p.norm2()) == (3, 7, "a", 58)
p.x = 4
q = pickle.loads(pickle.dumps(p))
assert type(q) is my_ext.Point and not q.same_as(p) and (q.x, q.y, q.label) == (4, 7, "a")
assert copy.deepcopy(p).norm2() == 65
r = p.lift(2)
assert type(r) is my_ext.Point3 and r.norm2_3d() == 69 and isinstance(my_ext.Point.origin(), my_ext.Point)
assert my_ext.Interval(1.0, 3.5).length() == 2.5 and my_ext.Interval(hi=3.5, lo=1.0).length() == 2.5
assert my_ext.shift(1) == 2 and my_ext.shift(1, 5) == 6 and p.moved(1).y == p.y
assert my_ext.shift(1, by=5) == 6 and my_ext.add(b=2, a=40) == 42 and my_ext.Point.at(1, y=2).y == 2
assert my_ext.add.__name__ == "add"  # the helper's keyword function
assert p.moved(1, dy=2).y == p.y + 2 and p.moved(dy=2, dx=1).x == p.x + 1
# Enums: named entries, values, and the singletons functions take and return.
assert my_ext.Marker.Dot.value == 1 and my_ext.Marker.Cross.name == "Cross"
assert my_ext.Marker(2).same_as(my_ext.Marker.Cross) and list(my_ext.Marker) == [my_ext.Marker.Dot, my_ext.Marker.Cross]
assert my_ext.Color.red.value == "red" and my_ext.Color("green").same_as(my_ext.Color.green)
assert my_ext.describe_marker(my_ext.Marker.Cross, my_ext.Color.green) == "green Cross"
# A str entry whose value is no name binds by its Rust name; enum defaults, values convert.
assert my_ext.Color.dark_blue.value == "dark blue" and my_ext.Color("dark blue").same_as(my_ext.Color.dark_blue)
assert my_ext.describe_marker() == "green Dot" and my_ext.describe_marker(color="red") == "red Dot"
assert my_ext.describe_marker(color=my_ext.Color.dark_blue, marker=2) == "dark blue Cross"
# Enum fields set by a constructor, from entries or their values.
assert my_ext.Stroke(my_ext.Marker.Cross).color.same_as(my_ext.Color.green)
assert my_ext.Stroke(2, "dark blue").marker.same_as(my_ext.Marker.Cross)
try:
    my_ext.Interval(2.0, 1.0)
    raise AssertionError("no error")
except ValueError as err:
    assert str(err) == "empty interval: lo=2 > hi=1", err
assert my_ext.add(40, 2) == 42 and my_ext.greet("pip") == "hello, pip"
assert my_ext.apply_twice(lambda x: x * 3, 2) == 18
assert my_ext.Options(1).title == "untitled"
print("ok")
""", cwd=tmp_path)


# A user's module typed against the installed package: what `mypy --strict` and `pyright` see.
TYPED_USER_CODE = """
import my_ext
from my_ext import Color, Interval, Marker, Point

p: Point = Point(3, label="a")
n: int = p.norm2()
q: Point = p.scale(2)
marker: Marker = Marker.Cross
color: Color = Color.red
text: str = my_ext.describe_marker(marker, color)
default_text: str = my_ext.describe_marker(color=Color.dark_blue)
# An enum parameter takes the enum's values too (run time converts them).
by_value: str = my_ext.describe_marker(2, "dark blue")
stroke: my_ext.Stroke = my_ext.Stroke(Marker.Dot, "red")
stroke_color: Color = stroke.color
total: int = my_ext.apply_twice(lambda x: x + 1, 1)
length: float = Interval(1.0, 2.0).length()
keyword_length: float = Interval(lo=1.0, hi=2.0).length()
shifted: int = my_ext.shift(1) + my_ext.shift(1, 2) + my_ext.shift(x=1, by=2)
at: Point = Point.at(1, y=2)
moved: Point = p.moved(1) if p.moved(1, 2) else p.moved(dx=1, dy=2)
# A type with comparison hooks: its stub class has `==`, `<` and `hash()`.
from my_ext import Version  # noqa: E402
newer: bool = Version(1, 2) < Version(1, 3, patch=1) and hash(Version(1, 2)) == hash(Version(1, 2))
latest: Version | None = my_ext.newest([Version(1, 2)])
"""


def test_point_wheel_stubs_type_check_under_mypy_strict_and_pyright(point_wheel, user_env,
                                                                   tmp_path):
    python = fresh_venv(tmp_path / "venv", user_env)
    pip(user_env, "--python", str(python), "install", str(point_wheel))
    installed = next((tmp_path / "venv").glob("lib/python*/site-packages/my_ext"))
    (tmp_path / "user.py").write_text(TYPED_USER_CODE)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", str(tmp_path))}
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
         str(python), "-p", "my_ext"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    mypy_user = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable",
         str(python), "user.py"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert mypy_user.returncode == 0, mypy_user.stdout + mypy_user.stderr
    pyright = subprocess.run(
        [str(pathlib.Path(sys.executable).parent / "pyright"), "--pythonpath", str(python),
         str(installed), "user.py"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert pyright.returncode == 0, pyright.stdout + pyright.stderr
    assert "0 errors, 0 warnings" in pyright.stdout, pyright.stdout


def build_sdist(project: pathlib.Path, out: pathlib.Path, env) -> pathlib.Path:
    """The backend's `build_sdist` hook, called as a PEP 517 frontend would."""
    name = run([sys.executable, "-c",
                "import sys, tvm_ffi_build; print(tvm_ffi_build.build_sdist(sys.argv[1]))", str(out)],
               cwd=project, env=env).stdout.strip()
    return out / name


def test_point_sdist_vendors_the_runtime_crates_and_builds_the_same_wheel(
        point_wheel, user_env, tmp_path):
    sdist = build_sdist(POINT, tmp_path, user_env)
    assert sdist.name == "my_ext-0.1.0.tar.gz"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        manifest = tar.extractfile("my_ext-0.1.0/Cargo.toml").read().decode()
        runtime = tar.extractfile("my_ext-0.1.0/vendor/tvm-ffi-sdk/Cargo.toml").read().decode()
    for name in ["PKG-INFO", "pyproject.toml", "Cargo.lock", "build.rs", "src/lib.rs",
                 "python/my_ext/_ffi_api.py",
                 "vendor/tvm-ffi-sdk/src/lib.rs", "vendor/tvm-ffi-sdk/README.md",
                 "vendor/tvm-ffi-sdk-sys/build.rs", "vendor/tvm-ffi-sdk-macros/src/lib.rs"]:
        assert f"my_ext-0.1.0/{name}" in names, name
    assert not [n for n in names if "/target/" in n or n.endswith((".so", ".pyc", "_ffi_helpers.py"))]
    # Workspace inheritance resolved, path dependencies pointed into vendor/.
    assert ".workspace" not in manifest and "workspace = true" not in manifest
    assert '[dependencies.tvm-ffi-sdk]\npath = "vendor/tvm-ffi-sdk"\nversion = "0.1.0"' in manifest
    assert '[dependencies.tvm-ffi-sdk-sys]\npath = "../tvm-ffi-sdk-sys"' in runtime
    assert ('[dependencies.tvm-ffi-sdk-macros]\npath = "../tvm-ffi-sdk-macros"\nversion = "=0.1.0"'
            in runtime)

    # pip unpacks the sdist outside this repository: no .venv above it to find libtvm_ffi in;
    # cargo may not use the network: everything the build needs is vendored or in its cache.
    out = tmp_path / "wheel"
    pip({**user_env, "CARGO_NET_OFFLINE": "true"}, "wheel", "--no-deps", "-w", str(out), str(sdist))
    (wheel,) = out.glob("*.whl")
    assert wheel.name == point_wheel.name
    with zipfile.ZipFile(wheel) as a, zipfile.ZipFile(point_wheel) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            if not name.endswith((".so", "RECORD")):  # the library embeds its source paths
                assert a.read(name) == b.read(name), name
        a.extract("my_ext/libtvm_ffi_example_point.so", tmp_path)
    dynamic = dynamic_section(tmp_path / "my_ext" / "libtvm_ffi_example_point.so")
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic and "NODELETE" in dynamic


def copy_template(dest: pathlib.Path, name: str) -> pathlib.Path:
    """The README's steps: copy, rename `my_package`, point at the runtime crate."""
    shutil.copytree(TEMPLATE, dest, ignore=shutil.ignore_patterns("target", "__pycache__"))
    for path in dest.rglob("*"):
        if path.is_file() and "my_package" in path.read_text():
            path.write_text(path.read_text().replace("my_package", name))
    (dest / "python" / "my_package").rename(dest / "python" / name)
    manifest = dest / "Cargo.toml"
    text = manifest.read_text()
    assert 'path = "../tvm-ffi"' in text
    manifest.write_text(text.replace('path = "../tvm-ffi"', f'path = "{ROOT / "tvm-ffi"}"'))
    shutil.copy(ROOT / "Cargo.lock", dest)  # the versions this repository is tested with
    return dest


def test_template_copy_installs_editable_with_stubs_written_at_build_time(user_env, tmp_path):
    project = copy_template(tmp_path / "acme_geo", "acme_geo")
    # The README's first step: the example type replaced by one of the user's (here renamed).
    lib_rs = project / "src" / "lib.rs"
    lib_rs.write_text(lib_rs.read_text().replace("Counter", "Tally"))
    # A function and a type added after the copy: the build writes their stubs.
    with (project / "src" / "lib.rs").open("a") as lib:
        lib.write("""
/// Added after the copy.
#[ffi_func(name = "acme_geo.twice")]
pub fn twice(x: i64) -> i64 {
    2 * x
}

/// A type added after the copy.
#[derive(Object, Clone)]
#[ffi_type(key = "acme_geo.Tag")]
#[repr(C)]
pub struct Tag {
    pub text: tvm_ffi::String,
}
""")
    api = project / "python" / "acme_geo" / "_ffi_api.py"
    assert not api.exists()  # the first build writes it
    python = fresh_venv(tmp_path / "venv", user_env)
    pip(user_env, "--python", str(python), "install", "-e", str(project))
    # The user's environment has the tool too, for its commands (`develop`, `lib`).
    pip(user_env, "--python", str(python), "install", "tvm-ffi-build")
    # The stubs were refreshed in the source tree, from the library just built.
    stubs = api.read_text()
    for line in ["    def twice(x: int) -> int: ...",
                 '@_FFI_REG_OBJ("acme_geo.Tag")\nclass Tag(_ffi_Object):',
                 "    text: str\n",
                 "        def __init__(self, text: str) -> None: ..."]:
        assert line in stubs, line
    (project / "python" / "acme_geo" / "extra.py").write_text("VALUE = 7\n")
    run_script(python, f"""
import pickle
import acme_geo
from acme_geo.extra import VALUE
assert acme_geo.__file__ == {str(project / "python" / "acme_geo" / "__init__.py")!r}
assert VALUE == 7  # the source tree is what Python imports
c = acme_geo.Tally("c")
assert (c.name, c.count, c.add(2), c.count) == ("c", 0, 2, 2)
assert pickle.loads(pickle.dumps(c)).count == 2
assert c.add(n=3) == 5  # a method by keyword
assert acme_geo.Tally.starting_at("s", 5).add(1) == 6
assert acme_geo.Tally.starting_at(name="s", start=5).count == 5
assert not hasattr(acme_geo, "Counter")
assert acme_geo.greet("world") == "hello, world" and acme_geo.twice(21) == 42
assert type(acme_geo.Tag("t")) is acme_geo.Tag and acme_geo.Tag("t").text == "t"
print("ok")
""", cwd=tmp_path)

    # The dev loop: a Rust change, then the one rebuild command instead of `pip install -e .`.
    with (project / "src" / "lib.rs").open("a") as lib:
        lib.write("""
/// Added after the editable install.
#[ffi_func(name = "acme_geo.thrice")]
pub fn thrice(x: i64) -> i64 {
    3 * x
}
""")
    backend = ["-m", "tvm_ffi_build"]
    run([str(python), *backend, "develop"], cwd=project, env=user_env)
    assert "    def thrice(x: int) -> int: ..." in api.read_text()
    run_script(python, """
import acme_geo
assert acme_geo.thrice(5) == 15 and acme_geo.twice(x=5) == 10
print("ok")
""", cwd=tmp_path)
    # A type renamed after the stubs were written: its stale class goes (stubgen alone refuses
    # to run on a block of a type the library no longer registers), the new one is written.
    lib_rs.write_text(lib_rs.read_text().replace('"acme_geo.Tag"', '"acme_geo.Label"')
                      .replace("pub struct Tag", "pub struct Label"))
    developed = run([str(python), *backend, "develop"], cwd=project, env=user_env)
    assert "acme_geo.Tag is no longer registered: its class is removed" in developed.stderr
    assert "class Tag(" not in api.read_text() and "class Label(_ffi_Object):" in api.read_text()
    # The library under the file name a loader expects (upstream's quickstart loads
    # `build/add_one_cpu.so`; cargo makes `libacme_geo.so`).
    out = tmp_path / "build" / "acme_geo_cpu.so"
    run([str(python), *backend, "lib", "--out", str(out)], cwd=project, env=user_env)
    run_script(python, f"""
import tvm_ffi
tvm_ffi.load_module({str(out)!r})
assert tvm_ffi.get_global_func("acme_geo.thrice")(2) == 6
print("ok")
""", cwd=tmp_path)


def test_template_copy_sdist_builds_offline_in_a_fresh_venv(user_env, tmp_path):
    """A user's package (standalone crate, version from Cargo.toml, the SDK a path dependency
    outside it): its sdist vendors the SDK and builds with cargo offline, away from the checkout."""
    project = copy_template(tmp_path / "acme_sd", "acme_sd")
    sdist = build_sdist(project, tmp_path, user_env)
    assert sdist.name == "acme_sd-0.1.0.tar.gz"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        manifest = tar.extractfile("acme_sd-0.1.0/Cargo.toml").read().decode()
    assert '[dependencies.tvm-ffi-sdk]\npath = "vendor/tvm-ffi-sdk"' in manifest
    assert "acme_sd-0.1.0/vendor/tvm-ffi-sdk-sys/build.rs" in names
    assert "acme_sd-0.1.0/python/acme_sd/_ffi_api.py" not in names  # written by the build
    out = tmp_path / "wheel"
    pip({**user_env, "CARGO_NET_OFFLINE": "true"}, "wheel", "--no-deps", "--config-settings",
        "profile=dev", "-w", str(out), str(sdist))
    (wheel,) = out.glob(f"acme_sd-0.1.0-py3-none-{PLATFORM}.whl")
    python = fresh_venv(tmp_path / "venv", user_env)
    pip(user_env, "--python", str(python), "install", str(wheel))
    run_script(python, """
import acme_sd
assert acme_sd.Counter("c").add(2) == 2 and acme_sd.greet("sdist") == "hello, sdist"
print("ok")
""", cwd=tmp_path)


def test_committed_stubs_are_what_the_build_writes(tmp_path):
    # The backend's stubgen step over a copy of the package, with the workspace-built library.
    # (The template commits no stubs: its first build writes them.)
    shutil.copytree(POINT / "python", tmp_path / "python",
                    ignore=shutil.ignore_patterns("__pycache__"))
    lib = pathlib.Path(os.environ.get("TVM_FFI_TARGET_DIR", ROOT / "target" / "debug"))
    run([sys.executable, "-c",
         "import pathlib, sys; from tvm_ffi_build import project, stubs; "
         "stubs.stubgen(project.Project(pathlib.Path('.')), pathlib.Path(sys.argv[1]), "
         "pathlib.Path(sys.argv[2]))", str(tmp_path / "python"),
         str(lib / "libtvm_ffi_example_point.so")], cwd=POINT)
    for path in (POINT / "python").rglob("*.py"):
        fresh = tmp_path / "python" / path.relative_to(POINT / "python")
        assert fresh.read_text() == path.read_text(), (
            f"{path} is stale: run `python -m tvm_ffi_build stubs` in examples/point and "
            "commit the result")
    assert not list((TEMPLATE / "python").rglob("_ffi_api.py"))


def test_a_shipped_library_is_built_with_link_time_optimisation_unless_the_package_says_otherwise(tmp_path):
    """The backend's release build adds LTO in one codegen unit (fewer pages mapped at import)
    through the environment, unless the workspace's Cargo.toml has a `[profile.release]`."""
    from tvm_ffi_build.project import shipped_profile_env

    def project(name, profile):
        crate = tmp_path / name
        (crate / "src").mkdir(parents=True)
        (crate / "src" / "lib.rs").write_text("")
        (crate / "Cargo.toml").write_text(
            f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\n\n'
            f'[lib]\ncrate-type = ["cdylib"]\n\n[workspace]\n{profile}'
        )
        return (crate / "Cargo.toml").resolve()

    assert shipped_profile_env(project("plain", "")) == {
        "CARGO_PROFILE_RELEASE_LTO": "true",
        "CARGO_PROFILE_RELEASE_CODEGEN_UNITS": "1",
    }
    assert shipped_profile_env(project("own", "\n[profile.release]\nlto = false\n")) == {}
