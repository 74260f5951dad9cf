// The C++ side of benches/python_call_overhead.py: the functions a C++ library author writes
// with refl::GlobalDef, twins of the Rust #[ffi_func] functions in benches/src/functions.rs.
// Built by the Python script as a shared library against the wheel's headers:
//   g++ -O2 -std=c++17 -shared -fPIC -I$(tvm-ffi-config --includedir)
//       -I$(tvm-ffi-config --dlpack-includedir) bench_functions.cc
//       -L$(tvm-ffi-config --libdir) -ltvm_ffi -Wl,-rpath,<libdir>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace ffi = tvm::ffi;

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("bench_cpp.nop", []() {})
      .def("bench_cpp.add_one", [](int64_t x) { return x + 1; })
      .def("bench_cpp.add3", [](int64_t a, int64_t b, int64_t c) { return a + b + c; })
      .def("bench_cpp.echo", [](ffi::ObjectRef x) { return x; });
}
