#!/usr/bin/env bash
# The whole test suite: set-up, Rust tests (unit, integration, doc, ui), then the Python and C++
# cross-language tests against the real libtvm_ffi.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
echo "==> cargo test"
cargo test --workspace --quiet 2>&1 | tee target/cargo-test.log
echo "==> pytest"
.venv/bin/python -m pytest -q tests/python
