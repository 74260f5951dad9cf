"""tvm-ffi-stubgen over a package, and the edits its output needs.

`tvm-ffi-stubgen` (apache-tvm-ffi 0.1.15) writes the classes and typed stubs of a loaded library
into the `tvm-ffi-stubgen(begin)` blocks of `_ffi_api.py`. Before it runs, the class of a type no
longer registered is removed (edit 0: stubgen refuses to run on such a block). What it writes
needs these edits before the package imports and passes `mypy --strict` and `pyright`; each
corrects one upstream behaviour and is idempotent (stubgen regenerates its blocks every build):

1. enums: stubgen imports `IntEnum`/`StrEnum` from `tvm_ffi` (they live in
   `tvm_ffi.dataclasses`) and registers them with `@register_object`, which skips the enum
   machinery (`.name`, entries as class attributes). They become `class OpKind(IntEnum,
   type_key="pkg.OpKind")` with one `Add: ClassVar[OpKind]` per entry (`add =
   entry(value="+")` for a `str` entry whose value is no name); an enum parameter, which takes
   the enum's values too, is `color: Color | Literal["red", ..]`, and its default (registered as
   its value) is written `= ...`.
2. comparison hooks: stubgen registers every class with `@register_object`, whose `==` compares
   identities; a type with `__ffi_eq__`/`__ffi_compare__`/`__ffi_hash__` gets
   `@c_class(key, eq=True, order=True, unsafe_hash=True)` (the options its hooks call for).
3. parameter names: stubgen numbers parameters (`_0: int`); the SDK registers their names and
   defaults (metadata `arg_names`, `arg_defaults`), which replace the numbers.
4. explicit constructors: stubgen derives `__init__` from the fields, but the runtime's
   `__init__` forwards to `__ffi_init__`, so `__init__` gets `__ffi_init__`'s parameters (a
   subclass's differing `__ffi_init__` is marked as an override).
5. keyword calls: the runtime's `Function.__call__` takes no keywords, so the module ends with a
   call of `_ffi_helpers.py` (placed next to it by the build) that makes the stubs' signatures true.
6. `__init__.py`: stubgen re-exports `__all__` through `.extend()`, which type checkers cannot
   follow; it becomes `__all__ += _ffi_api.__all__`.
7. imports: `Any`, `ClassVar`, `Literal` and `c_class`, which the edits above use and stubgen does
   not import.
"""

from __future__ import annotations

import json
import keyword
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from .project import LIB_SUFFIXES, BuildError, Project


