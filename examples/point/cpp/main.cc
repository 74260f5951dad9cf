// The main example from C++: load the Rust library and call its functions through the
// runtime's C++ API, exactly as if they were written in C++.
#include <dlfcn.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>

#include <iostream>

namespace ffi = tvm::ffi;

int main(int argc, char** argv) {
  // Optional second argument: a library defining parents of Rust types (the C++ test peer
  // defines `testing.TestCxxClassBase`); it must be loaded first.
  if (argc > 2 && dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::cerr << "cannot load " << argv[2] << ": " << dlerror() << "\n";
    return 1;
  }
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "usage: point_main <libtvm_ffi_example_point.so> [libtvm_ffi_testing.so]: "
              << dlerror() << "\n";
    return 1;
  }
  ffi::Function add = ffi::Function::GetGlobalRequired("my_ext.add");
  int64_t sum = add(40, 2).cast<int64_t>();
  std::cout << "my_ext.add(40, 2) = " << sum << "\n";
  ffi::Function greet = ffi::Function::GetGlobalRequired("my_ext.greet");
  std::cout << "my_ext.greet(\"c++\") = " << greet("c++").cast<ffi::String>() << "\n";
  try {
    add(1, "two");
  } catch (const ffi::Error& err) {
    std::cout << "expected " << err.kind() << ": " << err.message() << "\n";
  }
  // A Rust object type: construct through its reflected constructor, read fields, call methods.
  namespace refl = tvm::ffi::reflection;
  int32_t point_index;
  TVMFFIByteArray key{"my_ext.Point", 12};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&key, &point_index));
  ffi::Function init = refl::TypeAttrColumn("__ffi_init__")[point_index].cast<ffi::Function>();
  ffi::ObjectRef p = init(3, 4).cast<ffi::ObjectRef>();
  int64_t norm2 = refl::GetMethod("my_ext.Point", "norm2")(p).cast<int64_t>();
  std::cout << "my_ext.Point(3, 4): x = " << refl::FieldGetter("my_ext.Point", "x")(p).cast<int64_t>()
            << ", label = " << refl::FieldGetter("my_ext.Point", "label")(p).cast<ffi::String>()
            << ", norm2() = " << norm2 << "\n";
  return sum == 42 && norm2 == 25 ? 0 : 1;
}
