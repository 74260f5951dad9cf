"""my_ext: the Rust library of `examples/point` as a Python package.

`import my_ext` imports `tvm_ffi` (which loads libtvm_ffi), then loads the Rust library; the
classes and functions are what the library registers under `my_ext.`, typed by the stubs that
tvm-ffi-stubgen writes into `_ffi_api.py` at build time.
"""

import re as _re

import tvm_ffi as _tvm_ffi

# The apache-tvm-ffi releases this package declares (pyproject.toml) and is tested with, checked
# before the library loads: the dynamic linker would report an older runtime only as an
# undefined symbol.
_found = _re.match(r"(\d+)\.(\d+)\.(\d+)", _tvm_ffi.__version__)
if not _found or not (0, 1, 14) <= tuple(map(int, _found.groups())) < (0, 2):
    raise ImportError(
        f"my_ext needs apache-tvm-ffi>=0.1.14,<0.2, but apache-tvm-ffi {_tvm_ffi.__version__} is "
        "installed: pip install 'apache-tvm-ffi>=0.1.14,<0.2'"
    )

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
