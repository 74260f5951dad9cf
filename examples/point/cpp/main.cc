// The main example from C++: load the Rust library and call its functions through the
// runtime's C++ API, exactly as if they were written in C++.
#include <dlfcn.h>
#include <tvm/ffi/function.h>

#include <iostream>

namespace ffi = tvm::ffi;

int main(int argc, char** argv) {
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "usage: point_main <path to libtvm_ffi_example_point.so>: " << dlerror() << "\n";
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
    std::cout << err.kind() << ": " << err.message() << "\n";
  }
  return sum == 42 ? 0 : 1;
}
