"""The signature of an exported function, read from the metadata the Rust SDK registers with it:
`type_schema` (parameter and return types), `arg_names` (the parameter names, registered by
the SDK from the Rust signature; else ``arg0``, ``arg1``, ...) and the keys the author declares
in `#[ffi_func(metadata(...))]`:

- ``mutates = "out"``: the tensor parameters the function writes in place;
- ``returns_like = "x"``: the returned tensor has the shape, dtype and device of that argument.

No PyTorch here: this module is what the torch registration and its tests build on.
"""
from __future__ import annotations

import dataclasses
import json

import tvm_ffi

#: Type schema names of tensor parameters (a `TensorView` is `DLTensor*`, a `Tensor` `ffi.Tensor`).
TENSOR_TYPES = ("DLTensor*", "ffi.Tensor")
_SCALARS = {"float": "float", "int": "int", "bool": "bool", "str": "str"}


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    #: The torch schema type: "Tensor", "Tensor?", "float", "int", "bool", "str".
    torch_type: str
    mutated: bool


@dataclasses.dataclass(frozen=True)
class Signature:
    name: str
    params: tuple[Param, ...]
    #: "()" (returns nothing) or "Tensor".
    returns: str
    #: The argument whose shape, dtype and device the returned tensor has.
    returns_like: str | None

    def torch_schema(self, op_name: str) -> str:
        """`op(Tensor(a!) out, Tensor x, float eps) -> ()`: the torch.library schema."""
        aliases = iter("abcdefghijklmnopqrstuvwxyz")
        parts = []
        for p in self.params:
            if p.mutated:
                parts.append(f"Tensor({next(aliases)}!) {p.name}")
            else:
                parts.append(f"{p.torch_type} {p.name}")
        return f"{op_name}({', '.join(parts)}) -> {self.returns}"


def _torch_type(schema: dict, where: str) -> str:
    kind = schema["type"]
    if kind in TENSOR_TYPES:
        return "Tensor"
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "Optional":
        inner = _torch_type(schema["args"][0], where)
        return inner + "?"
    raise TypeError(f"{where}: a parameter of type {kind} has no torch.library schema type")


def read(name: str) -> Signature:
    """The signature of the global function `name` (a `TypeError` for a type torch cannot
    express, a `ValueError` for inconsistent metadata)."""
    meta = tvm_ffi.get_global_func_metadata(name)
    schema = json.loads(meta["type_schema"])
    named = schema.get("named_args") or {}
    params = named.get("params", schema.get("args", [])[1:])
    ret = named.get("return", schema.get("args", [{}])[:1])
    names = meta.get("arg_names", [])
    if isinstance(names, str):  # a comma-separated list (hand-written metadata)
        names = [n.strip() for n in names.split(",") if n.strip()]
    if names and len(names) != len(params):
        raise ValueError(
            f"{name}: arg_names lists {len(names)} names for {len(params)} parameters"
        )
    names = names or [f"arg{i}" for i in range(len(params))]
    mutates = {n.strip() for n in meta.get("mutates", "").split(",") if n.strip()}
    unknown = mutates - set(names)
    if unknown:
        raise ValueError(f"{name}: mutates names unknown parameters {sorted(unknown)}")
    out = []
    for pname, p in zip(names, params):
        torch_type = _torch_type(p, f"{name}({pname})")
        if pname in mutates and torch_type != "Tensor":
            raise ValueError(f"{name}: mutated parameter {pname} is not a tensor")
        out.append(Param(pname, torch_type, pname in mutates))
    ret_type = ret[0]["type"] if ret else "None"
    if ret_type == "None":
        returns = "()"
    elif ret_type in TENSOR_TYPES:
        returns = "Tensor"
    else:
        raise TypeError(f"{name}: a return type of {ret_type} is not supported")
    returns_like = meta.get("returns_like")
    if returns == "Tensor" and returns_like not in names:
        raise ValueError(
            f"{name}: a function returning a tensor needs metadata returns_like naming the "
            "argument whose shape, dtype and device the result has"
        )
    return Signature(name, tuple(out), returns, returns_like if returns == "Tensor" else None)
