"""Writes a C++ header for the object types a library registered (Rust-authored ones, typically),
from the runtime's reflection: what they are is what the library registered, as for stubs.

    python -m tvm_ffi_build.cpp_header LIBRARY --prefix my_ext. --out include/my_ext_types.h

For each type under the prefix the header has

* ``<ns>::layout::<Name>``: a standard-layout struct of the object's memory (the 24-byte header,
  then each reflected field at its offset, padding where the library keeps fields it does not
  reflect), with ``static_assert``\\ s on its size and every offset;
* ``<ns>::<Name>``: a reference to such an object (or a subtype) with one typed accessor per
  field, parents' fields included. Fields that never change after construction (read-only in
  Rust, ``def_ro`` in C++) are read in place, as a C++ pass reads its own nodes; a field
  writable after construction (Rust ``Rw<T>``, read under Rust's lock) is read through the
  getter the library registered, so a C++ reader never races a Rust writer.

Object fields are typed by their schema (``Array<int64_t>``, ``Optional<...>``, ``String``, an
enum's ``tvm::ffi::IntEnum``/``StrEnum``; other objects as ``ObjectRef``), and each type with a
constructor gets a typed ``New(...)`` that calls it (its ``__ffi_init__``: an ``#[ffi(init)]``
function's parameters, or the reflected init fields, keyword-only ones passed as keywords).

The namespace ``<ns>`` follows the type key (``ir_example.Add`` -> ``ir_example::Add``). The first
use of a type checks the header against the loaded library (type key, total size, each field's
offset and size) and raises ``RuntimeError`` naming the difference, so a stale header is an error,
never a misread. Standard library and ``tvm_ffi`` only.
"""
from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# C++ keywords a field name may collide with (Python's keyword list is not C++'s).
_CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t
    char32_t class compl const constexpr const_cast continue decltype default delete do double
    dynamic_cast else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast return short signed sizeof static static_assert static_cast struct
    switch template this thread_local throw true try typedef typeid typename union unsigned using
    virtual void volatile wchar_t while xor xor_eq""".split()
)

# Static type indices of the runtime's POD values (c_api.h, TVMFFITypeIndex).
_INT, _BOOL, _FLOAT, _OPAQUE_PTR, _DATA_TYPE, _DEVICE = 1, 2, 3, 4, 5, 6
_STATIC_OBJECT_BEGIN = 64


@dataclass
class Field:
    name: str  # as registered
    ident: str  # the C++ identifier
    offset: int
    size: int
    static_index: int
    writable: bool  # writable after construction: read through the registered getter
    schema: str  # the type schema's text, for the comment
    owner: str  # the type key that declares it
    member: str = ""  # the layout member holding it: its own, or that of the field it aliases
    value_type: str | None = None  # an object field's C++ reference type, from its schema

    def storage(self) -> str | None:
        """The C++ type of the field's memory, or None for bytes the header does not type."""
        if self.static_index == _INT:
            return {1: "int8_t", 2: "int16_t", 4: "int32_t", 8: "int64_t"}.get(self.size)
        if self.static_index == _BOOL and self.size == 1:
            return "bool"
        if self.static_index == _FLOAT:
            return {4: "float", 8: "double"}.get(self.size)
        if self.static_index == _OPAQUE_PTR and self.size == 8:
            return "void*"
        if self.static_index == _DATA_TYPE and self.size == 4:
            return "DLDataType"
        if self.static_index == _DEVICE and self.size == 8:
            return "DLDevice"
        if self.static_index >= _STATIC_OBJECT_BEGIN and self.size == 8:
            return "TVMFFIObjectHandle"
        if self.static_index == -1 and self.size == 16:
            return "TVMFFIAny"
        return None

    def accessor_type(self) -> str:
        """What the accessor returns: a reference into the object for in-place reads, a value
        for reads through the getter."""
        storage = self.storage()
        if storage == "TVMFFIObjectHandle":
            ref = self.value_type or "tvm::ffi::ObjectRef"
            return ref if self.writable else f"const {ref}&"
        if storage == "TVMFFIAny":
            if self.typed_any():
                return self.value_type or ""
            return "tvm::ffi::Any" if self.writable else "const tvm::ffi::Any&"
        return storage or ""

    def typed_any(self) -> bool:
        """A 16-byte `Any` field whose schema names a type (a Rust `tvm_ffi::String`): read as
        that type, by value."""
        return self.storage() == "TVMFFIAny" and self.value_type not in (None, "tvm::ffi::Any")


