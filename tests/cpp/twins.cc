// The Rust twins of the wheel's C++ testing types (tests/testing-twins, keys `testing.rs.*`)
// seen from C++: each probe runs the same C++ calls on `testing.<T>` and on `testing.rs.<T>`
// (constructors, field getters and setters, methods, global functions, recursive comparison,
// JSON graphs, deep copy, enum lookups, reads through a mirroring C++ struct) and compares the
// printed results once the twin's key prefix is normalised. Prints `same <probe>` or
// `DIFF <probe>` lines; the Rust test tests/tests/cpp_twins.rs checks them.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

namespace {

// `testing.TestCxxClassDerivedDerived` as a C++ author lays it out (both twins must match).
struct DerivedDerivedMirror : public ffi::Object {
  int64_t v_i64;
  int32_t v_i32;
  double v_f64;
  float v_f32;
  ffi::String v_str;
  bool v_bool;
};

std::string Repr(const ffi::Any& value) {
  static ffi::Function repr = ffi::Function::GetGlobalRequired("ffi.ReprPrint");
  return repr(value).cast<ffi::String>();
}

int32_t TypeIndex(const std::string& key) {
  int32_t index;
  TVMFFIByteArray bytes{key.data(), key.size()};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&bytes, &index));
  return index;
}

ffi::Function Attr(const std::string& key, const char* name) {
  return refl::TypeAttrColumn(name)[TypeIndex(key)].cast<ffi::Function>();
}

ffi::Function Global(const std::string& name) { return ffi::Function::GetGlobalRequired(name); }

// `f(a: int, b: Map<str, int>) -> int` numbered as C++ numbers parameters: `f(0: int, 1: ...)`.
std::string Numbered(const std::string& signature) {
  size_t open = signature.find('(');
  size_t close = signature.rfind(") -> ");
  if (open == std::string::npos || close == std::string::npos || close < open) return signature;
  std::string out = signature.substr(0, open + 1);
  int depth = 0, index = 0;
  size_t start = open + 1;
  for (size_t at = open + 1; at <= close; ++at) {
    char c = signature[at];
    if (c == '<' || c == '[' || c == '(') ++depth;
    if (c == '>' || c == ']' || (c == ')' && at != close)) --depth;
    if ((c == ',' && depth == 0) || at == close) {
      std::string param = signature.substr(start, at - start);
      size_t colon = param.find(": ");
      if (colon != std::string::npos) {
        if (index > 0) out += ", ";
        out += std::to_string(index++) + param.substr(colon);
      }
      start = at + 1;
    }
  }
  return out + signature.substr(close);
}

// The twin's results as C++ writes them: its key prefix replaced, and the parameter names Rust
// registers (shown in its argument errors) replaced by C++'s numbers.
std::string Normalize(std::string text) {
  const std::string from = "testing.rs.";
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), "testing.");
  }
  // "argument #1 (`b`) when" -> "argument #1 when"
  for (size_t at = text.find(" (`"); at != std::string::npos; at = text.find(" (`", at + 1)) {
    size_t end = text.find("`)", at + 3);
    if (end != std::string::npos && text.compare(end + 2, 5, " when") == 0) {
      text.erase(at, end + 2 - at);
    }
  }
  const std::string calling = "when calling: `";
  size_t at = text.find(calling);
  if (at != std::string::npos) {
    size_t begin = at + calling.size();
    size_t end = text.find('`', begin);
    if (end != std::string::npos) {
      text = text.substr(0, begin) + Numbered(text.substr(begin, end - begin)) + text.substr(end);
    }
  }
  return text;
}

using Probe = std::function<std::string(const std::string& prefix)>;

