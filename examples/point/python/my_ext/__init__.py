"""my_ext: the Rust library of `examples/point` as a Python package.

`import my_ext` imports `tvm_ffi` (which loads libtvm_ffi), then loads the Rust library; the
classes and functions are what the library registers under `my_ext.`, typed by the stubs that
tvm-ffi-stubgen writes into `_ffi_api.py` at build time.
"""

# tvm-ffi-stubgen(begin): export/_ffi_api
# fmt: off
# isort: off
from ._ffi_api import *  # noqa: F403
from . import _ffi_api
__all__ = []  # the library's names; append names of your own below the block
__all__ += _ffi_api.__all__
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