@dataclass
class Param:
    name: str
    cpp_type: str
    keyword: bool  # passed as a keyword (a kw_only init field)


@dataclass
class TypeDesc:
    key: str
    total_size: int
    fields: list[Field]  # ancestors' first, in offset order
    parent: str | None
    init: list[Param] | None = None  # the constructor's parameters, if it has one
    enum_base: str | None = None  # an enum type's runtime base (`tvm::ffi::StrEnum`, ..)

    @property
    def namespaces(self) -> list[str]:
        return [_identifier(part) for part in self.key.split(".")[:-1]]

    @property
    def name(self) -> str:
        return _identifier(self.key.split(".")[-1])


# Names the generated classes use themselves: a field so named gets a trailing `_`.
_RESERVED = frozenset({"header", "object", "layout", "obj_", "Is", "TypeIndex", "kTypeKey"})


def _identifier(name: str) -> str:
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    if ident in _CPP_KEYWORDS or ident in _RESERVED or keyword.iskeyword(ident):
        ident += "_"
    if ident.startswith("unreflected_"):
        ident += "_"
    return ident


# Schema types and their C++ spelling; containers take their arguments' spellings.
_SCHEMA_TYPES = {
    "int": "int64_t", "float": "double", "bool": "bool", "Any": "tvm::ffi::Any",
    "ffi.String": "tvm::ffi::String", "str": "tvm::ffi::String", "ffi.Shape": "tvm::ffi::Shape",
    "ffi.Function": "tvm::ffi::Function", "ffi.Tensor": "tvm::ffi::Tensor",
    "ffi.Object": "tvm::ffi::ObjectRef", "DataType": "DLDataType", "Device": "DLDevice",
}
_SCHEMA_CONTAINERS = {
    "ffi.Array": ("tvm::ffi::Array", 1), "ffi.List": ("tvm::ffi::List", 1),
    "ffi.Map": ("tvm::ffi::Map", 2), "ffi.Dict": ("tvm::ffi::Dict", 2),
    "Optional": ("tvm::ffi::Optional", 1),
}
_ENUM_BASES = {"ffi.IntEnum": "tvm::ffi::IntEnum", "ffi.StrEnum": "tvm::ffi::StrEnum",
               "ffi.Enum": "tvm::ffi::Enum"}


def _cpp_type(schema: dict, enum_of) -> str:
    """The C++ type of a value of `schema` (a type schema's JSON); another object type is an
    `ObjectRef`, an enum its runtime base's reference."""
    name = schema.get("type", "")
    args = schema.get("args") or []
    if name in _SCHEMA_CONTAINERS:
        template, arity = _SCHEMA_CONTAINERS[name]
        if len(args) == arity:
            return f"{template}<{', '.join(_cpp_type(a, enum_of) for a in args)}>"
        return "tvm::ffi::ObjectRef"
    return _SCHEMA_TYPES.get(name) or enum_of(name) or "tvm::ffi::ObjectRef"


def _schema(text: str) -> dict:
    try:
        parsed = json.loads(text) if text else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def read_types(library: str, prefix: str) -> list[TypeDesc]:
    """The object types under `prefix`, read from the runtime after loading `library`."""
    import tvm_ffi
    from tvm_ffi import core

    tvm_ffi.load_module(library)
    keys = sorted(
        str(k)
        for k in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")()
        if str(k).startswith(prefix)
    )
    def enum_of(key: str) -> str | None:
        try:
            walk = core._lookup_or_register_type_info_from_type_key(key)
        except (KeyError, ValueError, TypeError, RuntimeError):
            return None
        while walk is not None:
            if walk.type_key in _ENUM_BASES:
                return _ENUM_BASES[walk.type_key]
            walk = walk.parent_type_info
        return None

    def value_type(schema: str) -> str | None:
        parsed = _schema(schema)
        return _cpp_type(parsed, enum_of) if parsed else None

    types = []
    for key in keys:
        info = core._lookup_or_register_type_info_from_type_key(key)
        chain = []
        walk = info
        while walk is not None:
            chain.append(walk)
            walk = walk.parent_type_info
        fields = []
        for owner in reversed(chain):
            for f in owner.fields:
                schema = f.metadata.get("type_schema", "") if f.metadata else ""
                fields.append(
                    Field(
                        name=f.name,
                        ident=_identifier(f.name),
                        offset=f.offset,
                        size=f.size,
                        static_index=f.field_static_type_index,
                        writable=not f.frozen,
                        schema=schema,
                        owner=owner.type_key,
                        value_type=value_type(schema),
                    )
                )
        fields.sort(key=lambda f: f.offset)
        _assign_members(fields)
        parent = info.parent_type_info.type_key if info.parent_type_info else None
        types.append(TypeDesc(key, info.total_size, fields, parent,
                              _init_params(core, info, chain, value_type, enum_of), enum_of(key)))
    return types


