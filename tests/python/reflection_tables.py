"""The runtime's raw reflection tables of a type, read through the C API with ctypes: what a
type registered (from C++ or from Rust) exactly as the runtime stores it, down to flag words,
static type indices, default values and metadata strings. Python's own `TypeInfo` hides some of
these, so tests that compare two registrations read them here."""
from __future__ import annotations

import ctypes
import json
import os
import struct

import tvm_ffi
from tvm_ffi import core

_LIB = ctypes.CDLL(os.path.join(os.path.dirname(tvm_ffi.__file__), "lib", "libtvm_ffi.so"))


class _ByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]

    def text(self):
        if not self.data:
            return None
        return ctypes.string_at(self.data, self.size).decode()

    @classmethod
    def of(cls, text: str):
        raw = text.encode()
        buf = ctypes.create_string_buffer(raw, len(raw))
        arr = cls(ctypes.cast(buf, ctypes.c_void_p), len(raw))
        arr._keep = buf
        return arr


class _Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("aux", ctypes.c_uint32), ("value", ctypes.c_uint64)]


class _FieldInfo(ctypes.Structure):
    _fields_ = [
        ("name", _ByteArray),
        ("doc", _ByteArray),
        ("metadata", _ByteArray),
        ("flags", ctypes.c_int64),
        ("size", ctypes.c_int64),
        ("alignment", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("getter", ctypes.c_void_p),
        ("setter", ctypes.c_void_p),
        ("default", _Any),
        ("static_type_index", ctypes.c_int32),
    ]


class _MethodInfo(ctypes.Structure):
    _fields_ = [
        ("name", _ByteArray),
        ("doc", _ByteArray),
        ("metadata", _ByteArray),
        ("flags", ctypes.c_int64),
        ("method", _Any),
    ]


class _TypeMetadata(ctypes.Structure):
    _fields_ = [
        ("doc", _ByteArray),
        ("creator", ctypes.c_void_p),
        ("total_size", ctypes.c_int32),
        ("structural_eq_hash_kind", ctypes.c_int32),
    ]


class _TypeInfo(ctypes.Structure):
    pass


_TypeInfo._fields_ = [
    ("type_index", ctypes.c_int32),
    ("type_depth", ctypes.c_int32),
    ("type_key", _ByteArray),
    ("type_ancestors", ctypes.POINTER(ctypes.POINTER(_TypeInfo))),
    ("type_key_hash", ctypes.c_uint64),
    ("num_fields", ctypes.c_int32),
    ("num_methods", ctypes.c_int32),
    ("fields", ctypes.POINTER(_FieldInfo)),
    ("methods", ctypes.POINTER(_MethodInfo)),
    ("metadata", ctypes.POINTER(_TypeMetadata)),
]

_LIB.TVMFFIGetTypeInfo.restype = ctypes.POINTER(_TypeInfo)
_LIB.TVMFFIGetTypeInfo.argtypes = [ctypes.c_int32]

# Every type attribute the pinned runtime and its Python package read.
TYPE_ATTRS = (
    "__ffi_init__", "__ffi_new__", "__ffi_shallow_copy__", "__ffi_type_final__", "__ffi_convert__",
    "__ffi_convert_type_schema__", "__ffi_repr__", "__ffi_eq__", "__ffi_hash__", "__ffi_compare__",
    "__s_equal__", "__s_hash__", "__s_visit__", "__s_mutate__", "__s_maybe_inplace_mutate__",
    "__data_to_json__", "__data_from_json__", "__any_hash__", "__any_equal__", "__ffi_enum__",
)


def _default_value(default: _Any):
    """A field's default as (type index, Python value)."""
    index = default.type_index
    if index == 0:
        value = None
    elif index in (1, 2):
        value = struct.unpack("<q", struct.pack("<Q", default.value))[0]
    elif index == 3:
        value = struct.unpack("<d", struct.pack("<Q", default.value))[0]
    elif index == 11:  # small string: the bytes are inline, `aux` is the length
        value = struct.pack("<Q", default.value)[: default.aux].decode()
    elif index == 65:  # heap string: header, then a byte array
        value = _ByteArray.from_address(default.value + 24).text()
    else:
        value = f"<object of type index {index}>"
    return index, value


def type_table(key: str) -> dict:
    """Everything the runtime stores about type `key`."""
    index = core._object_type_key_to_index(key)
    assert index is not None, f"type {key} is not registered"
    info = _LIB.TVMFFIGetTypeInfo(index).contents
    table = {
        "key": key,
        "ancestors": [info.type_ancestors[i].contents.type_key.text() for i in range(info.type_depth)],
        "metadata": None,
        "fields": [],
        "methods": [],
        "attrs": {},
    }
    if info.metadata:
        meta = info.metadata.contents
        table["metadata"] = {
            "doc": meta.doc.text(),
            "creator": bool(meta.creator),
            "total_size": meta.total_size,
            "structural_eq_hash_kind": meta.structural_eq_hash_kind,
        }
    for i in range(info.num_fields):
        f = info.fields[i]
        table["fields"].append(
            {
                "name": f.name.text(),
                "doc": f.doc.text(),
                "metadata": json.loads(f.metadata.text() or "{}"),
                "flags": f.flags,
                "size": f.size,
                "alignment": f.alignment,
                "offset": f.offset,
                "static_type_index": f.static_type_index,
                "default": _default_value(f.default) if f.flags & 2 else None,
            }
        )
    for i in range(info.num_methods):
        m = info.methods[i]
        table["methods"].append(
            {
                "name": m.name.text(),
                "doc": m.doc.text(),
                "metadata": json.loads(m.metadata.text() or "{}"),
                "flags": m.flags,
            }
        )
    for name in TYPE_ATTRS:
        value = core._lookup_type_attr(index, name)
        if value is not None:
            # Functions and states are compared by behaviour elsewhere; constants by value.
            table["attrs"][name] = value if isinstance(value, (bool, int, float, str)) else type(value).__name__
    return table
