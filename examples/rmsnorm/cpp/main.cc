// A C++ user of examples/rmsnorm through the TVM-FFI C ABI only (no C++ vtable of the library):
// calls the exported `rmsnorm.rmsnorm` and `rmsnorm.fused_add_rmsnorm` on CPU tensors, then
// drives the stateful `rmsnorm.Runner` (constructor through `__ffi_init__`, methods through the
// reflected method table): get_workspace_size, configure_workspace, run, inv_rms.
//
// Usage: rmsnorm <libtvm_ffi_example_rmsnorm.so>
// Prints `name=value` lines that tests/tests/cpp_rmsnorm.rs checks.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

namespace {

struct CPUAlloc {
  void AllocData(DLTensor* t) { t->data = std::calloc(1, ffi::GetDataSize(*t)); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

ffi::Tensor Make(std::vector<int64_t> shape, DLDataType dtype) {
  return ffi::Tensor::FromNDAlloc(CPUAlloc(), ffi::ShapeView(shape.data(), shape.size()), dtype,
                                  DLDevice{kDLCPU, 0});
}

const DLDataType kF32{kDLFloat, 32, 1};

float* F32(const ffi::Tensor& t) { return static_cast<float*>(t.GetDLTensorPtr()->data); }

DLTensor* Dl(const ffi::Tensor& t) { return const_cast<DLTensor*>(t.GetDLTensorPtr()); }

// The float32 reference: x * rsqrt(mean(x^2) + eps) * w, per row.
double MaxError(const float* x, const float* w, const float* out, int rows, int hidden, float eps) {
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    float sum = 0;
    for (int i = 0; i < hidden; ++i) sum += x[r * hidden + i] * x[r * hidden + i];
    float inv = 1.0f / std::sqrt(sum / hidden + eps);
    for (int i = 0; i < hidden; ++i) {
      double e = std::fabs(out[r * hidden + i] - x[r * hidden + i] * inv * w[i]);
      worst = e > worst ? e : worst;
    }
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "usage: rmsnorm <libtvm_ffi_example_rmsnorm.so>: " << (argc < 2 ? "" : dlerror())
              << "\n";
    return 2;
  }
  try {
    const int rows = 3, hidden = 7;
    ffi::Tensor x = Make({rows, hidden}, kF32), out = Make({rows, hidden}, kF32);
    ffi::Tensor w = Make({hidden}, kF32), residual = Make({rows, hidden}, kF32);
    for (int i = 0; i < rows * hidden; ++i) {
      F32(x)[i] = static_cast<float>((i * 37 % 11) - 5) / 4.0f;
      F32(residual)[i] = static_cast<float>(i % 3);
    }
    for (int i = 0; i < hidden; ++i) F32(w)[i] = 0.5f + i;

    ffi::Function rmsnorm = ffi::Function::GetGlobalRequired("rmsnorm.rmsnorm");
    // As C++ kernels pass them: borrowed DLTensor pointers.
    rmsnorm(Dl(out), Dl(x), Dl(w), 1e-6, false);
    std::cout << "rmsnorm.max_error_ok=" << (MaxError(F32(x), F32(w), F32(out), rows, hidden, 1e-6f) < 1e-5)
              << "\n";

    // Errors come back as ffi::Error with the argument named.
    try {
      rmsnorm(out, x, Make({hidden + 1}, kF32), 1e-6, false);
    } catch (const ffi::Error& err) {
      std::cout << "error.kind=" << err.kind() << "\n";
      std::cout << "error.message=" << err.message() << "\n";
    }

    // Fused: residual += x; x = rmsnorm(residual).
    std::vector<float> summed(rows * hidden);
    for (int i = 0; i < rows * hidden; ++i) summed[i] = F32(x)[i] + F32(residual)[i];
    ffi::Function::GetGlobalRequired("rmsnorm.fused_add_rmsnorm")(x, residual, w, 1e-6, false);
    bool residual_ok = std::memcmp(summed.data(), F32(residual), summed.size() * 4) == 0;
    std::cout << "fused.residual_ok=" << residual_ok << "\n";
    std::cout << "fused.max_error_ok="
              << (MaxError(summed.data(), F32(w), F32(x), rows, hidden, 1e-6f) < 1e-5) << "\n";

    // The stateful runner, through reflection only.
    int32_t index;
    TVMFFIByteArray key{"rmsnorm.Runner", 14};
    TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&key, &index));
    ffi::Function init = refl::TypeAttrColumn("__ffi_init__")[index].cast<ffi::Function>();
    ffi::ObjectRef runner = init(w, 1e-6).cast<ffi::ObjectRef>();
    int64_t size = refl::GetMethod("rmsnorm.Runner", "get_workspace_size")(runner, rows).cast<int64_t>();
    std::cout << "runner.workspace_size=" << size << "\n";
    ffi::Tensor workspace = Make({size}, DLDataType{kDLUInt, 8, 1});
    refl::GetMethod("rmsnorm.Runner", "configure_workspace")(runner, workspace);
    ffi::Tensor x2 = Make({rows, hidden}, kF32), out2 = Make({rows, hidden}, kF32);
    for (int i = 0; i < rows * hidden; ++i) F32(x2)[i] = static_cast<float>(i + 1);
    refl::GetMethod("rmsnorm.Runner", "run")(runner, out2, x2);
    std::cout << "runner.max_error_ok="
              << (MaxError(F32(x2), F32(w), F32(out2), rows, hidden, 1e-6f) < 1e-4) << "\n";
    ffi::Tensor inv = refl::GetMethod("rmsnorm.Runner", "inv_rms")(runner, rows).cast<ffi::Tensor>();
    // Row 0 is 1..7: mean square 20, inverse RMS 1/sqrt(20).
    std::printf("runner.inv_rms0=%.5f\n", F32(inv)[0]);
    const float* in_workspace = F32(workspace);
    std::cout << "runner.workspace_holds_it=" << (in_workspace[0] == F32(inv)[0]) << "\n";
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
