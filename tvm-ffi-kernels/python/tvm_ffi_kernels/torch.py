"""`register(name)`: an exported Rust function as a `torch.library` custom op, from its
registered signature (see `tvm_ffi_kernels.signature`), so that it runs under
`torch.compile(fullgraph=True)` and passes `torch.library.opcheck`:

- the schema comes from the Rust parameter types (`TensorView`/`Tensor` -> `Tensor`,
  `Option<TensorView>` -> `Tensor?`, `f64` -> `float`, `i64` -> `int`, `bool`);
- the tensors it writes (`metadata(mutates = "out")`) are marked `Tensor(a!)`;
- the fake (meta) implementation is "returns nothing" for a function that only mutates, or
  `empty_like(<returns_like argument>)` for one that returns a tensor.

The op is registered the way vLLM and sglang register theirs by hand (`torch.library.Library`
`define` + `impl`, no Python wrapper layers of `custom_op`): a call costs one dispatcher hop
over the direct call.
"""
from __future__ import annotations

import tvm_ffi

import torch

from . import signature as _signature

_LIBRARIES: dict[str, torch.library.Library] = {}


def _library(namespace: str) -> torch.library.Library:
    if namespace not in _LIBRARIES:
        _LIBRARIES[namespace] = torch.library.Library(namespace, "FRAGMENT")
    return _LIBRARIES[namespace]


def register(name: str, op_name: str | None = None):
    """Registers the global function `name` (`"rmsnorm.rmsnorm"`) as the custom op
    `op_name` (default: `"rmsnorm::rmsnorm"`, the part before the first dot as namespace, dots
    in the rest as underscores) and returns the op (`torch.ops.rmsnorm.rmsnorm`)."""
    sig = _signature.read(name)
    if op_name is None:
        namespace, _, rest = name.partition(".")
        op_name = f"{namespace}::{rest.replace('.', '_')}"
    namespace, _, short = op_name.partition("::")
    func = tvm_ffi.get_global_func(name)
    lib = _library(namespace)
    lib.define(sig.torch_schema(short))

    if sig.returns == "()":
        # The function itself: tvm_ffi takes torch tensors (and sets the current stream and
        # allocator) and returns None. No Python frame in between.
        impl = func
    else:

        def impl(*args):
            result = func(*args)
            return result if isinstance(result, torch.Tensor) else torch.from_dlpack(result)

    for key in ("CPU", "CUDA"):
        lib.impl(short, impl, key)

    like = [p.name for p in sig.params].index(sig.returns_like) if sig.returns_like else None

    def fake(*args):
        if like is None:
            return None
        return torch.empty_like(args[like])

    torch.library.register_fake(op_name, fake, lib=lib)
    return getattr(getattr(torch.ops, namespace), short)
