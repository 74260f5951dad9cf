#!/usr/bin/env python3
"""Checks the links into and between the guide (the book under docs/book/src) and the
repository's other Markdown files.

Usage: check-doc-links.py   (from anywhere; reads the repository this script is in)

1. The book: every chapter file of docs/book/src starts with a `# Title` and is listed in
   SUMMARY.md, and every file SUMMARY.md lists exists.
2. The guide sections the crates' docs name: every `docs/book/src/<file>.md` or
   `docs/book/src/<file>.md#<anchor>` written in the sources of tvm-ffi-macros and tvm-ffi (the
   macro docs send readers there) names a chapter that exists, and a heading of it with that
   anchor.
3. Relative links of the Markdown files (README.md, ARCHITECTURE.md, CONTRIBUTING.md,
   CHANGELOG.md, docs/, the crates' and folders' READMEs): `[text](path)`, `[text](path#anchor)`
   and `[text](#anchor)` reach an existing file, and a heading of it with that anchor.

Anchors are the headings' ids as mdBook and GitHub make them: lowercase, letters, digits, `_`
and `-` kept, whitespace as `-`, everything else dropped; a repeated heading gets `-1`, `-2`, ...
Exits 1 naming every broken link.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs/book/src"
FENCE = re.compile(r"^\s*(```+|~~~+)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
BOOK_PATH = re.compile(r"docs/book/src/([A-Za-z0-9_-]+\.md)(?:#([A-Za-z0-9_-]+))?")


def prose_lines(text):
    """The lines outside fenced code blocks."""
    fence = None
    for line in text.splitlines():
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)[0]
            elif m.group(1)[0] == fence:
                fence = None
            continue
        if fence is None:
            yield line


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    out = []
    for ch in text:
        if ch.isalnum() or ch in "_-":
            out.append(ch.lower())
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        for line in prose_lines(path.read_text()):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        _anchors[path] = found
    return _anchors[path]


def main():
    errors = []

    # 1. The book's chapters and SUMMARY.md.
    summary = BOOK / "SUMMARY.md"
    listed = set()
    for line in prose_lines(summary.read_text()):
        for target in LINK.findall(line):
            listed.add(target)
            if not (BOOK / target).is_file():
                errors.append(f"{summary.relative_to(ROOT)}: lists `{target}`, which does not exist")
    for chapter in sorted(BOOK.glob("*.md")):
        if chapter.name == "SUMMARY.md":
            continue
        if chapter.name not in listed:
            errors.append(f"{chapter.relative_to(ROOT)}: not listed in SUMMARY.md")
        first = chapter.read_text().splitlines()[:1]
        if not first or not first[0].startswith("# "):
            errors.append(f"{chapter.relative_to(ROOT)}: does not start with a `# Title` line")

    # 2. The chapters and sections the crates' docs name.
    sources = sorted((ROOT / "tvm-ffi-macros/src").rglob("*.rs")) + sorted(
        (ROOT / "tvm-ffi/src").rglob("*.rs")
    )
    for source in sources:
        for number, line in enumerate(source.read_text().splitlines(), 1):
            for name, anchor in BOOK_PATH.findall(line):
                where = f"{source.relative_to(ROOT)}:{number}"
                chapter = BOOK / name
                if not chapter.is_file():
                    errors.append(f"{where}: names docs/book/src/{name}, which does not exist")
                elif anchor and anchor not in anchors(chapter):
                    errors.append(f"{where}: names docs/book/src/{name}#{anchor}, a section it lacks")

    # 3. Relative links between the Markdown files.
    documents = [
        p
        for pattern in ("*.md", "docs/**/*.md", "*/README.md", "*/*/README.md")
        for p in ROOT.glob(pattern)
        if "target" not in p.parts and ".venv" not in p.parts and p.is_file()
    ]
    for document in sorted(set(documents)):
        for line in prose_lines(document.read_text()):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # https:, mailto:, ...
                path_part, _, anchor = target.partition("#")
                dest = (document.parent / path_part).resolve() if path_part else document
                where = f"{document.relative_to(ROOT)}: link `{target}`"
                if not dest.exists():
                    errors.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    errors.append(f"{where}: no heading with that anchor")

    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if errors:
        return 1
    print(f"book chapters, the sections the crate docs name and links of {len(documents)} Markdown files: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
