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

namespace {
/*! \brief Two writable int64 fields; the twin of the Rust `bench.RwPair`. */
class RwPairObj : public ffi::Object {
 public:
  int64_t a = 0;
  int64_t b = 0;
  int64_t Sum() const { return a + b; }
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_cpp.RwPair", RwPairObj, ffi::Object);
};

/*! \brief Two int64 fields and an explicit constructor; the twin of the Rust `bench.Pair`. */
class PairObj : public ffi::Object {
 public:
  int64_t a;
  int64_t b;
  PairObj(int64_t a, int64_t b) : a(a), b(b) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench_cpp.Pair", PairObj, ffi::Object);
};
}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<RwPairObj>()
      .def_rw("a", &RwPairObj::a)
      .def_rw("b", &RwPairObj::b)
      .def("sum", &RwPairObj::Sum);
  refl::ObjectDef<PairObj>()
      .def_ro("a", &PairObj::a)
      .def_ro("b", &PairObj::b)
      .def(refl::init<int64_t, int64_t>());
  refl::GlobalDef().def("bench_cpp.make_rw_pair", [](int64_t a, int64_t b) {
    ffi::ObjectPtr<RwPairObj> pair = ffi::make_object<RwPairObj>();
    pair->a = a;
    pair->b = b;
    return ffi::ObjectRef(pair);
  });
  refl::GlobalDef()
      .def("bench_cpp.nop", []() {})
      .def("bench_cpp.add_one", [](int64_t x) { return x + 1; })
      .def("bench_cpp.add3", [](int64_t a, int64_t b, int64_t c) { return a + b + c; })
      .def("bench_cpp.echo", [](ffi::ObjectRef x) { return x; });
}
