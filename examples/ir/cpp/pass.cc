// A C++ pass over the Rust IR of examples/ir that reads the nodes' fields in place, through the
// header generated from the library's reflection (tests/python/test_cpp_header.py generates
// `ir_example_types.h` with `python -m tvm_ffi_build.cpp_header
// libtvm_ffi_example_ir.so --prefix ir_example. --out ir_example_types.h`).
// Evaluates an expression over an environment of variable values and counts the nodes, with no
// reflection call per node; then shows what a wrong type and a stale header do.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <iostream>
#include <map>
#include <string>

#include "ir_example_types.h"

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

namespace {

struct Evaluator {
  std::map<std::string, int64_t> env;
  int nodes = 0;

  int64_t Eval(const ffi::ObjectRef& e) {
    ++nodes;
    if (ir_example::Const::Is(e)) return ir_example::Const(e).value();
    if (ir_example::Var::Is(e)) {
      // A 16-byte `Any` field holding the name (a Rust `tvm_ffi::String`), read as a String.
      std::string name = ir_example::Var(e).name();
      return env.at(name);
    }
    if (ir_example::Add::Is(e)) {
      ir_example::Add add(e);
      return Eval(add.a()) + Eval(add.b());
    }
    if (ir_example::Mul::Is(e)) {
      ir_example::Mul mul(e);
      return Eval(mul.a()) * Eval(mul.b());
    }
    if (ir_example::Let::Is(e)) {
      ir_example::Let let(e);
      std::string name = ir_example::Var(let.var()).name();
      int64_t value = Eval(let.value());
      ++nodes;  // the bound variable
      auto saved = env;
      env[name] = value;
      int64_t body = Eval(let.body());
      env = saved;
      return body;
    }
    TVM_FFI_THROW(TypeError) << "not an ir_example expression";
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "usage: ir_pass <libtvm_ffi_example_ir.so>\n";
    return 2;
  }
  try {
    // Built with the header's typed constructors (each calls the type's `__ffi_init__`).
    using namespace ir_example;
    ffi::ObjectRef x = Var::New("x").object(), y = Var::New("y").object();
    auto c = [](int64_t v) { return Const::New(v).object(); };
    // let x = 4 in x + 2 * y
    ffi::ObjectRef e =
        Let::New(x, c(4), Add::New(x, Mul::New(c(2), y).object()).object()).object();
    Evaluator eval;
    eval.env["y"] = 5;
    std::cout << "eval: " << eval.Eval(e) << ", nodes: " << eval.nodes << "\n";
    // The in-place read and the runtime's reflected getter agree.
    ir_example::Add sum(ir_example::Let(e).body());
    std::cout << "same child as the getter: " << std::boolalpha
              << refl::FieldGetter("ir_example.Add", "a")(sum.object())
                     .cast<ffi::ObjectRef>()
                     .same_as(sum.a())
              << "\n";
    try {
      ir_example::Const wrong(x);
    } catch (const ffi::Error& err) {
      std::cout << "expected " << err.kind() << ": " << err.message() << "\n";
    }
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
