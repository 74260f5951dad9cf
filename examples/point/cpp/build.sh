#!/usr/bin/env bash
# Compiles the C++ side of the example against the pinned wheel's headers.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
out="${1:-$root/target/example-cpp}"
config="$root/.venv/bin/tvm-ffi-config"
[ -x "$config" ] || { echo "run 'bash scripts/setup.sh' first" >&2; exit 1; }
inc="$("$config" --includedir)"
lib="$("$config" --libdir)"
mkdir -p "$out"
g++ -std=c++17 -O1 -I"$inc" "$root/examples/point/cpp/main.cc" -o "$out/point_main" \
  -L"$lib" -ltvm_ffi -Wl,-rpath,"$lib" -ldl