def _init_params(core, info, chain, value_type, enum_of) -> list[Param] | None:
    """The parameters of the type's own constructor: an explicit `__ffi_init__`'s (its names and
    schema), or the reflected init fields (positional ones, then keyword-only ones)."""
    if core._lookup_type_attr(info.type_index, "__ffi_init__") is None:
        return None
    for method in info.methods:
        if method.name == "__ffi_init__":
            names = [str(n) for n in method.metadata.get("arg_names", [])]
            params = _schema(method.metadata.get("type_schema", "")).get("named_args", {})
            params = params.get("params", []) if isinstance(params, dict) else []
            if len(names) != len(params):
                return None
            return [Param(_identifier(n), _cpp_type(p, enum_of), False)
                    for n, p in zip(names, params)]
    fields = [f for owner in reversed(chain) for f in owner.fields if getattr(f, "c_init", True)]
    ordered = ([f for f in fields if not getattr(f, "c_kw_only", False)]
               + [f for f in fields if getattr(f, "c_kw_only", False)])
    params = []
    for f in ordered:
        schema = f.metadata.get("type_schema", "") if f.metadata else ""
        cpp = value_type(schema)
        if cpp is None:
            return None
        params.append(Param(_identifier(f.name), cpp, bool(getattr(f, "c_kw_only", False))))
    return params


def _assign_members(fields: list[Field]) -> None:
    """Each field's layout member. A field at the offset of an earlier one with the same size and
    storage aliases it (`ffi.StrEnum`'s `value` is its `_str_index`) and reads the same member;
    any other overlap is refused."""
    end, last = 24, None
    for f in fields:
        if f.offset >= end:
            f.member = f.ident
            end, last = f.offset + f.size, f
        elif last is not None and (f.offset, f.size, f.storage()) == (last.offset, last.size, last.storage()):
            f.member = last.member
        else:
            raise SystemExit(f"error: field `{f.name}` of `{f.owner}` overlaps another field")


