"""my_package: object types and functions written in Rust (src/lib.rs).

`import my_package` imports `tvm_ffi` (which loads libtvm_ffi), then the Rust library; its
classes and functions are re-exported here from `_ffi_api.py`. Add Python code of your own
below the block.
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
