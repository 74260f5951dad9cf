"""my_package: object types and functions written in Rust (src/lib.rs).

`import my_package` imports `tvm_ffi` (which loads libtvm_ffi), then the Rust library; its
classes and functions are re-exported here from `_ffi_api.py`. Add Python code of your own
below the block.
"""

import re as _re

import tvm_ffi as _tvm_ffi

# The apache-tvm-ffi releases this package declares (pyproject.toml) and is tested with, checked
# before the library loads: the dynamic linker would report an older runtime only as an
# undefined symbol.
_found = _re.match(r"(\d+)\.(\d+)\.(\d+)", _tvm_ffi.__version__)
if not _found or not (0, 1, 14) <= tuple(map(int, _found.groups())) < (0, 2):
    raise ImportError(
        f"my_package needs apache-tvm-ffi>=0.1.14,<0.2, but apache-tvm-ffi {_tvm_ffi.__version__} is "
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
