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
    print("expected TypeError:", err)


# Rust object types: register a Python class per type key (tvm-ffi-stubgen can write these).
@tvm_ffi.register_object("my_ext.Point")
class Point(tvm_ffi.Object):
    pass


@tvm_ffi.register_object("my_ext.Point3")
class Point3(Point):
    pass


p = Point(3, label="p")
print("Point(3, label='p') =", p, "norm2 =", p.norm2())
p.x = 4
print("after p.x = 4:", p, "scale(2) =", p.scale(2))
q = p.lift(5)
print("p.lift(5) =", q, "isinstance(q, Point):", isinstance(q, Point))
print("structural_equal(p, Point(4, label='p')):", tvm_ffi.structural_equal(p, Point(4, label="p")))
try:
    p.y = 1
except AttributeError as err:
    print("expected AttributeError:", err)
