#!/usr/bin/env bash
# Architecture checks anyone can run:
# 1. the layer folders of tvm-ffi (and the modules of tvm-ffi-macros) only use lower layers and no
#    files of one folder use each other in a circle (tvm-ffi/tests/layers.rs prints the
#    dependency table);
# 2. the macro expansion of examples/point names the runtime only through
#    `::tvm_ffi::__private::...` and the public value types;
# 3. that expansion stays within its size budget (scripts/expansion-size.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
echo "==> layers and file circles of tvm-ffi and tvm-ffi-macros (tvm-ffi/tests/layers.rs)"
cargo test -q -p tvm-ffi-sdk --test layers -- --nocapture --test-threads 1 2>&1 \
  | grep -E "uses|circle|test result"
echo "==> paths in the expansion of examples/point"
expanded="$(RUSTC_BOOTSTRAP=1 cargo rustc -q -p tvm-ffi-example-point --lib -- -Zunpretty=expanded)"
paths="$(grep -oE '::tvm_ffi::[A-Za-z_]+' <<<"$expanded" | sort | uniq -c)"
echo "$paths"
allowed='^::tvm_ffi::(__private|Any|AnyView|Result|Error|Function|ObjectRef|String|Bytes|Array|Map|Tensor|DataType|Device|FromAny|IntoAny)$'
if grep -oE '::tvm_ffi::[A-Za-z_]+' <<<"$expanded" | sort -u | grep -vE "$allowed"; then
  echo "error: the expansion names runtime items outside __private and the public value types" >&2
  exit 1
fi
echo "==> size of the expansion of examples/point's Point (scripts/expansion-size.py)"
python3 scripts/expansion-size.py
