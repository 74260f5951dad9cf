"""The main example from Python: load the Rust library and call its functions."""
import sys

import tvm_ffi

lib = sys.argv[1] if len(sys.argv) > 1 else "target/debug/libtvm_ffi_example_point.so"
tvm_ffi.load_module(lib)

add = tvm_ffi.get_global_func("my_ext.add")
print("my_ext.add(40, 2) =", add(40, 2))
print("doc:", tvm_ffi.get_global_func_metadata("my_ext.add"))
print("my_ext.greet('python') =", tvm_ffi.get_global_func("my_ext.greet")("python"))
print("my_ext.apply_twice(lambda x: x * 3, 5) =", tvm_ffi.get_global_func("my_ext.apply_twice")(lambda x: x * 3, 5))
print("my_ext.sum([1, 2, 3]) =", tvm_ffi.get_global_func("my_ext.sum")([1, 2, 3]))
try:
    add(1, "two")
except TypeError as err:
    print("TypeError:", err)
