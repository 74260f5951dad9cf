#!/usr/bin/env bash
# Builds the book (docs/book) with mdBook into target/book. mdBook is installed from crates.io
# into target/tools the first time (a pinned version, without its `serve`/`watch`/`search`
# features: about three minutes on two cores), never globally.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
version=0.5.4
mdbook="$root/target/tools/bin/mdbook"
if ! "$mdbook" --version 2>/dev/null | grep -q "v$version"; then
    echo "==> cargo install mdbook $version (into target/tools)"
    cargo install mdbook --version "$version" --locked --no-default-features --quiet \
        --root "$root/target/tools"
fi
echo "==> mdbook build docs/book"
# Quiet when all is well: mdBook's progress lines are dropped, its warnings and errors shown.
status=0
log="$("$mdbook" build docs/book -d "$root/target/book" 2>&1)" || status=$?
grep -v '^ INFO' <<<"$log" || true
exit "$status"
