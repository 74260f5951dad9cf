"""Writes Rust declarations of object types registered by another library (C++ ones, typically),
from the runtime's reflection: the counterpart of ``tvm-ffi-stubgen --target rust`` for the
tvm-ffi Rust SDK.

    python tvm_ffi_rust_mirror.py --import tvm_ffi.testing --prefix ffi. --prefix testing. \\
        --out src/testing.rs
    python tvm_ffi_rust_mirror.py --load libmy_cxx.so --prefix my_cxx. --out src/my_cxx.rs

Each type under the prefix becomes an ``external`` declaration (``#[derive(Object)]``,
``#[ffi_type(key = "..", external)]``, its parent as ``#[ffi(base)]``, every reflected field as
``Rw<T>`` of the type its schema names) with the ``unsafe impl ExternalType`` the SDK requires,
and typed wrappers of its instance methods (and of ``__ffi_init__`` as ``new``). The SDK checks
every declaration against the runtime's reflection when the library that contains it loads
(parent, size, each field's name, offset, size, storage and schema): a generated file that no
longer matches is a load error naming the type and the field, never a misread.

A type whose fields or parent cannot be expressed (a ``Variant`` field, a parent left out) is
listed in a comment with the reason, and so are the types the SDK provides itself (``ffi.Array``
is ``tvm_ffi::Array``, ...). Standard library and ``tvm_ffi`` only.
"""
from __future__ import annotations

import argparse
import importlib
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Types the SDK declares itself: never mirrored.
_BUILTIN = {
    "ffi.Object": "tvm_ffi::ObjectRef<tvm_ffi::builtin::AnyObject>",
    "ffi.Array": "tvm_ffi::Array",
    "ffi.List": "tvm_ffi::List",
    "ffi.Map": "tvm_ffi::Map",
    "ffi.Dict": "tvm_ffi::Dict",
    "ffi.String": "tvm_ffi::String",
    "ffi.Bytes": "tvm_ffi::Bytes",
    "ffi.Shape": "tvm_ffi::Shape",
    "ffi.Tensor": "tvm_ffi::Tensor",
    "ffi.Function": "tvm_ffi::Function",
    "ffi.Module": "tvm_ffi::Module",
    "ffi.Error": "tvm_ffi::Error",
    "ffi.BigInt": "tvm_ffi::BigInt",
    "ffi.SmallStr": "tvm_ffi::String",
    "ffi.SmallBytes": "tvm_ffi::Bytes",
}

# Object types C++ never holds null (the SDK's check lets their fields be declared without
# `Option`).
_NON_NULLABLE = frozenset({"ffi.Array", "ffi.Map", "ffi.List", "ffi.Dict", "ffi.Shape"})

_RUST_KEYWORDS = frozenset(
    """as break const continue crate else enum extern false fn for if impl in let loop match mod
    move mut pub ref return self Self static struct super trait true type unsafe use where while
    async await dyn abstract become box do final macro override priv typeof unsized virtual yield
    try gen""".split()
)


class Unsupported(Exception):
    """A schema this generator cannot express in Rust."""


@dataclass
class Method:
    name: str
    is_static: bool
    params: list[dict]
    ret: dict


@dataclass
class TypeDesc:
    key: str
    parent: str | None
    total_size: int
    fields: list[tuple[str, int, dict]]  # (name, size, schema), own fields in offset order
    methods: list[Method]
    layout: list[tuple[str, int, int, int, int]] = field(default_factory=list)
    # ^ (name, offset, size, alignment, static type index) of each own field
    rust_name: str = ""
    skipped: str | None = None  # why it is not declared
    lines: list[str] = field(default_factory=list)


def _schema(metadata: dict | None) -> dict | None:
    text = (metadata or {}).get("type_schema")
    return json.loads(text) if text else None


