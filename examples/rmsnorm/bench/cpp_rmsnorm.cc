// The C++ TVM-FFI twin of `rmsnorm.rmsnorm` for the speed comparison (scripts/gpu-check.sh,
// bench.py gpu --cpp-lib): a C++ library written the way FlashInfer writes its exports
// (`refl::GlobalDef`, `TensorView` arguments, the environment stream), launching the same PTX
// kernel as the Rust library through the CUDA driver API (dlopen'ed libcuda.so.1, as the Rust
// toolkit does). Registers:
//   rmsnorm_cpp.load_ptx(path)                              reads kernels/rmsnorm.ptx
//   rmsnorm_cpp.rmsnorm(out, x, weight, eps, enable_pdl)    the op (enable_pdl ignored: the
//                                                           benchmark launches without it)
// Build: c++ -std=c++17 -O2 -shared -fPIC cpp_rmsnorm.cc $(tvm-ffi-config --cxxflags)
//        $(tvm-ffi-config --ldflags) -ltvm_ffi -ldl -o librmsnorm_cpp.so
#include <dlfcn.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

namespace {

using CUresult = int;
using Handle = void*;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(int*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(Handle*, int);
  CUresult (*cuCtxGetCurrent)(Handle*);
  CUresult (*cuCtxSetCurrent)(Handle);
  CUresult (*cuModuleLoadData)(Handle*, const void*);
  CUresult (*cuModuleGetFunction)(Handle*, Handle, const char*);
  CUresult (*cuLaunchKernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, Handle, void**, void**);
};

std::string ptx_text;
std::once_flag loaded;
Driver driver;
Handle context = nullptr;
Handle kernels[3] = {nullptr, nullptr, nullptr};  // f32, f16, bf16

void Check(CUresult rc, const char* what) {
  if (rc != 0) TVM_FFI_THROW(RuntimeError) << what << " failed: CUDA error " << rc;
}

template <typename F>
void Load(void* lib, F* slot, const char* name) {
  *slot = reinterpret_cast<F>(dlsym(lib, name));
  if (*slot == nullptr) TVM_FFI_THROW(RuntimeError) << "libcuda.so.1 lacks " << name;
}

void LoadDriver(int device_id) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) TVM_FFI_THROW(RuntimeError) << "cannot load libcuda.so.1: " << dlerror();
  Load(lib, &driver.cuInit, "cuInit");
  Load(lib, &driver.cuDeviceGet, "cuDeviceGet");
  Load(lib, &driver.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  Load(lib, &driver.cuCtxGetCurrent, "cuCtxGetCurrent");
  Load(lib, &driver.cuCtxSetCurrent, "cuCtxSetCurrent");
  Load(lib, &driver.cuModuleLoadData, "cuModuleLoadData");
  Load(lib, &driver.cuModuleGetFunction, "cuModuleGetFunction");
  Load(lib, &driver.cuLaunchKernel, "cuLaunchKernel");
  int device;
  Check(driver.cuInit(0), "cuInit");
  Check(driver.cuDeviceGet(&device, device_id), "cuDeviceGet");
  Check(driver.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  Check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  Handle module;
  Check(driver.cuModuleLoadData(&module, ptx_text.c_str()), "cuModuleLoadData");
  const char* names[3] = {"rmsnorm_f32", "rmsnorm_f16", "rmsnorm_bf16"};
  for (int i = 0; i < 3; ++i) {
    Check(driver.cuModuleGetFunction(&kernels[i], module, names[i]), "cuModuleGetFunction");
  }
}

void LoadPtx(tvm::ffi::String path) {
  std::ifstream file(std::string(path.data(), path.size()));
  if (!file) TVM_FFI_THROW(ValueError) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  ptx_text = text.str();
}

int KernelIndex(DLDataType dtype) {
  if (dtype.code == kDLFloat && dtype.bits == 32 && dtype.lanes == 1) return 0;
  if (dtype.code == kDLFloat && dtype.bits == 16 && dtype.lanes == 1) return 1;
  if (dtype.code == kDLBfloat && dtype.bits == 16 && dtype.lanes == 1) return 2;
  TVM_FFI_THROW(TypeError) << "`x` must have dtype float32, float16 or bfloat16";
}

// The checks FlashInfer's rmsnorm makes (CHECK_INPUT / CHECK_DIM / shape and dtype equality),
// then one launch on the environment stream.
void RmsNorm(tvm::ffi::TensorView out, tvm::ffi::TensorView x, tvm::ffi::TensorView weight,
             double eps, bool enable_pdl) {
  (void)enable_pdl;
  if (x.ndim() != 2 || out.ndim() != 2 || weight.ndim() != 1) {
    TVM_FFI_THROW(ValueError) << "`x`, `out` must be 2-D and `weight` 1-D";
  }
  if (x.device().device_type != kDLCUDA || out.device().device_type != kDLCUDA ||
      weight.device().device_type != kDLCUDA) {
    TVM_FFI_THROW(ValueError) << "all tensors must be CUDA tensors";
  }
  if (x.stride(1) != 1 || out.stride(1) != 1 || weight.stride(0) != 1) {
    TVM_FFI_THROW(ValueError) << "rows must be contiguous";
  }
  int64_t rows = x.size(0), hidden = x.size(1);
  if (out.size(0) != rows || out.size(1) != hidden || weight.size(0) != hidden) {
    TVM_FFI_THROW(ValueError) << "shape mismatch";
  }
  int index = KernelIndex(x.dtype());
  std::call_once(loaded, LoadDriver, x.device().device_id);
  Handle current = nullptr;
  Check(driver.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != context) Check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  Handle stream = TVMFFIEnvGetStream(kDLCUDA, x.device().device_id);
  uint64_t out_ptr = reinterpret_cast<uint64_t>(out.data_ptr()) + out.byte_offset();
  uint64_t x_ptr = reinterpret_cast<uint64_t>(x.data_ptr()) + x.byte_offset();
  uint64_t w_ptr = reinterpret_cast<uint64_t>(weight.data_ptr()) + weight.byte_offset();
  unsigned h = static_cast<unsigned>(hidden);
  unsigned x_stride = static_cast<unsigned>(x.stride(0));
  unsigned out_stride = static_cast<unsigned>(out.stride(0));
  float eps32 = static_cast<float>(eps);
  unsigned block = ((h + 31) / 32) * 32;
  block = block < 32 ? 32 : (block > 1024 ? 1024 : block);
  void* params[] = {&out_ptr, &x_ptr, &w_ptr, &h, &x_stride, &out_stride, &eps32};
  Check(driver.cuLaunchKernel(kernels[index], static_cast<unsigned>(rows), 1, 1, block, 1, 1, 0,
                              stream, params, nullptr),
        "cuLaunchKernel");
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("rmsnorm_cpp.load_ptx", LoadPtx).def("rmsnorm_cpp.rmsnorm", RmsNorm);
}
