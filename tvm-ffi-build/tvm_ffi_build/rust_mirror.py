"""Writes Rust declarations of object types registered by another library (C++ ones, typically),
from the runtime's reflection: the counterpart of ``tvm-ffi-stubgen --target rust`` for the
tvm-ffi Rust SDK.

    python -m tvm_ffi_build.rust_mirror --import tvm_ffi.testing --prefix ffi. --prefix testing. \\
        --out src/testing.rs
    python -m tvm_ffi_build.rust_mirror --load libmy_cxx.so --prefix my_cxx. --out src/my_cxx.rs \\
        --report coverage.md

Every type under the prefixes, and every type they reach (parents, types named by field
schemas), ends in one of three outcomes, which ``--report`` lists one line per type key:

- *complete*: an ``external`` declaration (``#[derive(Object)]``, its parent as
  ``#[ffi(base)]``, every reflected field as ``Rw<T>`` of the type its schema names) with the
  ``unsafe impl ExternalType`` the SDK requires, a typed accessor per field (a required object
  field read as a value, a C++ ``Optional`` as an ``Option``), ``from_fields`` (the node
  allocated by Rust from every field's value, where the runtime allocates the type itself:
  ``__ffi_new__``), ``Clone`` (a typed, lossless rebuild: clone the fields, set one, allocate
  the copy with ``ObjectRef::new``), and typed wrappers of its instance methods (and of ``__ffi_init__`` as
  ``new``). The generator checks the layout, and the SDK
  checks every declaration against the runtime's reflection when the library that contains it
  loads (parent, size, each field's name, offset, size, storage and schema): a generated file
  that no longer matches is a load error naming the type and the field, never a misread.
- *opaque*: ``#[ffi_type(key = "..", external, opaque)]``, a typed handle declaring only its
  parent, with the blocker named (bytes the runtime does not reflect, such as a C++ vtable or
  STL storage; a field of a type Rust cannot express; an opaque parent); its own fields are
  read through the getters its library registered.
- *refused*: not declared, the reason listed at the end of the file (a refused parent, a parent
  the SDK provides, unreadable reflection). The types the SDK provides itself (``ffi.Array`` is
  ``tvm_ffi::Array``, ...) are listed there too.

C++ enums: reflection registers an enum field as a plain ``int``, without its names. ``--enum
tirx.For.kind=tvm.tirx.ForKind`` names one: the field's accessor returns (and ``from_fields``
takes) an open integer newtype, ``pub struct ForKind(pub i32)``, with a constant per member of
the Python ``IntEnum`` (``ForKind::SERIAL``); a value the bindings do not name (from a newer
library) is kept as it is (``ForKind::name`` is then ``None``). The storage stays the field's
integer, so the layout check is unchanged.

Names: a type is named after the last part of its key (its whole key in CamelCase where two keys
end alike or the name is in Rust's prelude); the parent field is ``base`` (``base_`` where the
type has a field of that name); a method wrapper whose name an accessor has is ``call_<name>``.
Standard library and ``tvm_ffi`` only.
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
class EnumDesc:
    """A C++ enum named by ``--enum``: its Rust newtype, its integer, its members."""
    rust_name: str
    source: str  # the Python class, `module.Class`
    members: list[tuple[str, int]]  # (Rust constant name, value), in the class's order
    fields: list[str] = field(default_factory=list)  # `key.field` of each field it types
    int_type: str = ""  # the fields' Rust integer (one for all)


def read_enum(path: str) -> tuple[str, list[tuple[str, int]]]:
    """The name and members of the Python `IntEnum` at `path` (`module.Class`)."""
    import enum

    module, _, name = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as err:
        raise SystemExit(f"error: --enum: cannot import `{path}` ({err})") from None
    if not (isinstance(cls, type) and issubclass(cls, enum.IntEnum)):
        raise SystemExit(f"error: --enum: `{path}` is not an `enum.IntEnum`")
    # Upper snake case, as Rust constants are named (`kDefault` -> `K_DEFAULT`); aliases kept.
    members = [(_ident(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", member).upper()), int(value))
               for member, value in cls.__members__.items()]
    return name, members


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
    # The outcome: "complete", "opaque", "refused" or "sdk" (a type the SDK declares itself).
    outcome: str = "complete"
    reason: str = ""  # an opaque type's blocker, a refused one's reason, the SDK's type
    reached_from: str | None = None  # None: under a prefix; else the type that reaches it
    base_ident: str = "base"  # the Rust name of the `#[ffi(base)]` field
    defaults: set[str] = field(default_factory=set)  # own fields with a registered default
    allocatable: bool = False  # whether the runtime allocates it itself (`__ffi_new__`)
    metadata_only: set[str] = field(default_factory=set)  # own fields structural equality ignores

    def required(self, name: str, schema: dict) -> bool:
        """Whether an object field is required (read as a value, never null): its schema is
        not `Optional`, it has no registered default (a default, such as a null `Span`, makes
        it optional), and structural equality does not ignore it (a field outside the node's
        value, such as a source span, may be absent)."""
        return (schema.get("type") != "Optional" and name not in self.defaults
                and name not in self.metadata_only)


def _schema(metadata: dict | None) -> dict | None:
    text = (metadata or {}).get("type_schema")
    return json.loads(text) if text else None


def _schema_keys(schema: dict):
    """Every type named in a schema (its origin and its arguments')."""
    yield schema.get("type", "Any")
    for arg in schema.get("args", []):
        yield from _schema_keys(arg)


def _describe(key: str) -> TypeDesc:
    from tvm_ffi import core

    if key in _BUILTIN:
        return TypeDesc(key, None, 0, [], [], outcome="sdk", reason=f"the SDK declares it (`{_BUILTIN[key]}`)")
    try:
        info = core._lookup_or_register_type_info_from_type_key(key)
        total_size = info.total_size
    except (ValueError, RuntimeError) as err:  # e.g. a parent Python cannot resolve
        return TypeDesc(key, None, 0, [], [], outcome="refused", reason=f"its reflection is unreadable ({err})")
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
    defaults = {f.name for f in own if getattr(f, "c_has_default", False)}
    allocatable = core._lookup_type_attr(info.type_index, "__ffi_new__") is not None
    metadata_only = {f.name for f in own if getattr(f, "c_structural_eq", None) == "ignore"}
    return TypeDesc(key, parent, total_size, fields, methods, layout, defaults=defaults,
                    allocatable=allocatable, metadata_only=metadata_only)


def _is_object_type(key: str) -> bool:
    """Whether `key` names an object type (not one of the runtime's value types, below
    `ffi.Object`'s index 64)."""
    from tvm_ffi import core

    try:
        return core._lookup_or_register_type_info_from_type_key(key).type_index >= 64
    except (ValueError, RuntimeError):
        return key not in ("None", "int", "bool", "float", "void*", "DataType", "Device",
                           "DLTensor*", "const char*", "TVMFFIByteArray*", "ffi.SmallStr",
                           "ffi.SmallBytes")


def read_types(prefixes: list[str]) -> dict[str, TypeDesc]:
    """Every registered type under one of `prefixes` (the libraries are loaded already), and
    every registered type those reach (parents, types named by field schemas), by key."""
    import tvm_ffi

    registered = sorted(str(k) for k in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")())
    # Object types only (a schema's `int`, `DataType`, .. are registered value types).
    known = {key for key in registered if _is_object_type(key)}
    types = {key: _describe(key) for key in registered if key.startswith(tuple(prefixes))}
    pending = sorted(types)
    while pending:
        t = types[pending.pop(0)]
        reached = ([t.parent] if t.parent else []) + [k for _, _, s in t.fields for k in _schema_keys(s)]
        for key in reached:
            if key in known and key not in types and key != "ffi.Object":
                types[key] = _describe(key)
                types[key].reached_from = t.key
                pending.append(key)
    return dict(sorted(types.items()))


def _ident(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    return f"r#{ident}" if ident in _RUST_KEYWORDS and ident not in ("self", "Self", "crate", "super") else (
        ident + "_" if ident in ("self", "Self", "crate", "super") else ident)


# Names of Rust's prelude (and of the traits the generated code derives) that a generated type
# must not shadow.
_RESERVED_TYPE_NAMES = frozenset(
    "Option Some None Result Ok Err Box Vec String ToString ToOwned Clone Copy Send Sync Sized "
    "Unpin Drop Fn FnMut FnOnce Default Eq PartialEq Ord PartialOrd Iterator IntoIterator "
    "Extend Into From TryFrom TryInto AsRef AsMut Debug Object".split())


def _type_name(key: str, taken: set[str]) -> str:
    last = key.split(".")[-1]
    name = re.sub(r"\W", "_", last[:1].upper() + last[1:])
    if name in taken or name in _RESERVED_TYPE_NAMES:  # the whole key, CamelCased
        name = "".join(part[:1].upper() + part[1:] for part in re.split(r"\W", key) if part)
    taken.add(name)
    return name


class _Renderer:
    def __init__(self, types: dict[str, TypeDesc], enums: dict[tuple[str, str], EnumDesc] | None = None):
        self.types = types
        self.enums = enums or {}
        taken: set[str] = set()
        for t in types.values():
            t.rust_name = _type_name(t.key, taken)
            # The parent field is `base`, or `base_` (`base__`, ..) where the type has a field
            # of that Rust name (`prim.Ramp.base`).
            own = {_ident(name) for name, _, _ in t.fields}
            while t.base_ident in own:
                t.base_ident += "_"
        for e in {id(e): e for e in self.enums.values()}.values():
            if e.rust_name in taken or e.rust_name in _RESERVED_TYPE_NAMES:
                raise SystemExit(f"error: --enum: the name `{e.rust_name}` of `{e.source}` is taken by a type")

    def check_enums(self) -> None:
        """Each `--enum` field exists, is a declared type's integer field; one integer per enum
        (after `decide`)."""
        for (key, name), e in sorted(self.enums.items()):
            t = self.types.get(key)
            schema = next((sch for n, _, sch in t.fields if n == name), None) if t else None
            if t is None or t.outcome not in ("complete", "opaque") or schema is None:
                raise SystemExit(f"error: --enum: `{key}.{name}` is not a field of a declared type")
            if schema.get("type") != "int":
                raise SystemExit(f"error: --enum: `{key}.{name}` is not an integer field ({json.dumps(schema)})")
            if t.outcome == "complete":
                size, index = next((sz, i) for (n, sz, _), (_, _, _, _, i) in zip(t.fields, t.layout) if n == name)
                int_type = self.field_type(schema, size, index)
                if e.int_type and e.int_type != int_type:
                    raise SystemExit(f"error: --enum: `{e.source}` types fields of {e.int_type} and {int_type}")
                e.int_type = int_type
            e.fields.append(f"{key}.{name}")
        for e in self.enums.values():
            e.int_type = e.int_type or "i64"  # only opaque types' fields: read as the getter returns

    def enum_declarations(self) -> list[str]:
        """The open integer newtype of each `--enum`, in name order."""
        out = []
        for e in sorted({id(e): e for e in self.enums.values()}.values(), key=lambda e: e.rust_name):
            fields = ", ".join(f"`{f}`" for f in e.fields)
            out += [
                "",
                f"/// The C++ enum of {fields} (its names: Python's `{e.source}`).",
                "/// Open: a value these bindings do not name (from a newer library) is kept as it is.",
                "#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]",
                "#[repr(transparent)]",
                f"pub struct {e.rust_name}(pub {e.int_type});",
                "",
                f"impl {e.rust_name} {{",
            ]
            out += [f"    pub const {name}: Self = Self({value});" for name, value in e.members]
            arms, seen = [], set()
            for name, value in e.members:
                if value not in seen:  # an alias keeps the first name
                    seen.add(value)
                    arms.append(f'            {value} => Some("{name}"),')
            out += [
                "",
                "    /// The name of the value's constant; `None` for a value these bindings do not name.",
                "    pub fn name(self) -> Option<&'static str> {",
                "        match self.0 {",
                *arms,
                "            _ => None,",
                "        }",
                "    }",
                "}",
            ]
        return out

    def field_type(self, schema: dict, size: int, static_index: int) -> str:
        """The Rust storage of a field: a C++ object reference (8 bytes, an object type other
        than the containers C++ never holds null) may be null, so it is stored as an `Option`
        (its accessor returns it unwrapped where the schema does not say `Optional`). A C++
        `Optional` of an object is one pointer too, which C++ reports under the type index -1."""
        if size == 8 and static_index == -1:
            if schema.get("type") != "Optional" or not schema.get("args"):
                raise Unsupported("stored in 8 bytes under type index -1 without an `Optional` schema")
            inner = self.rust_type(schema["args"][0], 8)
            if not self.is_pointer(schema["args"][0]):
                raise Unsupported(f"`Optional` of `{schema['args'][0].get('type')}` in 8 bytes")
            return f"Option<{inner}>"
        if size == 16 and schema.get("type") == "Optional" and schema.get("args"):
            # An `Optional` of a value (an integer, a string, ..) is a 16-byte `Any`.
            return f"tvm_ffi::Optional<{self.rust_type(schema['args'][0])}>"
        rust = self.rust_type(schema, size)
        if (size == 8 and static_index >= 64 and schema.get("type") != "Optional"
                and schema.get("type") not in _NON_NULLABLE):
            return f"Option<{rust}>"
        return rust

    def is_pointer(self, schema: dict) -> bool:
        """Whether a value of `schema` is stored as one object pointer."""
        origin = schema.get("type")
        return origin in self.types and self.types[origin].outcome in ("complete", "opaque") or (
            origin in _BUILTIN and origin not in ("ffi.String", "ffi.Bytes", "ffi.SmallStr", "ffi.SmallBytes"))

    def hidden_bytes(self, t: TypeDesc) -> str | None:
        """Why a `#[repr(C)]` struct of the declared fields would not have the type's layout:
        bytes the runtime does not reflect (a C++ vtable, a field without reflection) or
        fields sharing memory. An `external` declaration lists every byte by its fields."""
        parent = self.types.get(t.parent) if t.parent not in (None, "ffi.Object") else None
        cursor = parent.total_size if parent is not None else 24
        for name, offset, size, alignment, _ in t.layout:
            natural = -(-cursor // max(alignment, 1)) * max(alignment, 1)
            if offset != natural:
                return (f"unreflected bytes: field `{name}` is at offset {offset} where a `#[repr(C)]` "
                        f"struct puts it at {natural} (memory the runtime does not reflect, or shared "
                        f"with another field)")
            cursor = offset + size
        end = -(-cursor // 8) * 8
        if end != t.total_size:
            return (f"unreflected bytes: its size is {t.total_size} bytes, its reflected fields cover "
                    f"{end} (a C++ vtable or an unreflected field, such as STL storage)")
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
        if origin == "Variant":
            raise Unsupported("`Variant`, which the generated declarations do not express")
        target = self.types.get(origin)
        if target is not None and target.outcome in ("complete", "opaque"):
            return f"tvm_ffi::ObjectRef<{target.rust_name}>"
        if target is None:
            raise Unsupported(f"`{origin}`, which is not a registered type")
        raise Unsupported(f"`{origin}`, which is refused")

    def decide(self) -> None:
        """Each type's outcome, to a fixed point (outcomes only ever fall: complete, then
        opaque, then refused). A refused parent refuses the type; an opaque parent, bytes the
        runtime does not reflect, or a field no Rust type expresses make it opaque (a typed
        handle, its parent's fields readable)."""
        changed = True
        while changed:
            changed = False
            for t in self.types.values():
                if t.outcome in ("refused", "sdk"):
                    continue
                outcome, reason = "complete", ""
                if t.parent not in (None, "ffi.Object"):
                    parent = self.types.get(t.parent)
                    if parent is None or parent.outcome == "sdk":
                        outcome, reason = "refused", f"its parent `{t.parent}` is a type of the SDK, which a declaration cannot extend"
                    elif parent.outcome == "refused":
                        outcome, reason = "refused", f"its parent `{t.parent}` is refused"
                    elif parent.outcome == "opaque":
                        outcome, reason = "opaque", f"its parent `{t.parent}` is opaque"
                if outcome == "complete":
                    for (name, size, schema), (_, _, _, _, index) in zip(t.fields, t.layout):
                        try:
                            self.field_type(schema, size, index)
                        except Unsupported as err:
                            outcome, reason = "opaque", f"field `{name}` has the type {err}"
                            break
                if outcome == "complete":
                    hidden = self.hidden_bytes(t)
                    if hidden:
                        outcome, reason = "opaque", hidden
                if outcome != t.outcome:
                    t.outcome, t.reason, changed = outcome, reason, True

    def declaration(self, t: TypeDesc) -> list[str]:
        opaque = t.outcome == "opaque"
        doc = (f"/// The type `{t.key}` ({t.total_size} bytes), declared from the runtime's reflection"
               + (f": opaque ({t.reason}), its own fields are not declared." if opaque else "."))
        lines = [
            doc,
            # `Clone` (complete types): a typed, lossless rebuild, `let mut n = (*node).clone();`,
            # a field set, `ObjectRef::new(n)` (a required field C++ left null stays null).
            "#[derive(tvm_ffi::Object)]" if opaque else "#[derive(tvm_ffi::Object, Clone)]",
            f'#[ffi_type(key = "{t.key}", external{", opaque" if opaque else ""})]',
            "#[repr(C)]",
            f"pub struct {t.rust_name} {{",
        ]
        if t.parent not in (None, "ffi.Object"):
            lines += [f"    /// The parent, `{t.parent}`.", "    #[ffi(base)]",
                      f"    pub {t.base_ident}: {self.types[t.parent].rust_name},"]
        accessors = []
        for (name, size, schema), (_, _, _, _, index) in ([] if opaque else zip(t.fields, t.layout)):
            ident = _ident(name)
            storage = self.field_type(schema, size, index)
            enum = self.enums.get((t.key, name))
            lines.append(f"    /// Field `{name}`: `{json.dumps(schema, separators=(',', ':'))}`"
                         + (f", the C++ enum [`{enum.rust_name}`]." if enum else "."))
            if ident != name:
                lines.append(f'    #[ffi(name = "{name}")]')
            lines.append(f"    pub {ident}: tvm_ffi::Rw<{storage}>,")
            required = storage.startswith("Option<") and t.required(name, schema)
            if enum:
                accessors += [
                    "",
                    f"    /// Field `{name}`.",
                    f"    pub fn {ident}(&self) -> {enum.rust_name} {{",
                    f"        {enum.rust_name}(self.{ident}.get())",
                    "    }",
                ]
            elif storage.startswith("tvm_ffi::Optional<"):
                accessors += [
                    "",
                    f"    /// Field `{name}`.",
                    f"    pub fn {ident}(&self) -> Option<{storage[len('tvm_ffi::Optional<'):-1]}> {{",
                    f"        self.{ident}.get().get()",
                    "    }",
                ]
            elif required:
                value = storage[len("Option<"):-1]
                accessors += [
                    "",
                    f"    /// Field `{name}` (required: not `Optional`, no default, part of the node's",
                    "    /// structural value; panics if C++ left it null).",
                    f"    pub fn {ident}(&self) -> {value} {{",
                    f"        self.{ident}.get().expect(\"the required field `{name}` of `{t.key}` is null\")",
                    "    }",
                ]
            else:
                accessors += [
                    "",
                    f"    /// Field `{name}`.",
                    f"    pub fn {ident}(&self) -> {storage} {{",
                    f"        self.{ident}.get()",
                    "    }",
                ]
        lines += [
            "}",
            "",
            "// SAFETY: as the file's header says.",
            f"unsafe impl tvm_ffi::ExternalType for {t.rust_name} {{}}",
        ]
        if opaque:
            accessors = self.getter_accessors(t)
        taken = {_ident(name) for name, _, _ in t.fields}
        if not opaque and t.allocatable:
            lines += [
                "",
                f"// SAFETY: every byte of `{t.key}` is a declared field (checked at load), so the Rust",
                "// deleter, which drops each field, destroys it as its C++ destructor does; the runtime",
                "// allocates it itself (`__ffi_new__`), so it is a type objects are made of.",
                f"unsafe impl tvm_ffi::object::RustObject for {t.rust_name} {{}}",
            ]
            accessors = self.constructor(t, taken) + accessors
        body = accessors + self.methods(t, taken)
        if body:
            lines += ["", f"impl {t.rust_name} {{"] + body[1:] + ["}"]
        return lines

    def chain(self, t: TypeDesc) -> list[TypeDesc]:
        """`t` and its declared ancestors, the root first."""
        chain = [t]
        while chain[0].parent not in (None, "ffi.Object") and chain[0].parent in self.types:
            chain.insert(0, self.types[chain[0].parent])
        return chain

    def constructor(self, t: TypeDesc, taken: set[str]) -> list[str]:
        """`from_fields`: the object allocated by Rust from the value of every field, the
        parents' first, each of the exact type its storage holds (a required object as a value,
        a C++ `Optional` as an `Option`)."""
        params, names = [], set()
        values: dict[str, str] = {}  # (type key, field name) -> the expression of its storage
        for part in self.chain(t):
            for (name, size, schema), (_, _, _, _, index) in zip(part.fields, part.layout):
                storage = self.field_type(schema, size, index)
                param = _ident(name)
                while param in names:
                    param += "_"
                names.add(param)
                required = storage.startswith("Option<") and part.required(name, schema)
                enum = self.enums.get((part.key, name))
                if enum:
                    params.append(f"{param}: {enum.rust_name}")
                    values[(part.key, name)] = f"tvm_ffi::Rw::new({param}.0)"
                elif required:
                    params.append(f"{param}: {storage[len('Option<'):-1]}")
                    values[(part.key, name)] = f"tvm_ffi::Rw::new(Some({param}))"
                else:
                    params.append(f"{param}: {storage}")
                    values[(part.key, name)] = f"tvm_ffi::Rw::new({param})"

        def literal(part: TypeDesc) -> str:
            inits = []
            if part.parent not in (None, "ffi.Object") and part.parent in self.types:
                inits.append(f"{part.base_ident}: {literal(self.types[part.parent])}")
            inits += [f"{_ident(name)}: {values[(part.key, name)]}" for name, _, _ in part.fields]
            return f"{part.rust_name} {{ {', '.join(inits)} }}"

        name = "from_fields"
        while name in taken:
            name += "_"
        taken.add(name)
        return [
            "",
            f"    /// A new `{t.key}` allocated by Rust, from the value of every field (the parents'",
            "    /// first); C++ reads it through its own getters and destroys it through the Rust deleter.",
            f"    pub fn {name}({', '.join(params)}) -> tvm_ffi::ObjectRef<Self> {{",
            f"        tvm_ffi::ObjectRef::new({literal(t)})",
            "    }",
        ]

    def getter_accessors(self, t: TypeDesc) -> list[str]:
        """Accessors of an opaque type's own fields, read through the getters its library
        registered (not in place: Rust does not declare the type's memory); a field whose type
        Rust cannot express is read as an `Any`."""
        out = []
        for name, _, schema in t.fields:
            ident = _ident(name)
            try:
                value = self.rust_type(schema)
                if (schema.get("type") != "Optional" and not t.required(name, schema)
                        and self.is_pointer(schema) and schema.get("type") not in _NON_NULLABLE):
                    value = f"Option<{value}>"
            except Unsupported:
                value = None
            enum = self.enums.get((t.key, name))
            if enum:
                out += [
                    "",
                    f"    /// Field `{name}`, the C++ enum [`{enum.rust_name}`], read through its registered getter.",
                    f"    pub fn {ident}(this: &tvm_ffi::ObjectRef<Self>) -> tvm_ffi::Result<{enum.rust_name}> {{",
                    f'        this.get_field::<{enum.int_type}>("{name}").map({enum.rust_name})',
                    "    }",
                ]
                continue
            out += [
                "",
                f"    /// Field `{name}` (`{json.dumps(schema, separators=(',', ':'))}`), read through its "
                "registered getter.",
                f"    pub fn {ident}(this: &tvm_ffi::ObjectRef<Self>) -> tvm_ffi::Result<{value or 'tvm_ffi::Any'}> {{",
                f'        this.get_field{"" if value else "_any"}("{name}")',
                "    }",
            ]
        return out

    def methods(self, t: TypeDesc, taken: set[str]) -> list[str]:
        """Wrappers of the type's instance methods and constructor; a name an accessor has
        already is prefixed `call_` (`new_` for the constructor)."""
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
                name = "new"
                while name in taken:
                    name += "_"
                taken.add(name)
                out += [
                    "",
                    f"    /// A new `{t.key}` through its registered constructor (`__ffi_init__`).",
                    f"    pub fn {name}({signature}) -> tvm_ffi::Result<{ret}> {{",
                    f"        tvm_ffi::reflection::type_attr(<Self as tvm_ffi::ObjectType>::type_index(), \"__ffi_init__\")",
                    f"            .ok_or_else(|| tvm_ffi::Error::runtime_error(\"`{t.key}` has no constructor\"))?",
                    "            .cast::<tvm_ffi::Function>()?",
                    f"            .call_as::<{ret}, _>(({call_args}))",
                    "    }",
                ]
            else:
                name = _ident(m.name)
                while name in taken:
                    name = "call_" + name.removeprefix("r#")
                taken.add(name)
                out += [
                    "",
                    f"    /// The method `{m.name}` of `{t.key}`.",
                    f"    pub fn {name}({signature}) -> tvm_ffi::Result<{ret}> {{",
                    f'        this.call_method("{m.name}", ({call_args}))',
                    "    }",
                ]
        return out


def render(types: dict[str, TypeDesc], prefixes: list[str], source: str,
           enums: dict[tuple[str, str], EnumDesc] | None = None) -> str:
    renderer = _Renderer(types, enums)
    renderer.decide()
    renderer.check_enums()
    under = ", ".join(f'"{p}"' for p in prefixes)
    out = [
        f"// Generated by tvm_ffi_build.rust_mirror from the runtime's reflection ({source}; the types",
        f"// under {under}, and those they reach): do not edit; regenerate after the declaring",
        "// library changes.",
        "//",
        "// SAFETY (of each `unsafe impl ExternalType` below): the declarations are the runtime's",
        "// reflection of the types, and the SDK checks each against it when this library loads",
        "// (parent, size, every field's name, offset, size, storage and schema; an opaque one's",
        "// parent). What it cannot see is trusted: the defining code keeps each field a valid value",
        "// of its declared type and stores null only in fields declared `Option`.",
        "#![allow(missing_docs, clippy::all)]",
    ]
    declared = [t for t in types.values() if t.outcome in ("complete", "opaque")]
    # Parents first: a reader sees each base declared before its use.
    ordered: list[TypeDesc] = []
    seen: set[str] = set()

    def visit(t: TypeDesc) -> None:
        if t.key in seen:
            return
        seen.add(t.key)
        if t.parent in types and types[t.parent].outcome in ("complete", "opaque"):
            visit(types[t.parent])
        ordered.append(t)

    for t in declared:
        visit(t)
    out += renderer.enum_declarations()
    for t in ordered:
        out.append("")
        out += renderer.declaration(t)
    skipped = [t for t in types.values() if t.outcome in ("refused", "sdk")]
    if skipped:
        out += ["", "// Not declared:"]
        out += [f"// - `{t.key}`: {t.reason}" for t in skipped]
    return "\n".join(out) + "\n"


def coverage(types: dict[str, TypeDesc], prefixes: list[str], source: str,
             enums: dict[tuple[str, str], EnumDesc] | None = None) -> str:
    """The coverage report: one line per type key with its outcome and reason (after
    `render`, which decides them)."""
    counts = {o: sum(1 for t in types.values() if t.outcome == o) for o in ("complete", "opaque", "refused", "sdk")}
    under = ", ".join(f"`{p}`" for p in prefixes)
    out = [
        "# Coverage of the generated declarations",
        "",
        f"Generated by `tvm_ffi_build.rust_mirror` ({source}) for the types under {under} and those they",
        "reach (parents, types of fields). *complete*: parent, size and every field declared and checked",
        "at load; *opaque*: a typed handle whose parent is declared, its own fields not (the blocker",
        "named); *refused*: not declared (the reason named); *sdk*: a type the SDK declares itself.",
        "",
        "| outcome | types |",
        "| --- | --- |",
    ]
    out += [f"| {o} | {n} |" for o, n in counts.items()]
    out += ["", "| type key | outcome | listed as | reason |", "| --- | --- | --- | --- |"]
    for t in types.values():
        listed = "prefix" if t.reached_from is None else f"reached from `{t.reached_from}`"
        reason = t.reason.replace("|", "\\|") if t.outcome != "complete" else ""
        out.append(f"| `{t.key}` | {t.outcome} | {listed} | {reason} |")
    if enums:
        out += ["", "C++ enums (`--enum`), each an open integer newtype:", ""]
        out += [f"- `{key}.{name}`: `{e.rust_name}` ({len(e.members)} names, Python's `{e.source}`)"
                for (key, name), e in sorted(enums.items())]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", action="append", default=[], help="a library to load first")
    parser.add_argument("--import", dest="imports", action="append", default=[],
                        help="a Python module to import first (one that loads the library)")
    parser.add_argument("--prefix", required=True, action="append",
                        help="type keys starting with this (repeatable)")
    parser.add_argument("--out", required=True, help="the Rust file to write")
    parser.add_argument("--enum", dest="enums", action="append", default=[], metavar="KEY.FIELD=MODULE.CLASS",
                        help="type an integer field as a C++ enum, named after a Python IntEnum (repeatable)")
    parser.add_argument("--report", help="also write the coverage report (Markdown: one line per type "
                        "key with its outcome, complete, opaque or refused, and the reason)")
    args = parser.parse_args(argv)
    import tvm_ffi

    for module in args.imports:
        importlib.import_module(module)
    for library in args.load:
        tvm_ffi.load_module(library)
    types = read_types(args.prefix)
    enums: dict[tuple[str, str], EnumDesc] = {}
    by_class: dict[str, EnumDesc] = {}
    for spec in args.enums:
        target, _, path = spec.partition("=")
        key, _, name = target.rpartition(".")
        if not (key and name and path):
            print(f"error: --enum `{spec}`: expected KEY.FIELD=MODULE.CLASS", file=sys.stderr)
            return 1
        if path not in by_class:
            rust_name, members = read_enum(path)
            by_class[path] = EnumDesc(rust_name, path, members)
        enums[(key, name)] = by_class[path]
    if not types:
        print(f"error: no type is registered under {args.prefix}", file=sys.stderr)
        return 1
    source = ", ".join([f"import {m}" for m in args.imports] + [Path(lib).name for lib in args.load]) or "tvm_ffi"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    out.write_text(render(types, args.prefix, source, enums))
    if args.report:
        Path(args.report).parent.mkdir(parents=True, exist_ok=True)
        Path(args.report).write_text(coverage(types, args.prefix, source, enums))
    # Formatted as `cargo fmt` would, where rustfmt is at hand (the file is checked in).
    if shutil.which("rustfmt"):
        subprocess.run(["rustfmt", "--edition", "2021", str(out)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
