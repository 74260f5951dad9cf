// A C++ user of `my_ext.Version` (examples/point: `#[ffi_type(frozen, eq, hash, ord, str)]`):
// the runtime's RecursiveEq/Hash/Lt/Le/Gt/Ge and ReprPrint, which C++ code calls, answer what
// the Rust traits answer; the reflected setters refuse writes to a version in use. Prints
// `name=value` lines the Rust test checks.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <iostream>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: dunders <libtvm_ffi_testing.so> <libtvm_ffi_example_point.so>\n";
    return 2;
  }
  // The testing library first: examples/point declares a type it defines.
  for (int i = 1; i < 3; ++i) {
    if (dlopen(argv[i], RTLD_NOW | (i == 1 ? RTLD_GLOBAL : RTLD_LOCAL)) == nullptr) {
      std::cerr << "cannot load " << argv[i] << ": " << dlerror() << "\n";
      return 2;
    }
  }
  try {
    int32_t index;
    TVMFFIByteArray key{"my_ext.Version", 14};
    TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&key, &index));
    refl::TypeAttrColumn init_column("__ffi_init__");
    ffi::Function init = init_column[index].cast<ffi::Function>();
    ffi::ObjectRef a = init(1, 2).cast<ffi::ObjectRef>();
    ffi::ObjectRef b = init(1, 2, 0).cast<ffi::ObjectRef>();
    ffi::ObjectRef c = init(1, 10).cast<ffi::ObjectRef>();
    auto global = [](const char* name) { return ffi::Function::GetGlobalRequired(name); };
    ffi::Function eq = global("ffi.RecursiveEq"), lt = global("ffi.RecursiveLt"),
                  le = global("ffi.RecursiveLe"), gt = global("ffi.RecursiveGt"),
                  ge = global("ffi.RecursiveGe"), hash = global("ffi.RecursiveHash"),
                  repr = global("ffi.ReprPrint");
    std::cout << "same_object=" << a.same_as(b) << "\n";
    std::cout << "eq(a,b)=" << eq(a, b).cast<bool>() << "\n";
    std::cout << "eq(a,c)=" << eq(a, c).cast<bool>() << "\n";
    std::cout << "lt(a,c)=" << lt(a, c).cast<bool>() << "\n";
    std::cout << "le(a,b)=" << le(a, b).cast<bool>() << "\n";
    std::cout << "gt(a,c)=" << gt(a, c).cast<bool>() << "\n";
    std::cout << "ge(c,a)=" << ge(c, a).cast<bool>() << "\n";
    std::cout << "hash(a)==hash(b)=" << (hash(a).cast<int64_t>() == hash(b).cast<int64_t>())
              << "\n";
    std::cout << "repr(c)=" << repr(c).cast<ffi::String>() << "\n";
    // Through containers too, and Rust's own `Ord` (`my_ext.newest`) agrees.
    ffi::Array<ffi::ObjectRef> xs{c, a};
    std::cout << "repr([c,a])=" << repr(xs).cast<ffi::String>() << "\n";
    std::cout << "newest=" << repr(global("my_ext.newest")(ffi::Array<ffi::ObjectRef>{a, c, b}))
                                  .cast<ffi::String>()
              << "\n";
    // No field is writable: the setter refuses, the value stays.
    try {
      refl::FieldSetter("my_ext.Version", "major")(a.get(), 7);
      std::cout << "set=accepted\n";
    } catch (const ffi::Error& err) {
      std::cout << "set=" << err.kind() << "\n";
    }
    std::cout << "after_set=" << repr(a).cast<ffi::String>() << "\n";
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected error: " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
