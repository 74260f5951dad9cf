// A C caller of the Rust functions in examples/point, through the plain C ABI only
// (c_api.h): globals through TVMFFIFunctionGetGlobal + TVMFFIFunctionCall, module exports
// through dlsym of `__tvm_ffi_<name>` and through the runtime's library module
// (`ffi.ModuleLoadFromFile`, `ffi.ModuleGetFunction`, then TVMFFIFunctionCall), errors through
// TVMFFIErrorMoveFromRaised and the error cell's kind and message.
//
// Usage: functions <path to libtvm_ffi_example_point.so>
// Prints `name=value` lines that tests/tests/cpp_functions.rs checks.
#include <dlfcn.h>
#include <tvm/ffi/c_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

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

// A borrowed C string, the cheapest way a C caller passes text.
TVMFFIAny RawStr(const char* s) {
  TVMFFIAny v = None();
  v.type_index = kTVMFFIRawStr;
  v.v_c_str = s;
  return v;
}

// Releases the reference an owned result may hold.
void Release(const TVMFFIAny& v) {
  if (v.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(v.v_obj);
}

// The raised error as `kind: message` (and releases it).
std::string TakeError() {
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == nullptr) return "<no error raised>";
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  std::string out = std::string(cell->kind.data, cell->kind.size) + ": " +
                    std::string(cell->message.data, cell->message.size);
  TVMFFIObjectDecRef(err);
  return out;
}

// The text of an owned string result (small or heap form), released afterwards.
std::string TakeString(const TVMFFIAny& v) {
  std::string out;
  if (v.type_index == kTVMFFISmallStr) {
    TVMFFIByteArray bytes = TVMFFISmallBytesGetContentByteArray(&v);
    out.assign(bytes.data, bytes.size);
  } else if (v.type_index == kTVMFFIStr) {
    TVMFFIByteArray* bytes = TVMFFIBytesGetByteArrayPtr(v.v_obj);
    out.assign(bytes->data, bytes->size);
  } else {
    out = "<not a string: type index " + std::to_string(v.type_index) + ">";
  }
  Release(v);
  return out;
}

// `int` result as text, or `kind: message` of the raised error.
std::string IntOrError(int rc, const TVMFFIAny& result) {
  if (rc != 0) return TakeError();
  if (result.type_index != kTVMFFIInt) {
    Release(result);
    return "<not an int: type index " + std::to_string(result.type_index) + ">";
  }
  return std::to_string(result.v_int64);
}

TVMFFIObjectHandle GetGlobal(const char* name) {
  TVMFFIByteArray bytes{name, std::strlen(name)};
  TVMFFIObjectHandle f = nullptr;
  if (TVMFFIFunctionGetGlobal(&bytes, &f) != 0 || f == nullptr) {
    std::fprintf(stderr, "global function %s is not registered\n", name);
    std::exit(1);
  }
  return f;
}

// Calls a function object with borrowed arguments; the result is owned by the caller.
int Call(TVMFFIObjectHandle f, std::vector<TVMFFIAny> args, TVMFFIAny* result) {
  *result = None();
  return TVMFFIFunctionCall(f, args.data(), static_cast<int32_t>(args.size()), result);
}

std::string CallInt(TVMFFIObjectHandle f, std::vector<TVMFFIAny> args) {
  TVMFFIAny result;
  int rc = Call(f, std::move(args), &result);
  return IntOrError(rc, result);
}

// Calls an exported symbol directly, as the runtime's library module does (null self).
std::string CallExportInt(TVMFFISafeCallType f, std::vector<TVMFFIAny> args) {
  TVMFFIAny result = None();
  int rc = f(nullptr, args.data(), static_cast<int32_t>(args.size()), &result);
  return IntOrError(rc, result);
}

std::string CallExportString(TVMFFISafeCallType f) {
  TVMFFIAny result = None();
  if (f(nullptr, nullptr, 0, &result) != 0) return TakeError();
  return TakeString(result);
}

TVMFFISafeCallType Symbol(void* lib, const char* name) {
  void* sym = dlsym(lib, name);
  if (sym == nullptr) {
    std::fprintf(stderr, "symbol %s not found: %s\n", name, dlerror());
    std::exit(1);
  }
  return reinterpret_cast<TVMFFISafeCallType>(sym);
}

