// The Rust IR of examples/ir from C++: build expressions through the reflected constructors,
// print them, compare them structurally (free variables mapped, `let` bindings by position),
// write and read a JSON graph, deep-copy, and evaluate with the Rust function `ir_example.eval`.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <iostream>
#include <string>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

namespace {

// The reflected constructor of a node type.
ffi::Function Node(const std::string& name) {
  std::string key = "ir_example." + name;
  int32_t index;
  TVMFFIByteArray bytes{key.data(), key.size()};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&bytes, &index));
  return refl::TypeAttrColumn("__ffi_init__")[index].cast<ffi::Function>();
}

std::string Repr(const ffi::Any& value) {
  return ffi::Function::GetGlobalRequired("ffi.ReprPrint")(value).cast<ffi::String>();
}

bool Equal(const ffi::Any& a, const ffi::Any& b, bool map_free_vars) {
  static ffi::Function equal = ffi::Function::GetGlobalRequired("ffi.StructuralEqual");
  return equal(a, b, map_free_vars, false).cast<bool>();
}

int64_t Hash(const ffi::Any& value) {
  static ffi::Function hash = ffi::Function::GetGlobalRequired("ffi.StructuralHash");
  return hash(value, false, false).cast<int64_t>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "usage: ir_main <libtvm_ffi_example_ir.so>\n";
    return 2;
  }
  std::cout << std::boolalpha;
  try {
    ffi::Function var = Node("Var"), constant = Node("Const"), add = Node("Add"), mul = Node("Mul"),
                  let = Node("Let");
    ffi::ObjectRef x = var("x").cast<ffi::ObjectRef>();
    ffi::ObjectRef y = var("y").cast<ffi::ObjectRef>();
    ffi::Any e = add(x, mul(constant(2), y));
    std::cout << "expr: " << Repr(e) << "\n";
    ffi::Map<ffi::ObjectRef, int64_t> env{{x, 1}, {y, 3}};
    std::cout << "eval: " << ffi::Function::GetGlobalRequired("ir_example.eval")(e, env).cast<int64_t>()
              << "\n";
    std::cout << "x+1 == y+1: " << Equal(add(x, constant(1)), add(y, constant(1)), false)
              << ", with free vars mapped: " << Equal(add(x, constant(1)), add(y, constant(1)), true)
              << "\n";
    ffi::Any let_x = let(x, constant(1), add(x, x));
    ffi::Any let_y = let(y, constant(1), add(y, y));
    std::cout << "let x = 1 in x + x == let y = 1 in y + y: " << Equal(let_x, let_y, false)
              << ", same hash: " << (Hash(let_x) == Hash(let_y)) << "\n";
    ffi::String json = ffi::Function::GetGlobalRequired("ffi.ToJSONGraphString")(let_x, nullptr)
                           .cast<ffi::String>();
    std::cout << "json: " << json << "\n";
    ffi::Any back = ffi::Function::GetGlobalRequired("ffi.FromJSONGraphString")(json);
    std::cout << "from json: " << Repr(back) << ", equal: " << Equal(back, let_x, false) << "\n";
    ffi::Any copy = ffi::Function::GetGlobalRequired("ffi.DeepCopy")(e);
    std::cout << "deep copy: " << Repr(copy) << ", shares x: "
              << refl::FieldGetter("ir_example.Add", "a")(copy.cast<ffi::ObjectRef>())
                     .cast<ffi::ObjectRef>()
                     .same_as(x)
              << "\n";
    try {
      add(x);
    } catch (const ffi::Error& err) {
      std::cout << "expected " << err.kind() << ": " << err.message() << "\n";
    }
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
