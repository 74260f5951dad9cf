// Call-overhead benchmark of the C++ API of libtvm_ffi, the twin of
// benches/src/call_overhead.rs. Written the way a C++ user would: ffi::Function::GetGlobalRequired,
// operator(), Any::cast, ObjectRef copies.
//
// Measures, in nanoseconds per operation (best of several runs):
//   call.add_one          f(i).cast<int64_t>() on the global `testing.add_one`
//   call.nop              f() on the global `testing.nop`
//   objectref.clone_drop  ObjectRef copy of the function, destroyed at once
//   object.new_drop       a new object with one int64 field (make_object), released at once
//   field.rw_read         reading an int64_t member through `const T*` (the Rust twin reads an
//                         `Rw<i64>` field through `&T`)
//   map.*, array.*, shape.build   container reads and Shape construction (containers.h)
// and, as a reference for the Rust numbers, the exception-free C++ call that enters the callee
// through the C ABI entry point `safe_call`, as Rust does (operator() uses the C++-only
// `cpp_call` entry point when the callee provides one):
//   call.add_one.expected f.CallExpected<int64_t>(i).value()
//   call.nop.expected     f.CallExpected()
//
// Usage: call_overhead [ITERATIONS] [RUNS]   (defaults: 10000000 and 5)
// Output lines `<operation> <ns> ns/op` are parsed by benches/run.sh; keep them in step with
// the Rust program.
//
// Build (benches/run.sh does this):
//   g++ -O2 -std=c++17 -I$(tvm-ffi-config --includedir) -I$(tvm-ffi-config --dlpack-includedir)
//       -DTVM_FFI_BENCH_LIBDIR="\"$libdir\"" call_overhead.cc
//       -L$libdir -ltvm_ffi -Wl,-rpath,$libdir -ldl
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/expected.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>

#include "containers.h"

#ifndef TVM_FFI_BENCH_LIBDIR
#error "define TVM_FFI_BENCH_LIBDIR as the quoted output of `tvm-ffi-config --libdir`"
#endif

namespace ffi = tvm::ffi;

namespace {

/*! \brief The object of `object.new_drop`: one int64 field (the Rust twin's payload). */
class BenchObj : public ffi::Object {
 public:
  int64_t value = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.NewDrop", BenchObj, ffi::Object);
};

}  // namespace

namespace {

constexpr int64_t kDefaultIterations = 10000000;
constexpr int kDefaultRuns = 5;

// Same role as Rust's std::hint::black_box: the value is considered read and written.
template <typename T>
inline void DoNotOptimize(T& value) {
  asm volatile("" : "+m"(value) : : "memory");
}

// Runs body(iterations) once to warm up, then `runs` timed times; returns the best ns/op.
template <typename F>
double BestNsPerOp(int64_t iterations, int runs, F body) {
  body(iterations / 10 + 1);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < runs; ++r) {
    auto start = std::chrono::steady_clock::now();
    body(iterations);
    auto stop = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(stop - start).count();
    best = std::min(best, ns / static_cast<double>(iterations));
  }
  return best;
}

void Report(const char* operation, double ns) { std::printf("%-24s %9.2f ns/op\n", operation, ns); }

// Loads the wheel's C++ test library, whose static initialisers register `testing.*`.
void LoadTestingLibrary(const std::string& libdir) {
  std::string path = libdir + "/libtvm_ffi_testing.so";
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* err = dlerror();
    std::fprintf(stderr, "error: cannot load %s: %s\n", path.c_str(), err ? err : "unknown error");
    std::exit(1);
  }
}

int Run(int argc, char** argv) {
  int64_t iterations = argc > 1 ? std::max<int64_t>(1, std::atoll(argv[1])) : kDefaultIterations;
  int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : kDefaultRuns;
  LoadTestingLibrary(TVM_FFI_BENCH_LIBDIR);
  ffi::Function add_one = ffi::Function::GetGlobalRequired("testing.add_one");
  ffi::Function nop = ffi::Function::GetGlobalRequired("testing.nop");

  // Check once, outside the timed loops, that the calls do what we think they do.
  if (add_one(int64_t{41}).cast<int64_t>() != 42) {
    std::fprintf(stderr, "error: testing.add_one(41) != 42\n");
    return 1;
  }
  nop();

  std::printf("# c++: %lld iterations, best of %d runs\n", static_cast<long long>(iterations), runs);
  // The container rows (benches/cpp/containers.h).
  if (container_bench::Run(
          iterations, runs,
          [](int64_t n, int r, auto body) { return BestNsPerOp(n, r, body); }, Report) != 0) {
    return 1;
  }
  Report("call.add_one", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             int64_t x = i;
             DoNotOptimize(x);
             int64_t out = add_one(x).cast<int64_t>();
             DoNotOptimize(out);
           }
         }));

  Report("call.nop", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             ffi::Any out = nop();
             DoNotOptimize(out);
           }
         }));

  Report("call.add_one.expected", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             int64_t x = i;
             DoNotOptimize(x);
             ffi::Expected<int64_t> out = add_one.CallExpected<int64_t>(x);
             if (!out.is_ok()) std::abort();
             int64_t value = out.value();
             DoNotOptimize(value);
           }
         }));

  Report("call.nop.expected", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             ffi::Expected<ffi::Any> out = nop.CallExpected();
             if (!out.is_ok()) std::abort();
             DoNotOptimize(out);
           }
         }));

  Report("objectref.clone_drop", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             ffi::ObjectRef copy = add_one;
             DoNotOptimize(copy);
           }
         }));

  Report("object.new_drop", BestNsPerOp(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             ffi::ObjectPtr<BenchObj> obj = ffi::make_object<BenchObj>();
             obj->value = i;
             DoNotOptimize(obj);
           }
         }));

  ffi::ObjectPtr<BenchObj> read_obj = ffi::make_object<BenchObj>();
  read_obj->value = 3;
  const BenchObj* payload = read_obj.get();
  Report("field.rw_read", BestNsPerOp(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           for (int64_t i = 0; i < n; ++i) {
             DoNotOptimize(payload);
             sum += payload->value;
           }
           DoNotOptimize(sum);
         }));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
