"""Python side of the Rust kernel toolkit (tvm-ffi-kernels): `tvm_ffi_kernels.torch.register`
makes an exported Rust function a `torch.library` custom op from its registered signature."""
from . import signature

__all__ = ["signature"]
