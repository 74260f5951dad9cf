// C++ and the Rust containers of tests/containers: a C++ type with the same container fields as
// `rs_containers.Holder` (both tables printed, so the Rust test compares the field static type
// indices and schemas C++ reports with the Rust ones), then C++ values through the Rust
// functions: a C++ `List`/`Dict` mutated by Rust, a Rust `Shape`/`List`/`Dict` read by C++,
// C++-built `Map`s (heap strings shorter than 8 bytes included) looked up in place by Rust, and
// `BigInt`s. Prints `name=value` lines the Rust test (tests/tests/cpp_containers.rs) checks.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/big_int.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/rvalue_ref.h>
#include <tvm/ffi/string.h>

#include <iostream>
#include <string>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

// The C++ twin of `rs_containers.Holder`.
class HolderObj : public ffi::Object {
 public:
  ffi::Shape shape;
  ffi::List<int64_t> items;
  ffi::Dict<ffi::String, int64_t> table;
  ffi::BigInt big;
  ffi::List<ffi::Any> anys;
  ffi::Map<ffi::String, ffi::Shape> shapes;
  ffi::Shape rw_shape;
  ffi::Optional<ffi::Shape> maybe_shape;
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO("cpp_containers.Holder", HolderObj, ffi::Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<HolderObj>()
      .def_ro("shape", &HolderObj::shape)
      .def_ro("items", &HolderObj::items)
      .def_ro("table", &HolderObj::table)
      .def_ro("big", &HolderObj::big)
      .def_ro("anys", &HolderObj::anys)
      .def_ro("shapes", &HolderObj::shapes)
      .def_rw("rw_shape", &HolderObj::rw_shape)
      .def_ro("maybe_shape", &HolderObj::maybe_shape);
}

// `field.<key>.<name>=<static type index> <size> <type_schema>` for every field of `key`.
void PrintFields(const char* key) {
  int32_t index;
  TVMFFIByteArray name{key, std::char_traits<char>::length(key)};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&name, &index));
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  for (int32_t i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo& field = info->fields[i];
    std::string metadata(field.metadata.data, field.metadata.size);
    std::cout << "field." << key << "." << std::string(field.name.data, field.name.size) << "="
              << field.field_static_type_index << " " << field.size << " " << metadata << "\n";
  }
}

