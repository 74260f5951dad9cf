"""The classes and functions the Rust library registers under `my_package.`.

Written by tvm-ffi-stubgen and kept current by every build: `pip install`/`pip wheel`
regenerate the `tvm-ffi-stubgen(begin)`..`(end)` blocks from the built library (and append a
class for a type added since), `pip install -e .` rewrites this file in place. Edit only
outside the blocks (methods added to a class there stay).
"""

# tvm-ffi-stubgen(begin): import-section
# fmt: off
# isort: off
from __future__ import annotations
from tvm_ffi import Object as _ffi_Object, init_ffi_api as _FFI_INIT_FUNC, register_object as _FFI_REG_OBJ
from tvm_ffi.libinfo import load_lib_module as _FFI_LOAD_LIB
from typing import TYPE_CHECKING
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
# tvm-ffi-stubgen(import-object): tvm_ffi.libinfo.load_lib_module;False;_FFI_LOAD_LIB
LIB = _FFI_LOAD_LIB("my_package", "my_package")
# tvm-ffi-stubgen(begin): global/my_package
# fmt: off
_FFI_INIT_FUNC("my_package", __name__)
if TYPE_CHECKING:
    def greet(_0: str, /) -> str: ...
# fmt: on
# tvm-ffi-stubgen(end)
# tvm-ffi-stubgen(import-object): tvm_ffi.register_object;False;_FFI_REG_OBJ
# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_package.Counter")
class Counter(_ffi_Object):
    """FFI binding for `my_package.Counter`."""

    # tvm-ffi-stubgen(begin): object/my_package.Counter
    # fmt: off
    name: str
    count: int
    if TYPE_CHECKING:
        def __init__(self, name: str, count: int = ...) -> None: ...
        def __ffi_init__(self, name: str, count: int = ...) -> None: ...
        def add(self, _1: int, /) -> int: ...
        @staticmethod
        def starting_at(_0: str, _1: int, /) -> Counter: ...
    # fmt: on
    # tvm-ffi-stubgen(end)


__all__ = [
    # tvm-ffi-stubgen(begin): __all__
    "LIB",
    "Counter",
    "greet",
    # tvm-ffi-stubgen(end)
]
