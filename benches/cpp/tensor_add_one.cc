// The C++ reference for the tensor benchmark (benches/tensor_add_one.py): `y = x + 1` over
// float32 tensors, written the way C++ kernel libraries use the wheel's headers (TensorView
// arguments, refl::GlobalDef registration), with the same checks as the Rust kernel
// `kernels.add_one` in examples/kernels.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>

namespace ffi = tvm::ffi;

namespace {

bool IsContiguousCPUFloat32(const ffi::TensorView& t) {
  return t.dtype().code == kDLFloat && t.dtype().bits == 32 && t.dtype().lanes == 1 &&
         t.device().device_type == kDLCPU && t.IsContiguous();
}

void AddOne(ffi::TensorView x, ffi::TensorView y) {
  TVM_FFI_CHECK(IsContiguousCPUFloat32(x), TypeError)
      << "`x` must be a contiguous CPU tensor of dtype float32";
  TVM_FFI_CHECK(IsContiguousCPUFloat32(y), TypeError)
      << "`y` must be a contiguous CPU tensor of dtype float32";
  TVM_FFI_CHECK(x.ndim() == y.ndim(), ValueError) << "`y` must have the shape of `x`";
  for (int32_t i = 0; i < x.ndim(); ++i) {
    TVM_FFI_CHECK(x.size(i) == y.size(i), ValueError) << "`y` must have the shape of `x`";
  }
  const int64_t n = x.numel();
  const float* xs =
      reinterpret_cast<const float*>(static_cast<const char*>(x.data_ptr()) + x.byte_offset());
  float* ys = reinterpret_cast<float*>(static_cast<char*>(y.data_ptr()) + y.byte_offset());
  for (int64_t i = 0; i < n; ++i) {
    ys[i] = xs[i] + 1.0f;
  }
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef().def("kernels_cpp.add_one", AddOne);
}