ffi::Function Rust(const char* name) {
  return ffi::Function::GetGlobalRequired(std::string("rs_containers.") + name);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: containers <libtvm_ffi_test_containers.so>\n";
    return 2;
  }
  if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == nullptr) {
    std::cerr << "cannot load " << argv[1] << ": " << dlerror() << "\n";
    return 2;
  }
  try {
    PrintFields("cpp_containers.Holder");
    PrintFields("rs_containers.Holder");

    // A C++ List and Dict, mutated by Rust: C++ sees the writes (one shared object).
    ffi::List<int64_t> items{1, 2};
    Rust("list_append")(items, 3);
    std::cout << "list_append=" << items.size() << "," << items[2] << "\n";
    std::cout << "list_sum=" << Rust("list_sum")(items).cast<int64_t>() << "\n";
    ffi::Dict<ffi::String, int64_t> table{{"a", 1}};
    Rust("dict_set")(table, "a long key of a dict", 2);
    std::cout << "dict_set=" << table.size() << "," << table.at("a long key of a dict") << "\n";
    std::cout << "dict_pop=" << Rust("dict_pop")(table, "a").cast<int64_t>() << "," << table.size()
              << "\n";

    // A Map Rust holds never changes: C++ writes copy once the map is shared (copy-on-write),
    // whether it is small (a new key) or dense (an existing key re-assigned).
    for (int n : {3, 10}) {
      ffi::Map<ffi::String, int64_t> kept;
      for (int i = 0; i < n; ++i) kept.Set(ffi::String(std::string("k") + std::to_string(i)), i);
      ffi::Function seen = Rust("keep_map")(kept).cast<ffi::Function>();
      kept.Set("new", 100);
      kept.Set("k0", 1000);
      ffi::Array<int64_t> rust = seen().cast<ffi::Array<int64_t>>();
      std::cout << "map_cow." << n << "=" << rust[0] << "," << rust[1] << " cpp=" << kept.size()
                << "," << kept.at("k0") << "\n";
    }

    // Rust-made containers read by C++.
    ffi::Shape shape = Rust("make_shape")(4).cast<ffi::Shape>();
    std::cout << "make_shape=" << shape << " product=" << shape.Product() << "\n";
    std::cout << "shape_numel=" << Rust("shape_numel")(ffi::Shape({2, 3, 4})).cast<int64_t>()
              << "\n";
    ffi::List<int64_t> made = Rust("make_list")(3).cast<ffi::List<int64_t>>();
    made.push_back(10);
    std::cout << "make_list=" << made.size() << "," << made[3] << "\n";
    ffi::Dict<ffi::String, int64_t> dict = Rust("make_dict")(2).cast<ffi::Dict<ffi::String, int64_t>>();
    std::cout << "make_dict=" << dict.size() << "," << dict.at("k1") << "\n";

    // C++-built maps looked up in place by Rust. `String(std::string)` makes heap strings even
    // for short texts; Rust's probes are small strings: equal by content, as in C++.
    std::cout << "short_key_type=" << ffi::Any(ffi::String(std::string("k1"))).GetTypeKey() << "\n";
    int found = 0, agreed = 0, total = 0;
    for (int n : {3, 40, 500}) {
      ffi::Map<ffi::Any, ffi::Any> m;
      for (int i = 0; i < n; ++i) {
        m.Set(ffi::String(std::string("k") + std::to_string(i)), i);
        m.Set(int64_t{i} * 7919, -i);
      }
      for (int i = 0; i < n + 10; ++i) {
        ffi::Any keys[] = {ffi::Any(ffi::String(std::string("k") + std::to_string(i))),
                           ffi::Any(int64_t{i} * 7919)};
        for (const ffi::Any& key : keys) {
          ffi::Any rust = Rust("map_lookup")(m, key);
          auto cpp = m.Get(key);
          found += rust != nullptr;
          agreed += (cpp.has_value() && rust != nullptr && cpp.value().cast<int64_t>() == rust.cast<int64_t>()) ||
                    (!cpp.has_value() && rust == nullptr);
          ++total;
        }
      }
    }
    std::cout << "map_lookup=" << agreed << "/" << total << " found=" << found << "\n";

    // Moved arguments: C++ `RValueRef` into a Rust `RValueRef<Array<i64>>` parameter hands over
    // the only reference (count 1 inside; the C++ handle is empty afterwards); lent, it is
    // shared (count 2).
    ffi::Array<int64_t> lent{1, 2};
    int64_t lent_count = Rust("moved_array_count")(lent).cast<int64_t>();
    ffi::Array<int64_t> moved{3, 4};
    int64_t moved_count =
        Rust("moved_array_count")(ffi::RValueRef<ffi::Array<int64_t>>(std::move(moved))).cast<int64_t>();
    std::cout << "rvalue_ref=" << lent_count << "," << moved_count << " lent_kept=" << lent.size()
              << "\n";
    // And back: Rust moves an array into a C++ `RValueRef<Array<int64_t>>` parameter (the C++
    // callee holds the only reference; Rust releases nothing after), or lends it (shared).
    ffi::Function cpp_count = ffi::Function::FromTyped(
        [](ffi::RValueRef<ffi::Array<int64_t>> ref) -> int64_t {
          ffi::Array<int64_t> array = *std::move(ref);
          return array.use_count();
        });
    ffi::Array<int64_t> by_move = Rust("call_with_array")(cpp_count, true).cast<ffi::Array<int64_t>>();
    ffi::Array<int64_t> by_lend = Rust("call_with_array")(cpp_count, false).cast<ffi::Array<int64_t>>();
    std::cout << "rvalue_ref_to_cpp=" << by_move[0] << "," << by_move[1] << " lent=" << by_lend[0]
              << "," << by_lend[1] << "\n";

    // Big integers both ways.
    ffi::BigInt big = ffi::BigInt(1) << ffi::BigInt(100);
    std::cout << "bigint_str=" << Rust("bigint_str")(big).cast<ffi::String>() << "\n";
    ffi::BigInt neg = Rust("bigint_neg")(big).cast<ffi::BigInt>();
    std::cout << "bigint_neg=" << neg << " sum=" << (neg + big) << "\n";
    ffi::BigInt parsed = Rust("bigint_parse")("-340282366920938463463374607431768211456").cast<ffi::BigInt>();
    std::cout << "bigint_parse=" << parsed << "\n";
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected error: " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
