"""my_ext: the Rust library of `examples/point` as a Python package.

`import my_ext` imports `tvm_ffi` (which loads libtvm_ffi), then loads the Rust library; the
classes and functions are what the library registers under `my_ext.`, typed by the stubs that
tvm-ffi-stubgen writes into `_ffi_api.py` at build time.
"""

# tvm-ffi-stubgen(begin): export/_ffi_api
# fmt: off
# isort: off
from ._ffi_api import *  # noqa: F403
from ._ffi_api import __all__ as _ffi_api__all__
if "__all__" not in globals():
    __all__ = []
__all__.extend(_ffi_api__all__)
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
