#!/usr/bin/env bash
# The fast gates CI runs before the tests: formatting, clippy with warnings as errors, rustdoc
# with warnings as errors (and its guide links), `cargo package` of the published crates, and the
# architecture checks (layering, generated paths).
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
echo "==> the guide sections the macro docs link to exist in the tvm_ffi crate docs"
for anchor in $(grep -oE 'tvm_ffi/index\.html#[a-z0-9-]+' tvm-ffi-macros/src/lib.rs | cut -d'#' -f2 | sort -u); do
  grep -q "id=\"$anchor\"" target/doc/tvm_ffi/index.html \
    || { echo "error: tvm-ffi-macros links to #$anchor, a section the crate docs lack" >&2; exit 1; }
done
echo "==> cargo package (the three crates a user depends on)"
bash scripts/check-package.sh
bash scripts/check-architecture.sh
echo "==> public API (tvm-ffi/public-api.txt)"
bash scripts/check-public-api.sh
echo "==> a doc example on every public type (scripts/doc-coverage.py)"
python3 scripts/doc-coverage.py target/public-api/doc/tvm_ffi.json | tail -1
