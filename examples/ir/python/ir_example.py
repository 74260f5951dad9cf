"""Python classes of the expression IR that the Rust library `examples/ir` defines: importing
this module loads the library (`$IR_EXAMPLE_LIB`, else the workspace's debug build) and
registers the classes, as stubgen would write them."""
import os
import pathlib

import tvm_ffi

_DEFAULT = pathlib.Path(__file__).resolve().parents[3] / "target" / "debug" / "libtvm_ffi_example_ir.so"
LIB = tvm_ffi.load_module(os.environ.get("IR_EXAMPLE_LIB", str(_DEFAULT)))


@tvm_ffi.register_object("ir_example.Expr")
class Expr(tvm_ffi.Object):
    pass


@tvm_ffi.register_object("ir_example.Var")
class Var(Expr):
    pass


@tvm_ffi.register_object("ir_example.Const")
class Const(Expr):
    pass


@tvm_ffi.register_object("ir_example.Add")
class Add(Expr):
    pass


@tvm_ffi.register_object("ir_example.Mul")
class Mul(Expr):
    pass


@tvm_ffi.register_object("ir_example.Let")
class Let(Expr):
    pass
