#!/usr/bin/env bash
# The fast gates CI runs before the tests: formatting, clippy with warnings as errors, rustdoc
# with warnings as errors, and the architecture checks (layering, generated paths).
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
bash scripts/check-architecture.sh
