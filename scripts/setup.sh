#!/usr/bin/env bash
# Sets up everything on a fresh machine: a project-local Python environment (.venv) with the
# pinned apache-tvm-ffi wheel, pytest, numpy, JAX and the build backend tvm-ffi-build, then the
# cargo build of the workspace.
# Idempotent: a second run only checks that everything is in place.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
if ! .venv/bin/python -m pip freeze 2>/dev/null | grep -qx "apache-tvm-ffi==0.1.15.post2" \
   || ! .venv/bin/python -m pip freeze 2>/dev/null | grep -qx "apache-tvm==0.27.0.post1" \
   || ! .venv/bin/python -c "import pytest, numpy, hypothesis, mypy, pyright, hatchling, tomli_w, elftools, importlib.util as u; assert u.find_spec('jax_tvm_ffi')" 2>/dev/null; then
  echo "==> installing python-requirements.txt into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q -r python-requirements.txt
fi
# The build backend of the example and template packages (not published yet): editable, so
# that the packages built here use this checkout's tvm-ffi-build.
if ! .venv/bin/python -c "import tvm_ffi_build.hooks" 2>/dev/null; then
  echo "==> installing tvm-ffi-build into .venv"
  .venv/bin/python -m pip install --disable-pip-version-check -q --no-build-isolation --no-deps \
    -e ./tvm-ffi-build
fi
echo "==> libtvm_ffi: $(.venv/bin/tvm-ffi-config --libdir)"
# `--python-only`: the environment alone (scripts/run-example.sh builds just what it runs).
[ "${1:-}" = "--python-only" ] && exit 0
echo "==> cargo build --workspace --all-targets (may take minutes on a cold cache)"
cargo build --workspace --all-targets --quiet
