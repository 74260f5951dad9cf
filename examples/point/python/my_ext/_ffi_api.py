"""The classes and functions the Rust library registers under `my_ext.`.

Written by `tvm-ffi-stubgen --init-*` and kept current by every build: `pip install`/`pip
wheel` regenerate the `tvm-ffi-stubgen(begin)`..`(end)` blocks from the built library (and
append a class for a type added since), `pip install -e .` rewrites this file in place. Edit
only outside the blocks.
"""
# `my_ext.CxxChild` extends a C++ type of the runtime's test library, whose Python class lives in
# `tvm_ffi.testing` (which imports pytest): it has no class here and is used through `tvm_ffi`.
# tvm-ffi-stubgen(skip): my_ext.CxxChild

# tvm-ffi-stubgen(begin): import-section
# fmt: off
# isort: off
from __future__ import annotations
from tvm_ffi.dataclasses import IntEnum as _ffi_IntEnum, StrEnum as _ffi_StrEnum
from tvm_ffi import Object as _ffi_Object, init_ffi_api as _FFI_INIT_FUNC, register_object as _FFI_REG_OBJ
from tvm_ffi.libinfo import load_lib_module as _FFI_LOAD_LIB
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from tvm_ffi import Object
    from typing import Any, Callable
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
# tvm_ffi_build: names the refined stubs use
from typing import ClassVar, Literal
from tvm_ffi.dataclasses import c_class as _ffi_c_class
from tvm_ffi.dataclasses import entry as _ffi_entry
# tvm-ffi-stubgen(import-object): tvm_ffi.libinfo.load_lib_module;False;_FFI_LOAD_LIB
LIB = _FFI_LOAD_LIB("my_ext", "tvm_ffi_example_point")
# tvm-ffi-stubgen(begin): global/my_ext
# fmt: off
_FFI_INIT_FUNC("my_ext", __name__)
if TYPE_CHECKING:
    def add(a: int, b: int) -> int: ...
    def apply_twice(f: Callable[..., Any], x: int) -> int: ...
    def checked_div(a: int, b: int) -> int: ...
    def count_args(*args: Any) -> Any: ...
    def describe_error(f: Callable[..., Any]) -> str: ...
    def describe_marker(marker: Marker | Literal[1, 2] = ..., color: Color | Literal['red', 'green', 'dark blue'] = ...) -> str: ...
    def greet(name: str) -> str: ...
    def identity(obj: Object) -> Object: ...
    def join(*args: Any) -> Any: ...
    def map_total(m: Mapping[str, int]) -> int: ...
    def narrow(x: int) -> int: ...
    def newest(versions: Sequence[Version]) -> Version | None: ...
    def parse(text: str) -> int: ...
    def range(n: int) -> Sequence[int]: ...
    def shift(x: int, by: int = 1) -> int: ...
    def sum(values: Sequence[int]) -> int: ...
# fmt: on
# tvm-ffi-stubgen(end)
# tvm-ffi-stubgen(import-object): tvm_ffi.register_object;False;_FFI_REG_OBJ
# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_ext.Interval")
class Interval(_ffi_Object):
    """FFI binding for `my_ext.Interval`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Interval
    # fmt: off
    lo: float
    hi: float
    if TYPE_CHECKING:
        def __init__(self, lo: float, hi: float) -> None: ...
        def __ffi_init__(self, lo: float, hi: float) -> None: ...
        def length(self, /) -> float: ...
    # fmt: on
    # tvm-ffi-stubgen(end)

# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_ext.Options")
class Options(_ffi_Object):
    """FFI binding for `my_ext.Options`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Options
    # fmt: off
    id: int
    title: str
    tags: Sequence[int]
    hits: int
    verbose: bool
    cache: int
    version: int
    timeout: int
    parent: Options | None
    if TYPE_CHECKING:
        def __init__(self, id: int, title: str = ..., tags: Sequence[int] = ..., cache: int = ..., version: int = ..., timeout: int = ..., parent: Options | None = ..., *, verbose: bool = ...) -> None: ...
        def __ffi_init__(self, id: int, title: str = ..., tags: Sequence[int] = ..., cache: int = ..., version: int = ..., timeout: int = ..., parent: Options | None = ..., *, verbose: bool = ...) -> None: ...
    # fmt: on
    # tvm-ffi-stubgen(end)

# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_ext.Point")
class Point(_ffi_Object):
    """FFI binding for `my_ext.Point`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Point
    # fmt: off
    x: int
    y: int
    label: str
    if TYPE_CHECKING:
        def __init__(self, x: int, y: int = ..., *, label: str = ...) -> None: ...
        def __ffi_init__(self, x: int, y: int = ..., *, label: str = ...) -> None: ...
        def norm2(self, /) -> int: ...
        def scale(self, /, k: int) -> Point: ...
        def moved(self, /, dx: int, dy: int = 0) -> Point: ...
        @staticmethod
        def origin() -> Point: ...
        @staticmethod
        def at(x: int, y: int = 0) -> Point: ...
        def is_same(self, /, other: Point) -> bool: ...
        def lift(self, /, z: int) -> Point3: ...
    # fmt: on
    # tvm-ffi-stubgen(end)

@_FFI_REG_OBJ("my_ext.Point3")
class Point3(Point):
    """FFI binding for `my_ext.Point3`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Point3
    # fmt: off
    z: int
    if TYPE_CHECKING:
        def __init__(self, x: int, z: int, y: int = ..., *, label: str = ...) -> None: ...
        def __ffi_init__(self, x: int, z: int, y: int = ..., *, label: str = ...) -> None: ...  # type: ignore[override]
        def norm2_3d(self, /) -> int: ...
        def project(self, /) -> Point: ...
    # fmt: on
    # tvm-ffi-stubgen(end)


__all__ = [
    # tvm-ffi-stubgen(begin): __all__
    "LIB",
    "Color",
    "Interval",
    "Marker",
    "Options",
    "Point",
    "Point3",
    "Stroke",
    "Version",
    "add",
    "apply_twice",
    "checked_div",
    "count_args",
    "describe_error",
    "describe_marker",
    "greet",
    "identity",
    "join",
    "map_total",
    "narrow",
    "newest",
    "parse",
    "range",
    "shift",
    "sum",
    # tvm-ffi-stubgen(end)
]
# tvm-ffi-stubgen(import-object): tvm_ffi.register_object;False;_FFI_REG_OBJ
# tvm-ffi-stubgen(import-object): ffi.StrEnum;False;_ffi_StrEnum
class Color(_ffi_StrEnum, type_key="my_ext.Color"):
    """FFI binding for `my_ext.Color`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Color
    # fmt: off
    red: ClassVar[Color]
    green: ClassVar[Color]
    dark_blue = _ffi_entry(value='dark blue')
    # fmt: on
    # tvm-ffi-stubgen(end)

# tvm-ffi-stubgen(import-object): ffi.IntEnum;False;_ffi_IntEnum
class Marker(_ffi_IntEnum, type_key="my_ext.Marker"):
    """FFI binding for `my_ext.Marker`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Marker
    # fmt: off
    Dot: ClassVar[Marker]
    Cross: ClassVar[Marker]
    # fmt: on
    # tvm-ffi-stubgen(end)

# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_ffi_c_class("my_ext.Version", eq=True, order=True, unsafe_hash=True)
class Version(_ffi_Object):
    """FFI binding for `my_ext.Version`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Version
    # fmt: off
    major: int
    minor: int
    patch: int
    if TYPE_CHECKING:
        def __init__(self, major: int, minor: int, patch: int = ...) -> None: ...
        def __ffi_init__(self, major: int, minor: int, patch: int = ...) -> None: ...
    # fmt: on
    # tvm-ffi-stubgen(end)
# tvm-ffi-stubgen(import-object): tvm_ffi.libinfo.load_lib_module;False;_FFI_LOAD_LIB
LIB = _FFI_LOAD_LIB("my_ext", "tvm_ffi_example_point")
# tvm-ffi-stubgen(import-object): tvm_ffi.register_object;False;_FFI_REG_OBJ
# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_ext.Stroke")
class Stroke(_ffi_Object):
    """FFI binding for `my_ext.Stroke`."""

    # tvm-ffi-stubgen(begin): object/my_ext.Stroke
    # fmt: off
    marker: Marker
    color: Color
    if TYPE_CHECKING:
        def __init__(self, marker: Marker | Literal[1, 2], color: Color | Literal['red', 'green', 'dark blue'] = ...) -> None: ...
        def __ffi_init__(self, marker: Marker | Literal[1, 2], color: Color | Literal['red', 'green', 'dark blue'] = ...) -> None: ...
    # fmt: on
    # tvm-ffi-stubgen(end)

# tvm_ffi_build(begin): signatures
from ._ffi_helpers import fast_constructors as _ffi_fast_constructors  # noqa: E402
from ._ffi_helpers import signatures as _ffi_signatures  # noqa: E402

_ffi_signatures(globals(), "my_ext.", globals().get("LIB"))
_ffi_fast_constructors(globals(), globals().get("LIB"))
# tvm_ffi_build(end)
