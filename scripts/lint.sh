#!/usr/bin/env bash
# The fast gates CI runs before the tests: formatting, clippy with warnings as errors, rustdoc
# with warnings as errors, the guide's links (the book's chapters and the sections the macro docs
# name), `cargo package` of the published crates, the architecture checks (layering,
# generated paths) and `mypy --strict` of the build tool, tvm-ffi-build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
echo "==> cargo fmt --check"
cargo fmt --all -- --check
echo "==> cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "==> cargo doc -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
echo "==> the book's chapters, the guide sections the macro docs name, and Markdown links"
python3 scripts/check-doc-links.py
echo "==> mypy --strict tvm-ffi-build (the build backend and the helpers module packages run)"
(cd tvm-ffi-build && "$root/.venv/bin/python" -m mypy --no-incremental tvm_ffi_build)
echo "==> cargo package (the three crates a user depends on)"
bash scripts/check-package.sh
bash scripts/check-architecture.sh
echo "==> public API (tvm-ffi/public-api.txt)"
bash scripts/check-public-api.sh
echo "==> a doc example on every public type (scripts/doc-coverage.py)"
python3 scripts/doc-coverage.py target/public-api/doc/tvm_ffi.json | tail -1
