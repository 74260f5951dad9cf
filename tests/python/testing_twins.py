"""Python classes of the Rust twins of the wheel's C++ testing types (`tests/testing-twins`,
keys `testing.rs.*`), declared exactly as `tvm_ffi.testing` declares the C++ originals, so
that the same Python code runs against both. Importing this module loads the Rust library."""
from __future__ import annotations

from typing import Any, ClassVar

import tvm_ffi
from tvm_ffi import Object, core
from tvm_ffi.dataclasses import IntEnum, StrEnum, c_class, entry

from conftest import _lib_path

LIB_PATH = _lib_path("libtvm_ffi_testing_twins.so")
LIB = tvm_ffi.load_module(LIB_PATH)


@c_class("testing.rs.TestObjectBase")
class TestObjectBase(Object):
    __test__ = False
    v_i64: int
    v_f64: float
    v_str: str


@c_class("testing.rs.TestIntPair")
class TestIntPair(Object):
    __test__: ClassVar[bool] = False
    a: int
    b: int


@c_class("testing.rs.TestObjectDerived")
class TestObjectDerived(TestObjectBase):
    __test__ = False
    v_map: Any
    v_array: Any


@c_class("testing.rs.TestObjectPtrHolder")
class TestObjectPtrHolder(Object):
    __test__ = False
    value: TestObjectBase
    optional_value: Any


@c_class("testing.rs.TestNonCopyable")
class TestNonCopyable(Object):
    __test__ = False
    value: int


@c_class("testing.rs.TestCompare")
class TestCompare(Object):
    __test__ = False
    key: int
    name: str
    ignored_field: int


@c_class("testing.rs.TestHash")
class TestHash(Object):
    __test__ = False
    key: int
    name: str
    hash_ignored: int


@c_class("testing.rs.TestCustomHash")
class TestCustomHash(Object):
    __test__ = False
    key: int
    label: str


@c_class("testing.rs.TestCustomCompare")
class TestCustomCompare(Object):
    __test__ = False
    key: int
    label: str


@c_class("testing.rs.TestEqWithoutHash")
class TestEqWithoutHash(Object):
    __test__ = False
    key: int
    label: str


@c_class("testing.rs.TestCxxClassBase")
class _TestCxxClassBase(Object):
    v_i64: int
    v_i32: int
    not_field_1 = 1
    not_field_2: ClassVar[int] = 2

    def __init__(self, v_i64: int, v_i32: int) -> None:
        # As tvm_ffi.testing's class: a custom __init__ that shifts its arguments.
        info = getattr(type(self), "__tvm_ffi_type_info__")
        ffi_init = core._lookup_type_attr(info.type_index, "__ffi_init__")
        self.__init_handle_by_constructor__(ffi_init, v_i64 + 1, v_i32 + 2)


@c_class("testing.rs.TestCxxClassDerived", eq=True, order=True, unsafe_hash=True)
class _TestCxxClassDerived(_TestCxxClassBase):
    v_f64: float
    v_f32: float


@c_class("testing.rs.TestCxxClassDerivedDerived")
class _TestCxxClassDerivedDerived(_TestCxxClassDerived):
    v_str: str
    v_bool: bool


class _TestCxxIntEnum(IntEnum, type_key="testing.rs.TestCxxIntEnum"):
    low = entry(value=10)
    high = entry(value=20)


class _TestCxxStrEnum(StrEnum, type_key="testing.rs.TestCxxStrEnum"):
    add = entry(value="+")
    mul = entry(value="*")


@c_class("testing.rs.TestCxxEnumHolder")
class _TestCxxEnumHolder(Object):
    __test__ = False
    priority: _TestCxxIntEnum
    opcode: _TestCxxStrEnum


@c_class("testing.rs.TestCxxInitSubset")
class _TestCxxInitSubset(Object):
    required_field: int
    optional_field: int
    note: str


@c_class("testing.rs.TestCxxKwOnly")
class _TestCxxKwOnly(Object):
    x: int
    y: int
    z: int
    w: int


@c_class("testing.rs.TestCxxAutoInit")
class _TestCxxAutoInit(Object):
    __test__ = False
    a: int
    b: int
    c: int
    d: int


@c_class("testing.rs.TestCxxAutoInitSimple")
class _TestCxxAutoInitSimple(Object):
    __test__ = False
    x: int
    y: int


@c_class("testing.rs.TestCxxAutoInitAllInitOff")
class _TestCxxAutoInitAllInitOff(Object):
    __test__ = False
    x: int
    y: int
    z: int


@c_class("testing.rs.TestCxxAutoInitKwOnlyDefaults")
class _TestCxxAutoInitKwOnlyDefaults(Object):
    __test__ = False
    p_required: int
    p_default: int
    k_required: int
    k_default: int
    hidden: int


@c_class("testing.rs.TestCxxNoAutoInit", init=False)
class _TestCxxNoAutoInit(Object):
    __test__ = False
    x: int
    y: int


@c_class("testing.rs.TestCxxAutoInitParent")
class _TestCxxAutoInitParent(Object):
    __test__ = False
    parent_required: int
    parent_default: int


@c_class("testing.rs.TestCxxAutoInitChild")
class _TestCxxAutoInitChild(_TestCxxAutoInitParent):
    __test__ = False
    child_required: int
    child_kw_only: int


def create_object(type_key: str, **kwargs: Any) -> Object:
    """`tvm_ffi.testing.create_object` (the runtime's `ffi.MakeObjectFromPackedArgs`)."""
    args: list[Any] = [type_key]
    for key, value in kwargs.items():
        args += [key, value]
    return tvm_ffi.get_global_func("ffi.MakeObjectFromPackedArgs")(*args)


def make_unregistered_object() -> Object:
    return tvm_ffi.get_global_func("testing.rs.make_unregistered_object")()
