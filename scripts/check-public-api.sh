#!/usr/bin/env bash
# The public API of the `tvm_ffi` crate, listed from rustdoc's JSON by scripts/public_api.py,
# must equal tvm-ffi/public-api.txt: every change to the public surface is a visible diff of
# that file. `bash scripts/check-public-api.sh --bless` rewrites it after a deliberate change.
# The listing leaves out `#[doc(hidden)]` items (`__private`, what generated code uses), which
# tvm-ffi/private-api.txt lists on its own (rustdoc's JSON with the hidden items).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-Zunstable-options --output-format json" \
  cargo doc -q -p tvm-ffi-sdk --lib --no-deps --target-dir target/public-api
listing="$(python3 scripts/public_api.py target/public-api/doc/tvm_ffi.json)"
# `__private` (hidden from the listing above) in a file of its own: what generated code reaches,
# where every fn that makes what the registry trusts must be an `unsafe fn`.
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-Zunstable-options --document-hidden-items --output-format json" \
  cargo doc -q -p tvm-ffi-sdk --lib --no-deps --target-dir target/private-api
private_listing="$(python3 scripts/public_api.py --private target/private-api/doc/tvm_ffi.json)"
if [ "${1:-}" = "--bless" ]; then
  printf '%s\n' "$listing" >tvm-ffi/public-api.txt
  printf '%s\n' "$private_listing" >tvm-ffi/private-api.txt
  echo "wrote tvm-ffi/public-api.txt ($(wc -l <tvm-ffi/public-api.txt) items)" \
    "and tvm-ffi/private-api.txt ($(wc -l <tvm-ffi/private-api.txt) items)"
  exit 0
fi
if ! diff -u tvm-ffi/private-api.txt <(printf '%s\n' "$private_listing") >target/private-api.diff; then
  cat target/private-api.diff >&2
  echo "error: tvm_ffi::__private changed (above); if that is deliberate, run" \
    "bash scripts/check-public-api.sh --bless and commit tvm-ffi/private-api.txt" >&2
  exit 1
fi
if ! diff -u tvm-ffi/public-api.txt <(printf '%s\n' "$listing") >target/public-api.diff; then
  cat target/public-api.diff >&2
  echo "error: the public API changed (above); if that is deliberate, run" \
    "bash scripts/check-public-api.sh --bless and commit tvm-ffi/public-api.txt" >&2
  exit 1
fi
# A safe fn of `__private` that returns a `Function` or an `Any` hands out what the registry
# registers for a type: it must be an `unsafe fn` (see `__private`'s docs). Exempt: the
# `#[dispatch(mutate, policy = ..)]` runner, whose `Any` is the user's own mutation result
# (nothing registers or trusts it), made from an engine-made `MutateValue` no caller can forge.
if grep -E '^fn tvm_ffi::__private::[a-z_]+(<[^>]*>)?\(.*\) -> (Function|Any|Result<Any>)$' \
  tvm-ffi/private-api.txt | grep -vE '^fn tvm_ffi::__private::mutate_with_policy<'; then
  echo "error: a safe fn of __private makes a Function or Any (above): make it an unsafe fn" >&2
  exit 1
fi
# No machinery of the macros outside `__private`.
if grep -E "registry::(TYPES|TypeSlot|TypeEntry)|new_enum_object|allocate_type_index|ObjectCell|FnSignature|GlobalCache" \
  tvm-ffi/public-api.txt; then
  echo "error: codegen machinery in the public API (above): move it to __private" >&2
  exit 1
fi
echo "public API: $(wc -l <tvm-ffi/public-api.txt) items, unchanged"
