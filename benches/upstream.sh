#!/usr/bin/env bash
# This SDK against Apache's consumer crate tvm-ffi 0.1.15 on the same operations, in one process
# (benches/upstream: a crate outside the workspace, built in release). Prints ns per operation
# and the ratio SDK / upstream. Usage: bash benches/upstream.sh [iterations per round] [rounds]
# [operation name filter]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh >/dev/null
# Apache's tvm-ffi-sys finds libtvm_ffi through tvm-ffi-config on PATH.
export PATH="$root/.venv/bin:$PATH"
cargo build --quiet --release --manifest-path benches/upstream/Cargo.toml --target-dir target/bench-upstream
target/bench-upstream/release/tvm-ffi-bench-upstream "${1:-200000}" "${2:-5}" "${3:-}"
