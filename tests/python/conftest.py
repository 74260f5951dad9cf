"""Shared fixtures: the Rust example library built by cargo, loaded the way users load it."""
import os
import pathlib
import subprocess
import sys

import pytest
import tvm_ffi

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Test modules import helpers from here (`from conftest import ...`).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


# Set by scripts/asan.sh: the Rust libraries are built with AddressSanitizer, whose quarantine
# and shadow memory make resident-memory measurements meaningless.
UNDER_ASAN = os.environ.get("TVM_FFI_SANITIZE") == "address"
skip_under_asan = pytest.mark.skipif(
    UNDER_ASAN, reason="AddressSanitizer's quarantine and shadow memory change the process's memory use"
)


def _lib_path(name: str) -> str:
    path = pathlib.Path(os.environ.get("TVM_FFI_TARGET_DIR", ROOT / "target" / "debug")) / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `bash scripts/test.sh` (it builds the workspace first)")
    return str(path)


def example_lib_path() -> str:
    """Path of the `examples/point` cdylib."""
    return _lib_path("libtvm_ffi_example_point.so")


@pytest.fixture(scope="session")
def example_lib():
    """`examples/point` loaded with tvm_ffi.load_module."""
    return tvm_ffi.load_module(example_lib_path())


def kernels_lib_path() -> str:
    """Path of the `examples/kernels` cdylib (tensor kernels)."""
    return _lib_path("libtvm_ffi_example_kernels.so")


@pytest.fixture(scope="session")
def kernels_lib():
    """`examples/kernels` loaded with tvm_ffi.load_module."""
    return tvm_ffi.load_module(kernels_lib_path())


def run_python(script, env=None, timeout=300):
    """Runs `script` in a new interpreter (a process of its own: load-time behaviour, crashes
    that must not take pytest down, environment variables) and returns the completed process.
    The child can import `conftest` and sees the same `TVM_FFI_TARGET_DIR`."""
    child_env = dict(os.environ)
    child_env["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(__file__).resolve().parent), child_env.get("PYTHONPATH", "")]
    )
    child_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=child_env, timeout=timeout
    )


def run_in_fresh_python(script, env=None):
    """`run_python`, asserting that the child exits cleanly."""
    run = run_python(script, env)
    assert run.returncode == 0, run.stderr
    return run