_PRELUDE = """\
// Generated by tvm_ffi_build.cpp_header from the runtime's reflection of {library}
// (the object types under "{prefix}"): do not edit; regenerate after changing the types.
#pragma once

#include <tvm/ffi/any.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/enum.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#ifndef TVM_FFI_SDK_CPP_HEADER_SUPPORT_
#define TVM_FFI_SDK_CPP_HEADER_SUPPORT_
// Shared by every generated header: the load-time check and the field getters.
namespace tvm_ffi_sdk_header {{

// The in-place accessors reinterpret a field's memory as these types.
static_assert(sizeof(tvm::ffi::ObjectRef) == sizeof(TVMFFIObjectHandle), "ObjectRef is a pointer");
static_assert(sizeof(tvm::ffi::Any) == sizeof(TVMFFIAny), "Any is a TVMFFIAny");

struct FieldSpec {{
  const char* name;
  int64_t offset;
  int64_t size;
}};

// The registered field `name` of `info` or of one of its ancestors.
inline const TVMFFIFieldInfo* FindField(const TVMFFITypeInfo* info, const char* name) {{
  for (int32_t depth = info->type_depth; depth >= 0; --depth) {{
    const TVMFFITypeInfo* owner = depth == info->type_depth ? info : info->type_ancestors[depth];
    for (int32_t i = 0; i < owner->num_fields; ++i) {{
      const TVMFFIByteArray& field = owner->fields[i].name;
      if (field.size == std::strlen(name) && std::memcmp(field.data, name, field.size) == 0) {{
        return &owner->fields[i];
      }}
    }}
  }}
  return nullptr;
}}

// The type's index after checking the loaded library against the header (total size, each
// field's offset and size): a RuntimeError naming the difference, never a misread.
inline int32_t CheckedTypeIndex(const char* key, int32_t total_size, const FieldSpec* fields,
                                size_t num_fields) {{
  TVMFFIByteArray bytes{{key, std::strlen(key)}};
  int32_t index;
  if (TVMFFITypeKeyToIndex(&bytes, &index) != 0) {{
    TVMFFIObjectHandle error;
    TVMFFIErrorMoveFromRaised(&error);
    if (error != nullptr) TVMFFIObjectDecRef(error);
    TVM_FFI_THROW(RuntimeError) << "type `" << key
                                << "` is not registered: load its library before using its header";
  }}
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  std::string stale = std::string("the generated header of `") + key +
                      "` does not match the loaded library (regenerate it): ";
  if (info->metadata == nullptr || info->metadata->total_size != total_size) {{
    TVM_FFI_THROW(RuntimeError) << stale << "its size is "
                                << (info->metadata ? info->metadata->total_size : -1)
                                << " bytes, the header says " << total_size;
  }}
  for (size_t i = 0; i < num_fields; ++i) {{
    const TVMFFIFieldInfo* field = FindField(info, fields[i].name);
    if (field == nullptr) {{
      TVM_FFI_THROW(RuntimeError) << stale << "it has no field `" << fields[i].name << "`";
    }}
    if (field->offset != fields[i].offset || field->size != fields[i].size) {{
      TVM_FFI_THROW(RuntimeError) << stale << "field `" << fields[i].name << "` is "
                                  << field->size << " bytes at offset " << field->offset
                                  << ", the header says " << fields[i].size << " at "
                                  << fields[i].offset;
    }}
  }}
  return index;
}}

// Whether an object of type index `actual` is a `target` (at depth `depth`) or a subtype.
inline bool IsInstance(int32_t actual, int32_t target) {{
  if (actual == target) return true;
  const TVMFFITypeInfo* want = TVMFFIGetTypeInfo(target);
  const TVMFFITypeInfo* have = TVMFFIGetTypeInfo(actual);
  return have->type_depth > want->type_depth &&
         have->type_ancestors[want->type_depth]->type_index == target;
}}

inline std::string TypeKeyOf(int32_t index) {{
  const TVMFFIByteArray& key = TVMFFIGetTypeInfo(index)->type_key;
  return std::string(key.data, key.size);
}}

// The getter the library registered for field `name` of type `index` (looked up once per
// accessor: the accessor keeps it in a function-local static).
inline TVMFFIFieldGetter GetterOf(int32_t index, const char* name) {{
  const TVMFFIFieldInfo* field = FindField(TVMFFIGetTypeInfo(index), name);
  if (field == nullptr || field->getter == nullptr) {{
    TVM_FFI_THROW(RuntimeError) << "type `" << TypeKeyOf(index) << "` has no getter for `"
                                << name << "`";
  }}
  return field->getter;
}}

// A field writable after construction, read through the getter its library registered (Rust
// takes the field's lock there).
inline tvm::ffi::Any ReadThroughGetter(TVMFFIFieldGetter getter, const void* object,
                                       int64_t offset) {{
  TVMFFIAny out;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  void* address = const_cast<char*>(static_cast<const char*>(object) + offset);
  TVM_FFI_CHECK_SAFE_CALL(getter(address, &out));
  return tvm::ffi::details::AnyUnsafe::MoveTVMFFIAnyToAny(&out);
}}

// The constructor the library registered for type `index` (`__ffi_init__`).
inline tvm::ffi::Function InitOf(int32_t index) {{
  static const tvm::ffi::reflection::TypeAttrColumn column("__ffi_init__");
  tvm::ffi::AnyView init = column[index];
  if (init == nullptr) {{
    TVM_FFI_THROW(RuntimeError) << "type `" << TypeKeyOf(index) << "` has no constructor";
  }}
  return init.cast<tvm::ffi::Function>();
}}

// The marker before keyword arguments (`[.., KWARGS, key0, value0, ..]`).
inline const tvm::ffi::ObjectRef& Kwargs() {{
  static const tvm::ffi::ObjectRef kwargs =
      tvm::ffi::Function::GetGlobalRequired("ffi.GetKwargsObject")().cast<tvm::ffi::ObjectRef>();
  return kwargs;
}}

}}  // namespace tvm_ffi_sdk_header
#endif  // TVM_FFI_SDK_CPP_HEADER_SUPPORT_
"""


