#!/usr/bin/env bash
# The whole test suite: set-up, Rust tests (unit, integration, doc, ui), then the Python and C++
# cross-language tests against the real libtvm_ffi. Prints summaries, and the output of what
# failed; the full cargo output is in target/cargo-test.log.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
echo "==> cargo test"
mkdir -p target
if ! cargo test --workspace --quiet >target/cargo-test.log 2>&1; then
  # The failing harnesses' reports (cargo prints them after each harness), else the end.
  if grep -q '^failures:' target/cargo-test.log; then
    sed -n '/^failures:/,/^test result: FAILED/p' target/cargo-test.log
  else
    tail -n 60 target/cargo-test.log
  fi
  echo "error: cargo test failed (full output: target/cargo-test.log)" >&2
  exit 1
fi
awk '/^test result: ok\./ { runs++; passed += $4; ignored += $8 }
     END { printf "cargo test: %d passed, %d ignored, in %d test binaries\n", passed, ignored, runs }' \
  target/cargo-test.log
echo "==> pytest"
.venv/bin/python -m pytest -q tests/python
