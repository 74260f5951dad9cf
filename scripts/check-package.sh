#!/usr/bin/env bash
# `cargo package` of the crates a user depends on (tvm-ffi-sys, tvm-ffi-macros, tvm-ffi), packaged
# together so that each resolves the others from this workspace: the manifests are complete, no
# dependency is path-only, tvm-ffi pins tvm-ffi-macros with `=`, tvm-ffi ships the README (its
# crate docs), and the packaged lockfile names the three crates of this workspace, never the
# crates.io packages of the same names (Apache TVM's own bindings).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$(cargo package --no-verify --allow-dirty --quiet -p tvm-ffi-sys -p tvm-ffi-macros -p tvm-ffi 2>&1)" \
  || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then
  echo "$out" >&2
  echo "error: cargo package printed warnings" >&2
  exit 1
fi
crate=target/package/tvm-ffi-0.1.0.crate
manifest="$(tar xzf "$crate" -O tvm-ffi-0.1.0/Cargo.toml)"
lock="$(tar xzf "$crate" -O tvm-ffi-0.1.0/Cargo.lock)"
grep -qzF $'[dependencies.tvm-ffi-macros]\nversion = "=0.1.0"' <<<"$manifest" \
  || { echo "error: tvm-ffi does not pin tvm-ffi-macros with =" >&2; exit 1; }
files="$(tar tzf "$crate")"
grep -qx "tvm-ffi-0.1.0/README.md" <<<"$files" \
  || { echo "error: the tvm-ffi package lacks README.md (its crate docs)" >&2; exit 1; }
for dep in tvm-ffi-sys tvm-ffi-macros; do
  if ! grep -A1 -x "name = \"$dep\"" <<<"$lock" | grep -qx 'version = "0.1.0"'; then
    echo "error: the packaged tvm-ffi resolves $dep to another version than this workspace's:" >&2
    grep -A3 -x "name = \"$dep\"" <<<"$lock" >&2
    exit 1
  fi
done
for name in tvm-ffi-sys tvm-ffi-macros tvm-ffi; do
  files="$(tar tzf "target/package/$name-0.1.0.crate")"
  echo "$name: $(wc -l <<<"$files") files"
done
