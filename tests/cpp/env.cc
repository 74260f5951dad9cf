// A C caller of the environment functions of examples/kernels, through the plain C ABI:
// a stream set here with TVMFFIEnvSetStream is read by Rust (`kernels.current_stream`), a
// stream set by Rust for a scope (`kernels.with_stream`) is read here by a C callback with
// TVMFFIEnvGetStream and restored afterwards, and `check_signals` in a Rust loop returns Ok
// without Python (`kernels.spin`).
//
// Usage: env <path to libtvm_ffi_example_kernels.so>
// Prints `name=value` lines that tests/tests/cpp_env.rs checks.
#include <dlfcn.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace {

TVMFFIAny None() {
  TVMFFIAny v;
  std::memset(&v, 0, sizeof(v));
  v.type_index = kTVMFFINone;
  return v;
}

TVMFFIAny Int(int64_t x) {
  TVMFFIAny v = None();
  v.type_index = kTVMFFIInt;
  v.v_int64 = x;
  return v;
}

TVMFFIAny Float(double x) {
  TVMFFIAny v = None();
  v.type_index = kTVMFFIFloat;
  v.v_float64 = x;
  return v;
}

TVMFFIAny Device(int32_t type, int32_t id) {
  TVMFFIAny v = None();
  v.type_index = kTVMFFIDevice;
  v.v_device.device_type = static_cast<DLDeviceType>(type);
  v.v_device.device_id = id;
  return v;
}

TVMFFIAny Function(TVMFFIObjectHandle f) {
  TVMFFIAny v = None();
  v.type_index = kTVMFFIFunction;
  v.v_obj = static_cast<TVMFFIObject*>(f);
  return v;
}

TVMFFIObjectHandle Global(const char* name) {
  TVMFFIByteArray bytes{name, std::strlen(name)};
  TVMFFIObjectHandle out = nullptr;
  if (TVMFFIFunctionGetGlobal(&bytes, &out) != 0 || out == nullptr) {
    std::fprintf(stderr, "global %s missing\n", name);
    std::exit(1);
  }
  return out;
}

int64_t CallInt(TVMFFIObjectHandle f, TVMFFIAny* args, int32_t n) {
  TVMFFIAny result = None();
  if (TVMFFIFunctionCall(f, args, n, &result) != 0 || result.type_index != kTVMFFIInt) {
    std::fprintf(stderr, "call failed (result type %d)\n", result.type_index);
    std::exit(1);
  }
  return result.v_int64;
}

// What a C++ kernel does: read the current stream of cuda:0.
int ReadStream(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  *result = Int(static_cast<int64_t>(reinterpret_cast<intptr_t>(TVMFFIEnvGetStream(kDLCUDA, 0))));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "usage: env <kernels library> (%s)\n", dlerror());
    return 1;
  }
  TVMFFIObjectHandle current = Global("kernels.current_stream");
  TVMFFIObjectHandle with_stream = Global("kernels.with_stream");
  TVMFFIObjectHandle spin = Global("kernels.spin");

  TVMFFIAny cuda0[] = {Device(kDLCUDA, 0)};
  TVMFFIAny cuda1[] = {Device(kDLCUDA, 1)};
  std::printf("default=%lld\n", static_cast<long long>(CallInt(current, cuda0, 1)));
  TVMFFIStreamHandle previous = nullptr;
  TVMFFIEnvSetStream(kDLCUDA, 0, reinterpret_cast<TVMFFIStreamHandle>(0x1234), &previous);
  std::printf("cpp_set_rust_reads=%lld\n", static_cast<long long>(CallInt(current, cuda0, 1)));
  std::printf("other_device=%lld\n", static_cast<long long>(CallInt(current, cuda1, 1)));

  TVMFFIObjectHandle reader = nullptr;
  if (TVMFFIFunctionCreate(nullptr, ReadStream, nullptr, &reader) != 0) return 1;
  TVMFFIAny scoped[] = {Device(kDLCUDA, 0), Int(0x5678), Function(reader)};
  std::printf("rust_set_cpp_reads=%lld\n", static_cast<long long>(CallInt(with_stream, scoped, 3)));
  std::printf("restored=%lld\n",
              static_cast<long long>(reinterpret_cast<intptr_t>(TVMFFIEnvGetStream(kDLCUDA, 0))));

  TVMFFIAny loop[] = {Function(reader), Float(0.01)};
  std::printf("spin_iterations_positive=%d\n", CallInt(spin, loop, 2) > 0 ? 1 : 0);

  TVMFFIEnvSetStream(kDLCUDA, 0, previous, nullptr);
  for (TVMFFIObjectHandle h : {current, with_stream, spin, reader}) TVMFFIObjectDecRef(h);
  return 0;
}