std::string Run(const Probe& probe, const std::string& prefix) {
  try {
    return probe(prefix);
  } catch (const ffi::Error& err) {
    return "raise " + err.kind() + ": " + err.message();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: twins <libtvm_ffi_testing.so> <libtvm_ffi_testing_twins.so>\n";
    return 2;
  }
  for (int i = 1; i < 3; ++i) {
    if (dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::cerr << "cannot load " << argv[i] << ": " << dlerror() << "\n";
      return 2;
    }
  }
  auto init = [](const std::string& key) { return Attr(key, "__ffi_init__"); };
  std::vector<std::pair<std::string, Probe>> probes = {
      {"TestIntPair(1, 2)", [&](const std::string& p) { return Repr(init(p + "TestIntPair")(1, 2)); }},
      {"TestIntPair(1, \"x\")", [&](const std::string& p) { return Repr(init(p + "TestIntPair")(1, "x")); }},
      {"TestIntPair(1)", [&](const std::string& p) { return Repr(init(p + "TestIntPair")(1)); }},
      {"TestIntPair.sum",
       [&](const std::string& p) {
         ffi::Any pair = init(p + "TestIntPair")(10, 20);
         return std::to_string(refl::GetMethod(p + "TestIntPair", "sum")(pair).cast<int64_t>());
       }},
      {"TestIntPair.a",
       [&](const std::string& p) {
         ffi::ObjectRef pair = init(p + "TestIntPair")(3, 4).cast<ffi::ObjectRef>();
         return Repr(refl::FieldGetter(p + "TestIntPair", "a")(pair));
       }},
      {"TestIntPairSum", [&](const std::string& p) { return Repr(Global(p + "TestIntPairSum")(init(p + "TestIntPair")(3, 4))); }},
      {"TestIntPair.__ffi_convert__(1)", [&](const std::string& p) { return Repr(Attr(p + "TestIntPair", "__ffi_convert__")(1)); }},
      {"TestObjectBase()", [&](const std::string& p) { return Repr(init(p + "TestObjectBase")()); }},
      {"TestObjectBase(5, 1.5, \"s\")", [&](const std::string& p) { return Repr(init(p + "TestObjectBase")(5, 1.5, "s")); }},
      {"TestObjectBase(1, 2, 3, 4)", [&](const std::string& p) { return Repr(init(p + "TestObjectBase")(1, 2, 3, 4)); }},
      {"TestObjectBase.v_i64 = 42",
       [&](const std::string& p) {
         ffi::ObjectRef obj = init(p + "TestObjectBase")().cast<ffi::ObjectRef>();
         refl::FieldSetter(p + "TestObjectBase", "v_i64")(obj, 42);
         return Repr(obj);
       }},
      {"TestObjectBase.v_i64 = \"x\"",
       [&](const std::string& p) {
         ffi::ObjectRef obj = init(p + "TestObjectBase")().cast<ffi::ObjectRef>();
         refl::FieldSetter(p + "TestObjectBase", "v_i64")(obj, "x");
         return Repr(obj);
       }},
      {"TestObjectBase.add_i64",
       [&](const std::string& p) {
         ffi::Any obj = init(p + "TestObjectBase")(12);
         return Repr(refl::GetMethod(p + "TestObjectBase", "add_i64")(obj, 1));
       }},
      {"TestObjectDerived",
       [&](const std::string& p) {
         ffi::Map<ffi::Any, ffi::Any> map{{ffi::String("k"), 1}};
         ffi::Array<ffi::Any> array{1, ffi::String("two")};
         return Repr(init(p + "TestObjectDerived")(map, array, 5));
       }},
      {"DeepCopy(TestObjectDerived)",
       [&](const std::string& p) {
         ffi::Any obj = init(p + "TestObjectDerived")(ffi::Map<ffi::Any, ffi::Any>(), ffi::Array<ffi::Any>());
         ffi::Any dup = Global("ffi.DeepCopy")(obj);
         return Repr(dup) + (dup.cast<ffi::ObjectRef>().same_as(obj.cast<ffi::ObjectRef>()) ? " same" : " new");
       }},
      {"TestObjectPtrHolder(None)", [&](const std::string& p) { return Repr(init(p + "TestObjectPtrHolder")(nullptr)); }},
      {"TestObjectPtrHolder(base)",
       [&](const std::string& p) { return Repr(init(p + "TestObjectPtrHolder")(init(p + "TestObjectBase")())); }},
      {"TestCxxClassDerivedDerived mirror",
       [&](const std::string& p) {
         ffi::ObjectRef obj =
             init(p + "TestCxxClassDerivedDerived")(1, 2, 3.5, true, 4.5, "str").cast<ffi::ObjectRef>();
         const auto* mirror = reinterpret_cast<const DerivedDerivedMirror*>(obj.get());
         return std::to_string(mirror->v_i64) + "," + std::to_string(mirror->v_i32) + "," +
                std::to_string(mirror->v_f64) + "," + std::to_string(mirror->v_f32) + "," +
                std::string(mirror->v_str) + "," + (mirror->v_bool ? "true" : "false") + " " + Repr(obj);
       }},
      {"TestCxxInitSubset(7)", [&](const std::string& p) { return Repr(init(p + "TestCxxInitSubset")(7)); }},
      {"TestCxxKwOnly(1, 2, 3)", [&](const std::string& p) { return Repr(init(p + "TestCxxKwOnly")(1, 2, 3)); }},
      {"TestCxxAutoInitAllInitOff()", [&](const std::string& p) { return Repr(init(p + "TestCxxAutoInitAllInitOff")()); }},
      {"TestCxxAutoInitChild(1, 2)", [&](const std::string& p) { return Repr(init(p + "TestCxxAutoInitChild")(1, 2)); }},
      {"TestCxxAutoInitKwOnlyDefaults(1)",
       [&](const std::string& p) { return Repr(init(p + "TestCxxAutoInitKwOnlyDefaults")(1)); }},
      {"TestCxxNoAutoInit.__ffi_new__",
       [&](const std::string& p) { return Repr(Attr(p + "TestCxxNoAutoInit", "__ffi_new__")()); }},
      {"TestNonCopyable(3)", [&](const std::string& p) { return Repr(init(p + "TestNonCopyable")(3)); }},
      {"DeepCopy(TestNonCopyable)", [&](const std::string& p) { return Repr(Global("ffi.DeepCopy")(init(p + "TestNonCopyable")(3))); }},
      {"TestCompare(1, 2, 3)", [&](const std::string& p) { return Repr(init(p + "TestCompare")(1, 2, 3)); }},
      {"make_unregistered_object",
       [&](const std::string& p) {
         ffi::Any obj = Global(p + "make_unregistered_object")();
         return Repr(obj) + " " +
                Repr(refl::GetMethod(p + "TestUnregisteredObject", "get_v2_plus_two")(obj)) + " " +
                Repr(refl::GetMethod(p + "TestUnregisteredBaseObject", "get_v1_plus_one")(obj));
       }},
      {"make_visit_region_graph(true)", [&](const std::string& p) { return Repr(Global(p + "make_visit_region_graph")(true)); }},
      {"enum_variant_get(Beta)", [&](const std::string& p) { return Repr(Global(p + "enum_variant_get")("Beta")); }},
      {"enum_variant_get(Gamma)", [&](const std::string& p) { return Repr(Global(p + "enum_variant_get")("Gamma")); }},
      {"TestEnumVariant.__ffi_enum__",
       [&](const std::string& p) { return Repr(refl::TypeAttrColumn("__ffi_enum__")[TypeIndex(p + "TestEnumVariant")]); }},
      {"JSON graph",
       [&](const std::string& p) {
         ffi::Any obj = init(p + "TestCxxClassDerivedDerived")(1, 2, 3.0, false);
         ffi::String text = Global("ffi.ToJSONGraphString")(obj, nullptr).cast<ffi::String>();
         return std::string(text) + " " + Repr(Global("ffi.FromJSONGraphString")(text));
       }},
      {"RecursiveEq/Lt/Hash with hooks",
       [&](const std::string& p) {
         std::string out;
         for (const char* name : {"TestCustomCompare", "TestCustomHash", "TestEqWithoutHash", "TestCompare"}) {
           bool three = std::string(name) == "TestCompare";
           ffi::Any a = three ? init(p + name)(1, "zzz", 0) : init(p + name)(1, "zzz");
           ffi::Any b = three ? init(p + name)(1, "aaa", 9) : init(p + name)(1, "aaa");
           out += std::string(name) + ":" + Repr(Global("ffi.RecursiveEq")(a, b)) + "," +
                  Repr(Global("ffi.RecursiveLt")(a, b)) + ",";
           try {
             out += Repr(Global("ffi.RecursiveHash")(a).cast<int64_t>() ==
                         Global("ffi.RecursiveHash")(b).cast<int64_t>());
           } catch (const ffi::Error& err) {
             out += err.kind() + ": " + err.message();
           }
           out += ";";
         }
         return out;
       }},
  };
  int diffs = 0;
  for (const auto& [name, probe] : probes) {
    std::string cxx = Run(probe, "testing.");
    std::string rs = Normalize(Run(probe, "testing.rs."));
    if (cxx == rs) {
      std::cout << "same " << name << " => " << cxx << "\n";
    } else {
      ++diffs;
      std::cout << "DIFF " << name << "\n  c++:  " << cxx << "\n  rust: " << rs << "\n";
    }
  }
  std::cout << "probes=" << probes.size() << " diffs=" << diffs << "\n";
  return 0;
}
