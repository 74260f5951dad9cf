// The C++ side of the RMSNorm speed comparison (scripts/gpu-check.sh): the same PTX kernel the
// Rust library embeds (kernels/rmsnorm.ptx), loaded and launched from C++ through the CUDA
// driver API (dlopen'ed libcuda.so.1, as the Rust toolkit does; no CUDA toolkit needed), with
// no TVM-FFI in between. Prints the mean time per launch, as JSON:
//   - "kernel_us": back-to-back launches of rows x hidden bfloat16, then one synchronize
//     (the kernel's own time once the queue is full);
//   - "launch_us": launches of a 1 x 128 row each followed by a synchronize (launch overhead).
//
// Usage: cuda_launch <rmsnorm.ptx> <rows> <hidden> <iterations>
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using CUresult = int;
using Handle = void*;

#define LOAD(name, sig)                                         \
  auto name = reinterpret_cast<sig>(dlsym(libcuda, #name));     \
  if (name == nullptr) {                                        \
    std::fprintf(stderr, "libcuda.so.1 lacks %s\n", #name);     \
    return 2;                                                   \
  }
#define CHECK(call)                                                 \
  do {                                                              \
    CUresult rc = (call);                                           \
    if (rc != 0) {                                                  \
      std::fprintf(stderr, "%s failed: CUDA error %d\n", #call, rc); \
      return 1;                                                     \
    }                                                               \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: cuda_launch <rmsnorm.ptx> <rows> <hidden> <iterations>\n");
    return 2;
  }
  std::ifstream file(argv[1]);
  std::stringstream text;
  text << file.rdbuf();
  std::string ptx = text.str();
  unsigned rows = std::atoi(argv[2]), hidden = std::atoi(argv[3]);
  int iterations = std::atoi(argv[4]);
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW);
  if (libcuda == nullptr) {
    std::fprintf(stderr, "cannot load libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  LOAD(cuInit, CUresult (*)(unsigned));
  LOAD(cuDeviceGet, CUresult (*)(int*, int));
  LOAD(cuDevicePrimaryCtxRetain, CUresult (*)(Handle*, int));
  LOAD(cuCtxSetCurrent, CUresult (*)(Handle));
  LOAD(cuModuleLoadData, CUresult (*)(Handle*, const void*));
  LOAD(cuModuleGetFunction, CUresult (*)(Handle*, Handle, const char*));
  LOAD(cuMemAlloc_v2, CUresult (*)(uint64_t*, size_t));
  LOAD(cuMemsetD8_v2, CUresult (*)(uint64_t, unsigned char, size_t));
  LOAD(cuCtxSynchronize, CUresult (*)());
  LOAD(cuLaunchKernel, CUresult (*)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, Handle, void**, void**));
  int device;
  Handle context, module, function;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&device, 0));
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  CHECK(cuModuleLoadData(&module, ptx.c_str()));
  CHECK(cuModuleGetFunction(&function, module, "rmsnorm_bf16"));
  size_t bytes = size_t(rows) * hidden * 2;
  uint64_t x, out, w;
  CHECK(cuMemAlloc_v2(&x, bytes));
  CHECK(cuMemAlloc_v2(&out, bytes));
  CHECK(cuMemAlloc_v2(&w, size_t(hidden) * 2));
  // bfloat16 0x3f80 = 1.0 everywhere.
  CHECK(cuMemsetD8_v2(x, 0x3f, bytes));
  CHECK(cuMemsetD8_v2(w, 0x3f, size_t(hidden) * 2));
  auto launch = [&](unsigned r, unsigned h) {
    unsigned block = ((h + 31) / 32) * 32;
    block = block < 32 ? 32 : (block > 1024 ? 1024 : block);
    float eps = 1e-6f;
    void* params[] = {&out, &x, &w, &h, &h, &h, &eps};
    return cuLaunchKernel(function, r, 1, 1, block, 1, 1, 0, nullptr, params, nullptr);
  };
  CHECK(launch(rows, hidden));  // warm-up
  CHECK(cuCtxSynchronize());
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) CHECK(launch(rows, hidden));
  CHECK(cuCtxSynchronize());
  double kernel_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      iterations;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    CHECK(launch(1, 128));
    CHECK(cuCtxSynchronize());
  }
  double launch_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      iterations;
  std::printf("{\"kernel_us\": %.3f, \"launch_us\": %.3f}\n", kernel_us, launch_us);
  return 0;
}