def _layout_struct(t: TypeDesc) -> list[str]:
    lines = [
        f"/*! \\brief The memory of a `{t.key}` ({t.total_size} bytes): the object header, then",
        " * its fields at their offsets. */",
        f"struct {t.name} {{",
        "  TVMFFIObject header;",
    ]
    at, pad = 24, 0
    for f in t.fields:
        if f.member != f.ident:
            continue  # an alias: no memory of its own
        if f.offset > at:
            lines.append(f"  uint8_t unreflected_{pad}[{f.offset - at}];  // fields not reflected")
            pad += 1
        storage = f.storage()
        comment = f"  // {f.schema}" if f.schema else ""
        if storage is None:
            lines.append(f"  uint8_t {f.ident}[{f.size}];{comment}")
        else:
            lines.append(f"  {storage} {f.ident};{comment}")
        at = f.offset + f.size
    if t.total_size > at:
        lines.append(f"  uint8_t unreflected_{pad}[{t.total_size - at}];  // fields not reflected, padding")
    lines.append("};")
    lines.append(f'static_assert(sizeof({t.name}) == {t.total_size}, "size of {t.key}");')
    for f in t.fields:
        lines.append(
            f'static_assert(offsetof({t.name}, {f.member}) == {f.offset}, "offset of {t.key}.{f.name}");'
        )
    return lines


