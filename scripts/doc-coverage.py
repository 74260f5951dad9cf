#!/usr/bin/env python3
"""Lists the public types and traits of the `tvm_ffi` crate that have no code example.

Usage: doc-coverage.py [RUSTDOC_JSON]   (default: target/public-api/doc/tvm_ffi.json)

The JSON comes from the same rustdoc run as the public API listing (scripts/check-public-api.sh):

    RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-Zunstable-options --output-format json" \\
      cargo doc -q -p tvm-ffi-sdk --lib --no-deps --target-dir target/public-api

Public means reachable from the crate root without passing through a `#[doc(hidden)]` item
(`__private` holds what generated code uses; it needs no examples). An item has an example when
its docs hold a Rust code block that rustdoc compiles as a doctest (a fence without `ignore`,
`text`, `compile_fail` or another language), or when its docs link to a module whose docs hold
one (the `builtin` payload types share one example in their module docs). Prints each item
without one and the count; exits 1 when any is missing outside ALLOWED.
"""
import json
import re
import sys
from pathlib import Path

# Items exempt for now, each with why. Everything else public needs an example.
ALLOWED: dict[str, str] = {
    # Empty: every public type and trait has an example. Add an item here only with why.
}

TYPE_KINDS = {"struct", "enum", "trait", "type_alias", "union"}
# Info-string tokens that keep a fence a Rust doctest (rustdoc's own list, less `ignore`).
RUST_TOKENS = {"", "rust", "no_run", "should_panic", "test_harness", "allow_fail"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*(.*)$")


def hidden(item):
    for attr in item.get("attrs", []):
        text = attr if isinstance(attr, str) else json.dumps(attr)
        if "doc(hidden)" in text.replace(" ", "") or '"hidden"' in text:
            return True
    return False


def has_doctest(docs):
    """Whether `docs` holds a fenced block that rustdoc compiles and runs (or compiles)."""
    opening = None
    for line in (docs or "").splitlines():
        m = FENCE.match(line)
        if not m:
            continue
        if opening is None:
            opening = m.group(1)[0]
            tokens = {t.strip() for t in re.split(r"[,\s]+", m.group(2)) if t.strip()}
            tokens = {t for t in tokens if not t.startswith("edition")} or {""}
            if tokens <= RUST_TOKENS:
                return True
        elif m.group(1)[0] == opening and not m.group(2).strip():
            opening = None
    return False


def main():
    default = Path(__file__).resolve().parent.parent / "target/public-api/doc/tvm_ffi.json"
    doc = json.load(open(sys.argv[1] if len(sys.argv) > 1 else default))
    index = doc["index"]
    found = {}  # id -> the paths it is reachable by

    def walk(item_id, prefix, seen):
        item = index.get(str(item_id))
        if item is None or hidden(item) or item_id in seen:
            return
        kind, inner = next(iter(item["inner"].items()))
        if kind in TYPE_KINDS:
            found.setdefault(item_id, set()).add(prefix)
        if kind != "module":
            return
        seen = seen | {item_id}
        for child in inner["items"]:
            c = index.get(str(child))
            if c is None or c.get("visibility") != "public" or hidden(c):
                continue
            if "use" in c["inner"]:
                u = c["inner"]["use"]
                target = index.get(str(u["id"])) if u["id"] is not None else None
                if target is None:
                    continue  # another crate's item
                if u["is_glob"]:
                    for g in target["inner"].get("module", {}).get("items", []):
                        gi = index.get(str(g))
                        if gi and gi.get("visibility") == "public" and gi.get("name"):
                            walk(g, f"{prefix}::{gi['name']}", seen)
                else:
                    walk(u["id"], f"{prefix}::{u['name']}", seen)
            elif c.get("name"):
                walk(child, f"{prefix}::{c['name']}", seen)

    walk(doc["root"], "tvm_ffi", frozenset())

    def covered(item):
        if has_doctest(item.get("docs")):
            return True
        for target in item.get("links", {}).values():
            t = index.get(str(target))
            if t and "module" in t["inner"] and has_doctest(t.get("docs")):
                return True
        return False

    missing, allowed = [], []
    for item_id, names in found.items():
        item = index[str(item_id)]
        if covered(item):
            continue
        # The longest path names the defining module (`tvm_ffi::value::Any`, not `tvm_ffi::Any`).
        name = max(sorted(names), key=lambda n: n.count("::"))
        kind = next(iter(item["inner"]))
        span = item.get("span") or {}
        where = f"{span.get('filename', '?')}:{(span.get('begin') or ['?'])[0]}"
        entry = f"{kind} {name} ({where})"
        (allowed if names & ALLOWED.keys() else missing).append((entry, names & ALLOWED.keys()))

    for entry, _ in sorted(missing):
        print(f"missing: {entry}")
    for entry, keys in sorted(allowed):
        print(f"allowed: {entry}: {ALLOWED[sorted(keys)[0]]}")
    print(
        f"{len(found)} public types and traits; {len(missing)} without a code example"
        f" ({len(allowed)} more allowed)"
    )
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
