// C++ hands Rust (tests/peer) what Rust never declared: a module loaded in C++, and objects of
// C++ types whose fields and methods Rust reads, writes and calls by name. Prints `name=value`
// lines that tests/tests/cpp_peer.rs checks.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <iostream>
#include <string>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: peer <libtvm_ffi_testing.so> <libtvm_ffi_test_peer.so> <module.so>\n";
    return 2;
  }
  for (int i = 1; i < 3; ++i) {
    if (dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::cerr << "cannot load " << argv[i] << ": " << dlerror() << "\n";
      return 2;
    }
  }
  auto peer = [](const char* name) { return ffi::Function::GetGlobalRequired(std::string("test_peer.") + name); };
  try {
    ffi::Module module = ffi::Module::LoadFromFile(argv[3]);
    std::cout << "module_call=" << peer("module_call")(module, "add_one", 41).cast<int64_t>() << "\n";
    try {
      peer("module_call")(module, "missing", 1);
    } catch (const ffi::Error& err) {
      std::cout << "module_call.missing=" << err.kind() << ": " << err.message() << "\n";
    }
    ffi::Function create = ffi::Function::GetGlobalRequired("ffi.MakeObjectFromPackedArgs");
    ffi::ObjectRef obj = create("testing.TestObjectBase", "v_i64", 7).cast<ffi::ObjectRef>();
    std::cout << "get_int_field=" << peer("get_int_field")(obj, "v_i64").cast<int64_t>() << "\n";
    std::cout << "get_field=" << peer("get_field")(obj, "v_str").cast<ffi::String>() << "\n";
    peer("set_field")(obj, "v_i64", 35);
    std::cout << "after_set="
              << refl::FieldGetter("testing.TestObjectBase", "v_i64")(obj).cast<int64_t>() << "\n";
    std::cout << "call_method=" << peer("call_method")(obj, "add_i64", 7).cast<int64_t>() << "\n";
    try {
      peer("get_field")(obj, "nope");
    } catch (const ffi::Error& err) {
      std::cout << "get_field.missing=" << err.kind() << ": " << err.message() << "\n";
    }
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