def _view_class(t: TypeDesc) -> list[str]:
    specs = ", ".join(f'{{"{f.name}", {f.offset}, {f.size}}}' for f in t.fields) or "{nullptr, 0, 0}"
    lines = [
        f"/*! \\brief A reference to a `{t.key}` (or a subtype) with typed field accessors. */",
        f"class {t.name} {{",
        " public:",
        f'  static constexpr const char* kTypeKey = "{t.key}";',
        "",
        f"  /*! \\brief `obj` as a `{t.key}`: a TypeError when it is another type. */",
        f"  explicit {t.name}(tvm::ffi::ObjectRef obj) : obj_(std::move(obj)) {{",
        "    if (!Is(obj_)) {",
        "      TVM_FFI_THROW(TypeError) << \"expected `\" << kTypeKey << \"`, got `\"",
        "                               << (obj_.defined() ? tvm_ffi_sdk_header::TypeKeyOf(obj_->type_index())",
        "                                                  : std::string(\"None\"))",
        "                               << \"`\";",
        "    }",
        "  }",
        "",
        f"  /*! \\brief Whether `obj` is a `{t.key}` (or a subtype). */",
        "  static bool Is(const tvm::ffi::ObjectRef& obj) {",
        "    return obj.defined() && tvm_ffi_sdk_header::IsInstance(obj->type_index(), TypeIndex());",
        "  }",
        "",
        "  /*! \\brief The runtime's index of the type, checked against the loaded library once. */",
        "  static int32_t TypeIndex() {",
        f"    static const tvm_ffi_sdk_header::FieldSpec fields[] = {{{specs}}};",
        "    static const int32_t index = tvm_ffi_sdk_header::CheckedTypeIndex(",
        f"        kTypeKey, {t.total_size}, fields, {len(t.fields)});",
        "    return index;",
        "  }",
        "",
        "  /*! \\brief The object. */",
        "  const tvm::ffi::ObjectRef& object() const { return obj_; }",
    ]
    if t.init is not None:
        params = ", ".join(f"{p.cpp_type} {p.name}" for p in t.init)
        args = [p.name for p in t.init if not p.keyword]
        keywords = [p for p in t.init if p.keyword]
        if keywords:
            args.append("tvm_ffi_sdk_header::Kwargs()")
            args += [a for p in keywords for a in (f'"{p.name}"', p.name)]
        lines += [
            "",
            f"  /*! \\brief A new `{t.key}`, made by the constructor its library registered. */",
            f"  static {t.name} New({params}) {{",
            "    static const tvm::ffi::Function init = tvm_ffi_sdk_header::InitOf(TypeIndex());",
            f"    return {t.name}(init({', '.join(args)}).cast<tvm::ffi::ObjectRef>());",
            "  }",
        ]
    if t.enum_base in ("tvm::ffi::IntEnum", "tvm::ffi::StrEnum"):
        # The entry of a value, looked up as C++'s own enums do (`EnumObj::_GetBy*Index`).
        by_int = t.enum_base == "tvm::ffi::IntEnum"
        lines += [
            "",
            f"  /*! \\brief The entry of `{t.key}` whose value is `value` (a ValueError if none is). */",
            f"  static {t.enum_base} Get({'int64_t' if by_int else 'const tvm::ffi::String&'} value) {{",
            f"    return tvm::ffi::Any(tvm::ffi::EnumObj::_GetBy{'Int' if by_int else 'Str'}Index(TypeIndex(), value))",
            f"        .cast<{t.enum_base}>();",
            "  }",
        ]
    for f in t.fields:
        storage = f.storage()
        origin = "" if f.owner == t.key else f" (declared by `{f.owner}`)"
        doc = f"  /*! \\brief Field `{f.name}`{origin}: {f.schema or 'untyped'}"
        if storage is None:
            lines += ["", doc + ", its bytes. */",
                      f"  const uint8_t* {f.ident}() const {{ return layout().{f.member}; }}"]
        elif f.writable:
            read = f"tvm_ffi_sdk_header::ReadThroughGetter(getter, obj_.get(), {f.offset})"
            if storage == "TVMFFIObjectHandle":
                value = f"{read}.cast<{f.value_type or 'tvm::ffi::ObjectRef'}>()"
            elif storage == "TVMFFIAny":
                value = f"{read}.cast<{f.value_type}>()" if f.typed_any() else read
            else:
                value = f"{read}.cast<{storage}>()"
            lines += ["", doc + "; writable after construction, read through its getter. */",
                      f"  {f.accessor_type()} {f.ident}() const {{",
                      "    static const TVMFFIFieldGetter getter =",
                      f'        tvm_ffi_sdk_header::GetterOf(TypeIndex(), "{f.name}");',
                      f"    return {value};",
                      "  }"]
        elif storage == "TVMFFIObjectHandle":
            lines += ["", doc + ". */",
                      f"  {f.accessor_type()} {f.ident}() const {{",
                      f"    return *reinterpret_cast<const {f.value_type or 'tvm::ffi::ObjectRef'}*>(&layout().{f.member});",
                      "  }"]
        elif storage == "TVMFFIAny":
            any_ref = f"*reinterpret_cast<const tvm::ffi::Any*>(&layout().{f.member})"
            value = f"({any_ref}).cast<{f.value_type}>()" if f.typed_any() else any_ref
            lines += ["", doc + ". */",
                      f"  {f.accessor_type()} {f.ident}() const {{",
                      f"    return {value};",
                      "  }"]
        else:
            lines += ["", doc + ". */",
                      f"  {storage} {f.ident}() const {{ return layout().{f.member}; }}"]
    lines += [
        "",
        " private:",
        f"  const layout::{t.name}& layout() const {{",
        f"    return *reinterpret_cast<const layout::{t.name}*>(obj_.get());",
        "  }",
        "",
        "  tvm::ffi::ObjectRef obj_;",
        "};",
    ]
    return lines


def render(types: list[TypeDesc], library: str, prefix: str) -> str:
    out = [_PRELUDE.format(library=Path(library).name, prefix=prefix)]
    for t in types:
        open_ns = "".join(f"namespace {ns} {{\n" for ns in t.namespaces)
        close_ns = "".join(f"}}  // namespace {ns}\n" for ns in reversed(t.namespaces))
        out.append(f"\n// ---- {t.key}" + (f" (parent `{t.parent}`)" if t.parent else "") + "\n")
        out.append(open_ns)
        out.append("namespace layout {\n" + "\n".join(_layout_struct(t)) + "\n}  // namespace layout\n\n")
        out.append("\n".join(_view_class(t)) + "\n")
        out.append(close_ns)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", help="the shared library that registers the types")
    parser.add_argument("--prefix", required=True, help="type keys starting with this (e.g. `my_ext.`)")
    parser.add_argument("--out", required=True, help="the header to write")
    args = parser.parse_args(argv)
    types = read_types(args.library, args.prefix)
    if not types:
        print(f"error: {args.library} registers no type under `{args.prefix}`", file=sys.stderr)
        return 1
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(render(types, args.library, args.prefix))
    return 0


if __name__ == "__main__":
    sys.exit(main())