// One `name=value` line; newlines in the value are written as `\n`.
void Print(const char* name, const std::string& value) {
  std::string escaped;
  for (char c : value) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  std::printf("%s=%s\n", name, escaped.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <libtvm_ffi_example_point.so> [libtvm_ffi_testing.so]\n",
                 argv[0]);
    return 2;
  }
  // Optional: the C++ test peer, which defines the parent of the Rust `my_ext.CxxChild`; it
  // must be loaded before the library whose types derive from it.
  if (argc > 2 && dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[2], dlerror());
    return 1;
  }
  // Loading runs the library's constructor, which registers the globals.
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }

  // Globals through the registry.
  TVMFFIObjectHandle add = GetGlobal("my_ext.add");
  Print("add", CallInt(add, {Int(40), Int(2)}));
  Print("add.wrong_type", CallInt(add, {Int(1), Float(2.5)}));
  Print("add.wrong_arity", CallInt(add, {Int(1)}));
  // Parameter names and defaults: a default for an omitted argument, keywords in the
  // runtime's KWARGS convention (`ffi.GetKwargsObject`), errors naming the keyword, and the
  // names in the metadata.
  TVMFFIObjectHandle shift = GetGlobal("my_ext.shift");
  TVMFFIAny kwargs;
  if (Call(GetGlobal("ffi.GetKwargsObject"), {}, &kwargs) != 0) {
    std::fprintf(stderr, "ffi.GetKwargsObject failed: %s\n", TakeError().c_str());
    std::exit(1);
  }
  Print("shift.default", CallInt(shift, {Int(1)}));
  Print("shift.keyword", CallInt(shift, {Int(1), kwargs, RawStr("by"), Int(5)}));
  Print("shift.keywords_only", CallInt(shift, {kwargs, RawStr("by"), Int(5), RawStr("x"), Int(2)}));
  Print("shift.unknown_keyword", CallInt(shift, {Int(1), kwargs, RawStr("step"), Int(5)}));
  Print("shift.repeated_keyword", CallInt(shift, {Int(1), kwargs, RawStr("x"), Int(5)}));
  Print("shift.missing", CallInt(shift, {kwargs, RawStr("by"), Int(5)}));
  Release(kwargs);
  TVMFFIAny meta;
  const char* shift_name = "my_ext.shift";
  TVMFFIAny name_arg = RawStr(shift_name);
  if (Call(GetGlobal("ffi.GetGlobalFuncMetadata"), {name_arg}, &meta) == 0) {
    Print("shift.metadata", TakeString(meta));
  } else {
    Print("shift.metadata", TakeError());
  }
  TVMFFIObjectHandle parse = GetGlobal("my_ext.parse");
  Print("parse", CallInt(parse, {RawStr(" 12 ")}));
  Print("parse.error", CallInt(parse, {RawStr("12x")}));
  TVMFFIObjectHandle div = GetGlobal("my_ext.checked_div");
  Print("checked_div.panic", CallInt(div, {Int(1), Int(0)}));
  Print("checked_div.after_panic", CallInt(div, {Int(7), Int(2)}));
  TVMFFIObjectHandle count = GetGlobal("my_ext.count_args");
  Print("count_args", CallInt(count, {Int(1), Float(2.5), None(), RawStr("x")}));

  // Exports through their C symbols.
  TVMFFISafeCallType add_one = Symbol(lib, "__tvm_ffi_add_one");
  Print("export.add_one", CallExportInt(add_one, {Int(41)}));
  Print("export.add_one.wrong_type", CallExportInt(add_one, {Float(2.5)}));
  Print("export.add_one.wrong_arity", CallExportInt(add_one, {}));
  TVMFFISafeCallType div_export = Symbol(lib, "__tvm_ffi_checked_div");
  Print("export.checked_div.panic", CallExportInt(div_export, {Int(1), Int(0)}));
  Print("export.checked_div.after_panic", CallExportInt(div_export, {Int(9), Int(3)}));
  Print("export.add_one.metadata", CallExportString(Symbol(lib, "__tvm_ffi__metadata_add_one")));
  Print("export.add_one.doc", CallExportString(Symbol(lib, "__tvm_ffi__doc_add_one")));

  // Exports through the runtime's library module, as function objects (what Python's
  // `tvm_ffi.load_module(path).add_one` does).
  TVMFFIObjectHandle load = GetGlobal("ffi.ModuleLoadFromFile");
  TVMFFIAny module;
  if (Call(load, {RawStr(argv[1])}, &module) != 0) {
    Print("module.load", TakeError());
    return 1;
  }
  TVMFFIObjectHandle get_function = GetGlobal("ffi.ModuleGetFunction");
  TVMFFIAny add_one_fn;
  TVMFFIAny query_imports = Int(0);
  query_imports.type_index = kTVMFFIBool;
  if (Call(get_function, {module, RawStr("add_one"), query_imports}, &add_one_fn) != 0 ||
      add_one_fn.type_index != kTVMFFIFunction) {
    Print("module.get_function", TakeError());
    return 1;
  }
  Print("module.add_one", CallInt(add_one_fn.v_obj, {Int(1)}));
  Print("module.add_one.wrong_type", CallInt(add_one_fn.v_obj, {Float(2.5)}));

  for (TVMFFIObjectHandle f : {add, parse, div, count, load, get_function}) TVMFFIObjectDecRef(f);
  Release(add_one_fn);
  Release(module);
  return 0;
}
