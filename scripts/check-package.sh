#!/usr/bin/env bash
# `cargo package` of the crates a user depends on, in dependency order (tvm-ffi-sdk-sys,
# tvm-ffi-sdk-macros, tvm-ffi-sdk), packaged together so that each resolves the others from this
# workspace: the manifests are complete (crates.io refuses a package without description,
# license, repository), no dependency is path-only, the library names stay tvm_ffi*, the
# runtime pins the macros with `=`, the -sys crate's `links` key differs from Apache's
# `tvm-ffi-sys` (`tvm_ffi`), tvm-ffi-sdk ships the README (its crate docs), and the packaged
# lockfile names the three crates of this workspace.
# Building from the packaged files is tests/python/test_downstream.py (`cargo publish
# --dry-run` does the same, and needs the crates.io index).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
crates=(tvm-ffi-sdk-sys tvm-ffi-sdk-macros tvm-ffi-sdk)
out="$(cargo package --no-verify --allow-dirty --quiet "${crates[@]/#/-p}" 2>&1)" \
  || { echo "$out" >&2; exit 1; }
if [ -n "$out" ]; then
  echo "$out" >&2
  echo "error: cargo package printed warnings" >&2
  exit 1
fi
fail() { echo "error: $*" >&2; exit 1; }
version="$(cargo metadata --no-deps --format-version 1 \
  | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "tvm-ffi-sdk"))')"
declare -A lib=([tvm-ffi-sdk-sys]=tvm_ffi_sys [tvm-ffi-sdk-macros]=tvm_ffi_macros [tvm-ffi-sdk]=tvm_ffi)
for name in "${crates[@]}"; do
  crate="target/package/$name-$version.crate"
  manifest="$(tar xzf "$crate" -O "$name-$version/Cargo.toml")"
  for field in description license repository readme keywords categories rust-version; do
    grep -q "^$field = " <<<"$manifest" || fail "$name: Cargo.toml lacks \`$field\`"
  done
  grep -qzF $'[lib]\nname = "'"${lib[$name]}"'"' <<<"$manifest" \
    || fail "$name: the library is not named ${lib[$name]}"
  grep -q '^path = "\.\./' <<<"$manifest" && fail "$name: a path dependency outside the package"
  files="$(tar tzf "$crate")"
  grep -qx "$name-$version/README.md" <<<"$files" || fail "$name: the package lacks README.md"
  echo "$name: $(wc -l <<<"$files") files"
done
sys="$(tar xzf "target/package/tvm-ffi-sdk-sys-$version.crate" -O "tvm-ffi-sdk-sys-$version/Cargo.toml")"
grep -qx 'links = "tvm_ffi_sdk"' <<<"$sys" \
  || fail "tvm-ffi-sdk-sys must declare links = \"tvm_ffi_sdk\" (Apache's tvm-ffi-sys has \"tvm_ffi\")"
crate="target/package/tvm-ffi-sdk-$version.crate"
manifest="$(tar xzf "$crate" -O "tvm-ffi-sdk-$version/Cargo.toml")"
lock="$(tar xzf "$crate" -O "tvm-ffi-sdk-$version/Cargo.lock")"
grep -qzF $'[dependencies.tvm-ffi-sdk-macros]\nversion = "='"$version"'"' <<<"$manifest" \
  || fail "tvm-ffi-sdk does not pin tvm-ffi-sdk-macros with ="
for dep in tvm-ffi-sdk-sys tvm-ffi-sdk-macros; do
  if ! grep -A1 -x "name = \"$dep\"" <<<"$lock" | grep -qx "version = \"$version\""; then
    grep -A3 -x "name = \"$dep\"" <<<"$lock" >&2
    fail "the packaged tvm-ffi-sdk resolves $dep to another version than this workspace's"
  fi
done