def read_types(prefixes: list[str]) -> dict[str, TypeDesc]:
    """Every registered type under one of `prefixes` (the libraries are loaded already), by
    key."""
    import tvm_ffi
    from tvm_ffi import core

    types = {}
    for key in sorted(str(k) for k in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")()):
        if not key.startswith(tuple(prefixes)):
            continue
        if key in _BUILTIN:
            types[key] = TypeDesc(key, None, 0, [], [], skipped=f"the SDK declares it (`{_BUILTIN[key]}`)")
            continue
        try:
            info = core._lookup_or_register_type_info_from_type_key(key)
            total_size = info.total_size
        except (ValueError, RuntimeError) as err:  # e.g. a parent Python cannot resolve
            types[key] = TypeDesc(key, None, 0, [], [], skipped=f"its reflection is unreadable ({err})")
            continue
        own = sorted(info.fields, key=lambda f: f.offset)
        fields = [(f.name, f.size, _schema(f.metadata) or {}) for f in own]
        layout = [(f.name, f.offset, f.size, f.alignment, f.field_static_type_index) for f in own]
        methods = []
        for m in info.methods:
            schema = _schema(m.metadata)
            if schema and "named_args" in schema:
                named = schema["named_args"]
                methods.append(Method(m.name, m.is_static, named.get("params", []), named.get("return", [{}])[0]))
        parent = info.parent_type_info.type_key if info.parent_type_info else None
        types[key] = TypeDesc(key, parent, total_size, fields, methods, layout)
    return types


def _ident(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return f"r#{ident}" if ident in _RUST_KEYWORDS and ident not in ("self", "Self", "crate", "super") else (
        ident + "_" if ident in ("self", "Self", "crate", "super") else ident)


def _type_name(key: str, taken: set[str]) -> str:
    last = key.split(".")[-1]
    name = re.sub(r"\W", "_", last[:1].upper() + last[1:])
    if name in taken:  # two keys ending alike: the whole key, CamelCased
        name = "".join(part[:1].upper() + part[1:] for part in re.split(r"\W", key) if part)
    taken.add(name)
    return name


class _Renderer:
    def __init__(self, types: dict[str, TypeDesc]):
        self.types = types
        taken: set[str] = set()
        for t in types.values():
            t.rust_name = _type_name(t.key, taken)

    def field_type(self, schema: dict, size: int, static_index: int) -> str:
        """The Rust type of a field: a C++ object reference (8 bytes, an object type other
        than the containers C++ never holds null) may be null, so it is an `Option`."""
        if size == 8 and static_index == -1:
            raise Unsupported("stored in 8 bytes under type index -1 (a C++ `Optional` of an "
                              "object), which no Rust field type reports")
        rust = self.rust_type(schema, size)
        if (size == 8 and static_index >= 64 and schema.get("type") != "Optional"
                and schema.get("type") not in _NON_NULLABLE):
            return f"Option<{rust}>"
        return rust

    def hidden_bytes(self, t: TypeDesc) -> str | None:
        """Why a `#[repr(C)]` struct of the declared fields would not have the type's layout:
        bytes the runtime does not reflect (a C++ vtable, a field without reflection) or
        fields sharing memory. An `external` declaration lists every byte by its fields."""
        parent = self.types.get(t.parent) if t.parent not in (None, "ffi.Object") else None
        cursor = parent.total_size if parent is not None else 24
        for name, offset, size, alignment, _ in t.layout:
            natural = -(-cursor // max(alignment, 1)) * max(alignment, 1)
            if offset != natural:
                return (f"field `{name}` is at offset {offset} where a `#[repr(C)]` struct puts it at "
                        f"{natural} (memory the runtime does not reflect, or shared with another field)")
            cursor = offset + size
        end = -(-cursor // 8) * 8
        if end != t.total_size:
            return (f"its size is {t.total_size} bytes, its reflected fields cover {end} (memory the "
                    f"runtime does not reflect: a C++ vtable or an unreflected field)")
        return None

    def rust_type(self, schema: dict, size: int | None = None) -> str:
        """The Rust type of a value of `schema` (a field of `size` bytes, or an element)."""
        origin = schema.get("type", "Any")
        args = schema.get("args", [])
        if origin == "int":
            return {4: "i32", 2: "i16", 1: "i8"}.get(size or 8, "i64")
        if origin == "float":
            return "f32" if size == 4 else "f64"
        if origin == "bool":
            return "bool"
        if origin == "Device":
            return "tvm_ffi::Device"
        if origin == "DataType":
            return "tvm_ffi::DataType"
        if origin == "Any":
            return "tvm_ffi::Any"
        if origin == "Optional":
            return f"Option<{self.rust_type(args[0])}>"
        if origin in ("ffi.Array", "ffi.List"):
            elem = self.rust_type(args[0]) if args else "tvm_ffi::Any"
            return f"{_BUILTIN[origin]}<{elem}>"
        if origin in ("ffi.Map", "ffi.Dict"):
            k = self.rust_type(args[0]) if args else "tvm_ffi::Any"
            v = self.rust_type(args[1]) if len(args) > 1 else "tvm_ffi::Any"
            return f"{_BUILTIN[origin]}<{k}, {v}>"
        if origin in _BUILTIN:
            return _BUILTIN[origin]
        target = self.types.get(origin)
        if target is not None and target.skipped is None:
            return f"tvm_ffi::ObjectRef<{target.rust_name}>"
        raise Unsupported(f"`{origin}`" + ("" if target is None else " is not declared here"))

    def decide(self) -> None:
        """Which types can be declared: a skipped parent or field type skips the type, to a
        fixed point."""
        changed = True
        while changed:
            changed = False
            for t in self.types.values():
                if t.skipped is not None:
                    continue
                reason = None
                if t.parent not in (None, "ffi.Object"):
                    parent = self.types.get(t.parent)
                    if parent is None:
                        reason = f"its parent `{t.parent}` is outside the prefix"
                    elif parent.skipped is not None:
                        reason = f"its parent `{t.parent}` is not declared"
                for (name, size, schema), (_, _, _, _, index) in zip(t.fields, t.layout):
                    if reason:
                        break
                    try:
                        self.field_type(schema, size, index)
                    except Unsupported as err:
                        reason = f"field `{name}` has the type {err}"
                reason = reason or self.hidden_bytes(t)
                if reason:
                    t.skipped, changed = reason, True

    def declaration(self, t: TypeDesc) -> list[str]:
        lines = [
            f"/// The type `{t.key}` ({t.total_size} bytes), declared from the runtime's reflection.",
            "#[derive(Object)]",
            f'#[ffi_type(key = "{t.key}", external)]',
            "#[repr(C)]",
            f"pub struct {t.rust_name} {{",
        ]
        if t.parent not in (None, "ffi.Object"):
            lines += [f"    /// The parent, `{t.parent}`.", "    #[ffi(base)]",
                      f"    pub base: {self.types[t.parent].rust_name},"]
        for (name, size, schema), (_, _, _, _, index) in zip(t.fields, t.layout):
            ident = _ident(name)
            rename = f'    #[ffi(name = "{name}")]\n' if ident != name else ""
            lines.append(f"    /// Field `{name}`: `{json.dumps(schema, separators=(',', ':'))}`.")
            if rename:
                lines.append(rename.rstrip("\n"))
            lines.append(f"    pub {ident}: tvm_ffi::Rw<{self.field_type(schema, size, index)}>,")
        lines += [
            "}",
            "",
            "// SAFETY: as the file's header says.",
            f"unsafe impl tvm_ffi::ExternalType for {t.rust_name} {{}}",
        ]
        methods = self.methods(t)
        if methods:
            lines += ["", f"impl {t.rust_name} {{"] + methods + ["}"]
        return lines

    def methods(self, t: TypeDesc) -> list[str]:
        out = []
        for m in t.methods:
            try:
                ret = self.rust_type(m.ret)
                if m.is_static and m.name == "__ffi_init__":
                    params = [self.rust_type(p) for p in m.params]
                    ret = f"tvm_ffi::ObjectRef<{t.rust_name}>"
                    receiver = None
                elif m.is_static or m.name.startswith("__"):
                    continue
                else:
                    params = [self.rust_type(p) for p in m.params[1:]]
                    receiver = "this: &tvm_ffi::ObjectRef<Self>"
            except Unsupported as err:
                out.append(f"    // `{m.name}` is not wrapped: a parameter or its result has the type {err}.")
                continue
            args = [f"arg{i}: {p}" for i, p in enumerate(params)]
            call_args = "".join(f"arg{i}, " for i in range(len(params)))
            signature = ", ".join(([receiver] if receiver else []) + args)
            if receiver is None:
                out += [
                    "",
                    f"    /// A new `{t.key}` through its registered constructor (`__ffi_init__`).",
                    f"    pub fn new({signature}) -> tvm_ffi::Result<{ret}> {{",
                    f"        tvm_ffi::reflection::type_attr(<Self as tvm_ffi::ObjectType>::type_index(), \"__ffi_init__\")",
                    f"            .ok_or_else(|| tvm_ffi::Error::runtime_error(\"`{t.key}` has no constructor\"))?",
                    "            .cast::<tvm_ffi::Function>()?",
                    f"            .call_as::<{ret}, _>(({call_args}))",
                    "    }",
                ]
            else:
                out += [
                    "",
                    f"    /// The method `{m.name}` of `{t.key}`.",
                    f"    pub fn {_ident(m.name)}({signature}) -> tvm_ffi::Result<{ret}> {{",
                    f'        this.call_method("{m.name}", ({call_args}))',
                    "    }",
                ]
        return out


def render(types: dict[str, TypeDesc], prefixes: list[str], source: str) -> str:
    renderer = _Renderer(types)
    renderer.decide()
    under = ", ".join(f'"{p}"' for p in prefixes)
    out = [
        f"// Generated by tvm_ffi_rust_mirror.py from the runtime's reflection ({source}; the types",
        f"// under {under}): do not edit; regenerate after the declaring library changes.",
        "//",
        "// SAFETY (of each `unsafe impl ExternalType` below): the declarations are the runtime's",
        "// reflection of the types, and the SDK checks each against it when this library loads",
        "// (parent, size, every field's name, offset, size, storage and schema). What it cannot",
        "// see is trusted: the defining code keeps each field a valid value of its declared type",
        "// and stores null only in fields declared `Option`.",
        "#![allow(missing_docs, clippy::all)]",
        "",
        "use tvm_ffi::Object;",
    ]
    declared = [t for t in types.values() if t.skipped is None]
    # Parents first: a reader sees each base declared before its use.
    ordered: list[TypeDesc] = []
    seen: set[str] = set()

    def visit(t: TypeDesc) -> None:
        if t.key in seen:
            return
        seen.add(t.key)
        if t.parent in types and types[t.parent].skipped is None:
            visit(types[t.parent])
        ordered.append(t)

    for t in declared:
        visit(t)
    for t in ordered:
        out.append("")
        out += renderer.declaration(t)
    skipped = [t for t in types.values() if t.skipped is not None]
    if skipped:
        out += ["", "// Not declared:"]
        out += [f"// - `{t.key}`: {t.skipped}" for t in skipped]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", action="append", default=[], help="a library to load first")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="a Python module to import first (one that loads the library)")
    parser.add_argument("--prefix", required=True, action="append",
                        help="type keys starting with this (repeatable)")
    parser.add_argument("--out", required=True, help="the Rust file to write")
    args = parser.parse_args(argv)
    import tvm_ffi

    for module in args.imports:
        importlib.import_module(module)
    for library in args.load:
        tvm_ffi.load_module(library)
    types = read_types(args.prefix)
    if not types:
        print(f"error: no type is registered under {args.prefix}", file=sys.stderr)
        return 1
    source = ", ".join([f"import {m}" for m in args.imports] + [Path(lib).name for lib in args.load]) or "tvm_ffi"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.write_text(render(types, args.prefix, source))
    # Formatted as `cargo fmt` would, where rustfmt is at hand (the file is checked in).
    if shutil.which("rustfmt"):
        subprocess.run(["rustfmt", "--edition", "2021", str(out)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