def stubgen(project: Project, source_root: Path, library: Path) -> None:
    """tvm-ffi-stubgen over `source_root` (the directory holding the package) with `library`
    loaded, in `--init-*` mode (it writes `__init__.py` and `_ffi_api.py` when missing and
    appends a class for each new type), then the edits; `_ffi_helpers.py` is placed next to
    `_ffi_api.py`. `PYTHONHASHSEED=0`: the same library gives the same file."""
    target = re.sub(r"^lib(?!.*\.dll$)", "", library.name)
    target = next((target[: -len(s)] for s in LIB_SUFFIXES if target.endswith(s)), target)
    cmd = [sys.executable, "-m", "tvm_ffi.stub.cli", "--dlls", str(library), "--init-pypkg", project.dist,
           "--init-lib", target, "--init-prefix", f"{project.prefix}.", str(source_root)]
    cmd += ["--imports", ";".join(project.stubgen_imports)] if project.stubgen_imports else []
    env = dict(os.environ, PYTHONHASHSEED="0")

    def run(step: list[str]) -> str:
        done = subprocess.run(step, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        if done.returncode != 0:
            raise BuildError(f"{' '.join(step[2:4])} failed:\n{done.stdout}")
        return done.stdout

    found = json.loads(run([sys.executable, "-m", "tvm_ffi_build.stubs", str(library), f"{project.prefix}."])
                       .strip().splitlines()[-1])
    package = source_root / project.package_path
    for path in sorted(package.rglob("*.py")):
        _rewrite(path, lambda text: _prune(text, found["types"], f"{project.prefix}."))
    run(cmd)
    for path in sorted(package.rglob("*.py")):
        _rewrite(path, lambda text: refine(text, found["enums"], found["hooks"], found["params"]))
    helpers = (Path(__file__).parent / "ffi_helpers.py").read_text(encoding="utf-8")
    placed = package / "_ffi_helpers.py"
    if not placed.is_file() or placed.read_text(encoding="utf-8") != helpers:
        placed.write_text(helpers, encoding="utf-8")


def _rewrite(path: Path, edit: Callable[[str], str]) -> None:
    text = path.read_text(encoding="utf-8")
    edited = edit(text)
    if edited != text:
        path.write_text(edited, encoding="utf-8")


# A class of the stubs, from its decorator (or, edit 1's enums, its header) through its block
# to the end of its indented body (methods of the user's after the block).
_CLASS = re.compile(r'^(?:@\w+\("([\w.]+)"[^\n]*\)\n)?class \w+\((?:[^\n]*type_key="([\w.]+)")?[^\n]*\):\n'
                    r"(?:(?!^class |^@)[^\n]*\n)*?\s*# tvm-ffi-stubgen\(end\)\n(?:[ \t]*\n|[ \t]+[^\n]*\n)*", re.M)


def _prune(text: str, registered: list[str], prefix: str) -> str:
    """Edit 0, before stubgen (stubgen refuses to run on a block of a type the library no longer
    registers, e.g. the template's example type once replaced): that type's class goes."""
    def keep(match: re.Match[str]) -> str:
        key = match.group(1) or match.group(2) or ""
        if key.startswith(prefix) and key not in registered:
            print(f"tvm-ffi-build: {key} is no longer registered: its class is removed", file=sys.stderr)
            return ""
        return match.group(0)

    return _CLASS.sub(keep, text)


def query(library: str, prefix: str) -> dict[str, Any]:
    """Run with the library loaded (a process of its own): each enum type's entries, the
    `c_class` options of each type with comparison hooks, and the registered parameter names
    and defaults of the functions and methods, all under `prefix`."""
    import tvm_ffi
    from tvm_ffi import core

    tvm_ffi.load_module(library)
    enums, hooks, params, types = {}, {}, {}, []
    keep = ("arg_names", "arg_defaults")
    for name in tvm_ffi.registry.list_global_func_names():
        meta = tvm_ffi.get_global_func_metadata(name) if name.startswith(prefix) else {}
        if "arg_names" in meta:
            params[name] = {k: meta[k] for k in keep if k in meta}
    for key in map(str, tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")()):
        if not key.startswith(prefix):
            continue
        types.append(key)
        index = core._object_type_key_to_index(key)

        def attr(name: str) -> Any:
            return None if index is None else core._lookup_type_attr(index, name)

        state = attr("__ffi_enum__")
        if state is not None:
            # An entry's Python name: its `name` attribute (a `str` enum whose value is no
            # identifier, `#[ffi(name = "add", value = "+")]`), else its string index.
            names = state.attrs.get("name") or {}
            enums[key] = [
                {"alias": str(names.get(e, e._str_index)), "str": str(e._str_index), "int": int(e._int_index)}
                for e in state.entries
            ]
        eq, compare, hash_ = (attr(f"__ffi_{k}__") is not None for k in ("eq", "compare", "hash"))
        options = ["eq=True"] * (eq or compare) + ["order=True"] * compare + ["unsafe_hash=True"] * (eq or compare or hash_)
        if options:
            hooks[key] = ", ".join(options)
        for method in core._lookup_or_register_type_info_from_type_key(key).methods:
            if "arg_names" in method.metadata:
                params[f"{key}.{method.name}"] = {k: method.metadata[k] for k in keep if k in method.metadata}
    return {"enums": enums, "hooks": hooks, "params": params, "types": types}


_SIGNATURES_BEGIN = "# tvm_ffi_build(begin): signatures\n"
_SIGNATURES_END = "# tvm_ffi_build(end)\n"


def _refine_signature_block(text: str) -> str:
    """Edit 5: the call of `_ffi_helpers` at the end of the module that loads the library's
    functions (`_FFI_INIT_FUNC("prefix", __name__)`)."""
    init = re.search(r'^_FFI_INIT_FUNC\("([^"]+)", __name__\)$', text, re.M)
    if init is None:
        return text
    if _SIGNATURES_BEGIN in text:
        start = text.index(_SIGNATURES_BEGIN)
        end = text.index(_SIGNATURES_END, start) + len(_SIGNATURES_END)
        text = text[:start].rstrip("\n") + "\n" + text[end:].lstrip("\n")
    block = (_SIGNATURES_BEGIN
             + "from ._ffi_helpers import fast_constructors as _ffi_fast_constructors  # noqa: E402\n"
             + "from ._ffi_helpers import signatures as _ffi_signatures  # noqa: E402\n\n"
             + f'_ffi_signatures(globals(), "{init.group(1)}.", globals().get("LIB"))\n'
             + '_ffi_fast_constructors(globals(), globals().get("LIB"))\n' + _SIGNATURES_END)
    return text.rstrip("\n") + "\n\n" + block


_ENUM_BASES = {"IntEnum": "_ffi_IntEnum", "StrEnum": "_ffi_StrEnum", "Enum": "_ffi_Enum"}
_REFINED_IMPORTS = "# tvm_ffi_build: names the refined stubs use\n"
_C_CLASS_IMPORT = "from tvm_ffi.dataclasses import c_class as _ffi_c_class\n"
_ENTRY_IMPORT = "from tvm_ffi.dataclasses import entry as _ffi_entry\n"
# An enum type's entries: the Python name (`alias`), the string and the integer index.
Entries = list[dict[str, Any]]


def refine(text: str, enums: dict[str, Entries], hooks: dict[str, str], params: dict[str, dict[str, Any]]) -> str:
    """The edits of the module docstring, in an order that keeps each one idempotent."""
    text = _refine_enum_classes(text, enums)
    text = _refine_hook_classes(text, hooks)
    text = _refine_param_names(text, params, _enum_defaults(text, enums))
    text = _refine_init_signatures(text)
    text = _refine_signature_block(text)
    text = _refine_export_block(text)
    return _refine_imports(text)


def _enum_defaults(text: str, enums: dict[str, Entries]) -> dict[str, dict[Any, str]]:
    """Per enum class of the stubs, its entries by value (the string index of a `str` enum, the
    integer index of an `int` one): a parameter default given as a value is no value of the
    annotated class for type checkers, so it is written `color: Color = ...` (the signature
    `inspect.signature` shows keeps the value)."""
    out: dict[str, dict[Any, str]] = {}
    for key, entries in enums.items():
        match = re.search(rf'^class (\w+)\((_ffi_\w*Enum), type_key="{re.escape(key)}"\):$', text, re.M)
        if match is not None:
            index = "int" if match.group(2) == "_ffi_IntEnum" else "str"
            out[match.group(1)] = {e[index]: e["alias"] for e in entries}
    return out


def _refine_enum_classes(text: str, enums: dict[str, Entries]) -> str:
    # Edit 1 (stubgen imports the enum bases from `tvm_ffi`, which has none, and registers enum
    # classes with `@register_object`): `from tvm_ffi import IntEnum as _ffi_IntEnum, ...` moves
    # to `tvm_ffi.dataclasses`, and each enum class takes its key and one `ClassVar` per entry.
    def split_import(match: re.Match[str]) -> str:
        names = [n.strip() for n in match.group(1).split(",")]
        enum_names = [n for n in names if n.split(" as ")[0] in _ENUM_BASES]
        if not enum_names:
            return str(match.group(0))
        rest = [n for n in names if n not in enum_names]
        lines = [f"from tvm_ffi.dataclasses import {', '.join(enum_names)}"]
        if rest:
            lines.append(f"from tvm_ffi import {', '.join(rest)}")
        return "\n".join(lines)

    text = re.sub(r"^from tvm_ffi import (.+)$", split_import, text, flags=re.M)
    for key, entries in enums.items():
        header = re.compile(
            rf'^@_FFI_REG_OBJ\("{re.escape(key)}"\)\nclass (\w+)\((_ffi_\w*Enum)\):$', re.M
        )
        text = header.sub(rf'class \1(\2, type_key="{key}"):', text)
        match = re.search(rf'^class (\w+)\(_ffi_\w*Enum, type_key="{re.escape(key)}"\):$', text,
                          re.M)
        block = f"# tvm-ffi-stubgen(begin): object/{key}\n"
        if match is None or block not in text:
            continue
        cls = match.group(1)
        at = text.index(block) + len(block)
        indent = " " * (len(text[:text.index(block)].rsplit("\n", 1)[-1]))
        fmt_off = f"{indent}# fmt: off\n"
        if text.startswith(fmt_off, at):
            at += len(fmt_off)
        named = [e for e in entries if e["alias"].isidentifier() and not keyword.iskeyword(e["alias"])]
        # An entry named by its string index binds as a `ClassVar`; one renamed (a `str` enum's
        # value that is no identifier) as `entry(value=..)`, which the runtime looks up by value.
        declared = "".join(
            f"{indent}{e['alias']}: ClassVar[{cls}]\n" if e["alias"] == e["str"]
            else f"{indent}{e['alias']} = _ffi_entry(value={e['str']!r})\n"
            for e in named
        )
        if not text.startswith(declared, at):
            text = text[:at] + declared + text[at:]
    return text


_STUB_DEF = re.compile(r"^(?P<head> *def (?P<name>\w+)\()(?P<params>.*)(?P<tail>\) -> .*: \.\.\..*)$")


def _split_params(params: str) -> list[str]:
    """`a: int, b: Mapping[str, int], /` split at the top-level commas."""
    out, depth, start = [], 0, 0
    for at, c in enumerate(params):
        depth += 1 if c in "[(" else -1 if c in "])" else 0
        if c == "," and depth == 0:
            out.append(params[start:at].strip())
            start = at + 1
    if params[start:].strip():
        out.append(params[start:].strip())
    return out


def _named_def(line: str, info: dict[str, Any], enum_defaults: dict[str, dict[Any, str]]) -> str:
    """A stub `def` line with its numbered parameters (`_0: int`) renamed and given their
    defaults from `info` (`arg_names`, `arg_defaults`), taking keywords (a method's `self`
    stays positional-only): the runtime's `__init__`/`__ffi_init__` pass keywords in its KWARGS
    convention, and the package's functions and methods take them (``_ffi_helpers.signatures``)."""
    m = _STUB_DEF.match(line)
    if m is None:
        return line
    names, defaults = info.get("arg_names", []), info.get("arg_defaults", {})
    parts = _split_params(m.group("params"))
    out = []
    for part in parts:
        numbered = re.match(r"_(\d+): (.*)$", part)
        if numbered is None or int(numbered.group(1)) >= len(names):
            out.append(part)
            continue
        name = names[int(numbered.group(1))]
        cls = re.sub(r"^Optional\[(.*)\]$|^(.*) \| None$", r"\1\2", numbered.group(2))
        values = enum_defaults.get(cls, {})
        # An enum parameter takes the enum's values too (`"int64"` for `DType.int64`).
        annotation = numbered.group(2).replace(cls, f"{cls} | Literal[{', '.join(map(repr, values))}]") \
            if values else numbered.group(2)
        text = f"{name}: {annotation}"
        if name in defaults:
            default = defaults[name]
            alias = values.get(default) if default is not None else None
            # `...`: the stubs of functions come before the enum classes they name.
            text += " = ..." if alias is not None else f" = {default!r}"
        out.append(text)
    out = [p for p in out if p != "/"]
    if out[:1] == ["self"] and m.group("name") not in ("__init__", "__ffi_init__"):
        out.insert(1, "/")
    return f"{m.group('head')}{', '.join(out)}{m.group('tail')}"


def _refine_param_names(text: str, params: dict[str, dict[str, Any]],
                        enum_defaults: dict[str, dict[Any, str]]) -> str:
    """Edit 3 (stubgen numbers parameters, `_0: int`: the type schema has no names): the names
    and defaults the SDK registers (metadata `arg_names`, `arg_defaults`)."""
    out = []
    scope = ""  # the prefix of the block being read: `pkg.` (functions) or `pkg.Type.` (methods)
    for line in text.split("\n"):
        block = re.match(r"^\s*# tvm-ffi-stubgen\(begin\): (global|object)/(\S+)$", line)
        if block is not None:
            scope = block.group(2) + "."
        elif re.match(r"^\s*# tvm-ffi-stubgen\(end\)", line):
            scope = ""
        m = _STUB_DEF.match(line)
        if scope and m is not None and f"{scope}{m.group('name')}" in params:
            line = _named_def(line, params[f"{scope}{m.group('name')}"], enum_defaults)
        out.append(line)
    return "\n".join(out)


def _refine_hook_classes(text: str, hooks: dict[str, str]) -> str:
    """Edit 2 (stubgen registers every class with `@register_object`, whose `==` compares
    identities): `@_FFI_REG_OBJ("key")` becomes `@_ffi_c_class("key", <options>)` for a type with
    comparison hooks (and back, with the options brought up to date, when they change)."""
    def decorator(match: re.Match[str]) -> str:
        key = match.group(1) or match.group(2)
        options = hooks.get(key)
        return f'@_ffi_c_class("{key}", {options})' if options else f'@_FFI_REG_OBJ("{key}")'

    return re.sub(r'^@(?:_FFI_REG_OBJ\("([\w.]+)"\)|_ffi_c_class\("([\w.]+)", [\w=, ]+\))$',
                  decorator, text, flags=re.M)


_DEF = re.compile(r"^(?P<indent> +)def (?P<name>__init__|__ffi_init__)\(self(?P<params>.*)\) -> None: \.\.\.(?P<tail>.*)$",
                  re.M)


def _refine_init_signatures(text: str) -> str:
    """Edit 4 (stubgen derives `__init__` from the fields, but the runtime's `__init__` calls
    `__ffi_init__`): `__init__` takes `__ffi_init__`'s parameters; a subclass's differing
    `__ffi_init__` is marked as an override."""
    classes = list(re.finditer(r"^class (\w+)\(([^)]*)\):$", text, re.M))
    ffi_init: dict[str, str] = {}
    out = []
    last = 0
    for i, cls in enumerate(classes):
        end = classes[i + 1].start() if i + 1 < len(classes) else len(text)
        body = text[cls.start():end]
        defs = {m.group("name"): m.group("params") for m in _DEF.finditer(body)}
        ffi_params = defs.get("__ffi_init__")
        if ffi_params is not None:
            ffi_init[cls.group(1)] = ffi_params
            if "__init__" in defs and defs["__init__"] != ffi_params:
                body = _DEF.sub(lambda m: m.group(0) if m.group("name") != "__init__" else
                                f"{m.group('indent')}def __init__(self{ffi_params}) -> None: ...",
                                body)
            base = cls.group(2).split(",")[0].strip()
            if not base.startswith("_ffi_") and ffi_init.get(base, ffi_params) != ffi_params:
                body = _DEF.sub(lambda m: m.group(0) if m.group("name") != "__ffi_init__" or
                                "type: ignore" in m.group("tail") else
                                m.group(0) + "  # type: ignore[override]", body)
        out.append(text[last:cls.start()] + body)
        last = end
    out.append(text[last:])
    return "".join(out)


def _refine_export_block(text: str) -> str:
    """Edit 6 (stubgen's `__init__.py` extends `__all__` from a renamed import, which mypy and
    pyright cannot follow): `__all__ += _ffi_api.__all__`."""
    old = ('from ._ffi_api import __all__ as _ffi_api__all__\n'
           'if "__all__" not in globals():\n'
           '    __all__ = []\n'
           '__all__.extend(_ffi_api__all__)\n')
    new = ('from . import _ffi_api\n'
           '__all__ = []  # the library\'s names; append names of your own below the block\n'
           '__all__ += _ffi_api.__all__\n')
    return text.replace(old, new)


def _refine_imports(text: str) -> str:
    """Edit 7 (stubgen writes `Callable[..., Any]` without importing `Any`, and knows nothing of
    edits 1-3): `Any`, `ClassVar`, `Literal` and `c_class` imported after stubgen's import block."""
    end = "# tvm-ffi-stubgen(end)\n"
    start = text.find("# tvm-ffi-stubgen(begin): import-section\n")
    if start < 0:
        return text
    at = text.index(end, start) + len(end)
    if text.startswith(_REFINED_IMPORTS, at):
        at_end = at + len(_REFINED_IMPORTS)
        while text.startswith(("from typing import ", _C_CLASS_IMPORT, _ENTRY_IMPORT), at_end):
            at_end = text.index("\n", at_end) + 1
        text = text[:at] + text[at_end:]
    code = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    imported = text[start:at]
    needed = [name for name in ("Any", "ClassVar", "Literal")
              if re.search(rf"\b{name}\b", code) and not re.search(rf"import .*\b{name}\b", imported)]
    lines = [f"from typing import {', '.join(needed)}\n"] if needed else []
    if re.search(r"^@_ffi_c_class\(", code, re.M):
        lines.append(_C_CLASS_IMPORT)
    if re.search(r"= _ffi_entry\(", code):
        lines.append(_ENTRY_IMPORT)
    if not lines:
        return text
    return text[:at] + _REFINED_IMPORTS + "".join(lines) + text[at:]


if __name__ == "__main__":
    print(json.dumps(query(sys.argv[1], sys.argv[2])))
