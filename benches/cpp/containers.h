// Container rows of the call-overhead benchmark, the twin of benches/src/containers.rs: the same
// tables (built by the runtime's `ffi.Map` / `ffi.Array` in both programs), read the way a C++
// user reads them, in nanoseconds per operation:
//   map.get         m.Get(k) on a 1000-entry Map<int64_t, int64_t> (dense), cycling through keys
//   map.get_str     the same with 10-byte ffi::String keys (heap strings, hashed by content)
//   map.get_small   m.Get(k) on a 3-entry map (small: a linear scan)
//   map.len         m.size()
//   map.iterate     one entry of `for (auto kv : m)`
//   array.get       a[i] on a 1000-element Array<int64_t>
//   array.iterate   one element of `for (int64_t x : a)`
//   shape.build     ffi::Shape({i, 2, 3, 4}), released at once
// Included by call_overhead.cc, whose BestNsPerOp and Report `Run` receives.
#ifndef TVM_FFI_BENCH_CONTAINERS_H_
#define TVM_FFI_BENCH_CONTAINERS_H_
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <string>
#include <vector>

namespace container_bench {

namespace ffi = tvm::ffi;

constexpr size_t kN = 1000;

// Same role as Rust's std::hint::black_box (as in call_overhead.cc).
template <typename T>
inline void DoNotOptimize(T& value) {
  asm volatile("" : "+m"(value) : : "memory");
}

// A map built by the runtime's `ffi.Map` from `keys` and the values 0.., as the Rust twin builds
// its own.
template <typename K>
ffi::Map<K, int64_t> RuntimeMap(const std::vector<K>& keys) {
  std::vector<ffi::Any> args;
  for (size_t i = 0; i < keys.size(); ++i) {
    args.emplace_back(keys[i]);
    args.emplace_back(static_cast<int64_t>(i));
  }
  std::vector<ffi::AnyView> views(args.begin(), args.end());
  ffi::Any out;
  ffi::Function::GetGlobalRequired("ffi.Map")
      .CallPacked(ffi::PackedArgs(views.data(), static_cast<int32_t>(views.size())), &out);
  return out.cast<ffi::Map<K, int64_t>>();
}

template <typename BestNsPerOp, typename Report>
int Run(int64_t iterations, int runs, BestNsPerOp best, Report report) {
  std::vector<int64_t> int_keys;
  std::vector<ffi::String> str_keys;
  std::vector<ffi::Any> items;
  for (size_t i = 0; i < kN; ++i) {
    int_keys.push_back(static_cast<int64_t>(i) * 7919);
    char text[16];
    std::snprintf(text, sizeof(text), "key-%06zu", i);
    str_keys.emplace_back(text);
    items.emplace_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> small_keys{3, 1, 2};
  ffi::Map<int64_t, int64_t> int_map = RuntimeMap(int_keys);
  ffi::Map<ffi::String, int64_t> str_map = RuntimeMap(str_keys);
  ffi::Map<int64_t, int64_t> small_map = RuntimeMap(small_keys);
  std::vector<ffi::AnyView> views(items.begin(), items.end());
  ffi::Any array_any;
  ffi::Function::GetGlobalRequired("ffi.Array")
      .CallPacked(ffi::PackedArgs(views.data(), static_cast<int32_t>(views.size())), &array_any);
  ffi::Array<int64_t> array = array_any.cast<ffi::Array<int64_t>>();

  // Check once, outside the timed loops, that the reads do what we think they do.
  int64_t total = 0;
  for (auto kv : int_map) total += kv.second;
  if (int_map.Get(int_keys[10]).value_or(-1) != 10 || str_map.Get(str_keys[999]).value_or(-1) != 999 ||
      small_map.Get(2).value_or(-1) != 2 || total != static_cast<int64_t>((kN - 1) * kN / 2) ||
      array[7] != 7) {
    std::fprintf(stderr, "error: a container check failed\n");
    return 1;
  }

  report("map.get", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           size_t j = 0;
           for (int64_t i = 0; i < n; ++i) {
             int64_t key = int_keys[j];
             DoNotOptimize(key);
             sum += int_map.Get(key).value_or(0);
             if (++j == kN) j = 0;
           }
           DoNotOptimize(sum);
         }));

  report("map.get_str", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           size_t j = 0;
           for (int64_t i = 0; i < n; ++i) {
             const ffi::String* key = &str_keys[j];
             DoNotOptimize(key);
             sum += str_map.Get(*key).value_or(0);
             if (++j == kN) j = 0;
           }
           DoNotOptimize(sum);
         }));

  report("map.get_small", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           size_t j = 0;
           for (int64_t i = 0; i < n; ++i) {
             int64_t key = small_keys[j];
             DoNotOptimize(key);
             sum += small_map.Get(key).value_or(0);
             if (++j == small_keys.size()) j = 0;
           }
           DoNotOptimize(sum);
         }));

  report("map.len", best(iterations, runs, [&](int64_t n) {
           size_t sum = 0;
           for (int64_t i = 0; i < n; ++i) {
             const ffi::Map<int64_t, int64_t>* map = &int_map;
             DoNotOptimize(map);
             sum += map->size();
           }
           DoNotOptimize(sum);
         }));

  report("map.iterate", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           for (int64_t visited = 0; visited < n; visited += kN) {
             const ffi::Map<int64_t, int64_t>* map = &int_map;
             DoNotOptimize(map);
             for (auto kv : *map) sum += kv.first ^ kv.second;
           }
           DoNotOptimize(sum);
         }));

  report("array.get", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           int64_t j = 0;
           for (int64_t i = 0; i < n; ++i) {
             const ffi::Array<int64_t>* a = &array;
             DoNotOptimize(a);
             DoNotOptimize(j);
             sum += (*a)[j];
             if (++j == static_cast<int64_t>(kN)) j = 0;
           }
           DoNotOptimize(sum);
         }));

  report("array.iterate", best(iterations, runs, [&](int64_t n) {
           int64_t sum = 0;
           for (int64_t visited = 0; visited < n; visited += kN) {
             const ffi::Array<int64_t>* a = &array;
             DoNotOptimize(a);
             for (int64_t x : *a) sum += x;
           }
           DoNotOptimize(sum);
         }));

  report("shape.build", best(iterations, runs, [&](int64_t n) {
           for (int64_t i = 0; i < n; ++i) {
             int64_t d = i;
             DoNotOptimize(d);
             ffi::Shape shape({d, 2, 3, 4});
             DoNotOptimize(shape);
           }
         }));
  return 0;
}

}  // namespace container_bench
#endif  // TVM_FFI_BENCH_CONTAINERS_H_
