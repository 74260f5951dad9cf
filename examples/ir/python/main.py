"""The Rust IR of examples/ir from Python: build expressions, evaluate them in Rust, compare
them structurally, pickle, deep-copy and serialize them, as for an IR written in C++.

Usage: python main.py [path/to/libtvm_ffi_example_ir.so]"""
import copy
import os
import pickle
import sys

import tvm_ffi

if len(sys.argv) > 1:
    os.environ["IR_EXAMPLE_LIB"] = sys.argv[1]
from ir_example import Add, Const, Let, Mul, Var  # noqa: E402  (loads the library)

x, y = Var("x"), Var(name="y")
e = Add(x, Mul(a=Const(2), b=y))
print("expr:", e)
print("eval with x=1, y=3:", e.eval({x: 1, y: 3}))
try:
    Add(x)
except TypeError as err:
    print("expected TypeError:", err)
print("x + 1 == y + 1:", tvm_ffi.structural_equal(Add(x, Const(1)), Add(y, Const(1))))
print("... with free variables mapped:", tvm_ffi.structural_equal(Add(x, Const(1)), Add(y, Const(1)), map_free_vars=True))
let_x, let_y = Let(x, Const(1), Add(x, x)), Let(y, Const(1), Add(y, y))
print("let x = 1 in x + x == let y = 1 in y + y:", tvm_ffi.structural_equal(let_x, let_y))
back = pickle.loads(pickle.dumps(e))
print("pickled:", back, tvm_ffi.structural_equal(back, e, map_free_vars=True))
print("deep copy:", copy.deepcopy(let_x))
print("JSON graph:", tvm_ffi.serialization.to_json_graph_str(let_x))
