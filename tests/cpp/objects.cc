// A C++ user of the Rust types in examples/point: construct through `__ffi_init__`, read fields
// through reflection and through a C++ struct mirroring the layout, call reflected methods,
// write fields through reflected setters. Prints `name=value` lines the Rust test checks.
#include <dlfcn.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <iostream>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

// The layout a C++ author would write for `my_ext.Point`: header, then the fields in order.
// (`Rw<i64>` has the layout of `int64_t`.)
struct PointMirror : public ffi::Object {
  int64_t x;
  int64_t y;
  ffi::String label;
};
// `my_ext.Point3`: the parent's payload, then `z`.
struct Point3Mirror : public PointMirror {
  int64_t z;
};


int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: objects <libtvm_ffi_testing.so> <libtvm_ffi_example_point.so>\n";
    return 2;
  }
  for (int i = 1; i < 3; ++i) {
    if (dlopen(argv[i], RTLD_NOW | (i == 1 ? RTLD_GLOBAL : RTLD_LOCAL)) == nullptr) {
      std::cerr << "cannot load " << argv[i] << ": " << dlerror() << "\n";
      return 2;
    }
  }
  try {
    // Construct through the reflected constructor (auto-init from the Rust field table).
    int32_t point_index;
    TVMFFIByteArray key{"my_ext.Point", 12};
    TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&key, &point_index));
    refl::TypeAttrColumn init_column("__ffi_init__");
    ffi::Function point_init = init_column[point_index].cast<ffi::Function>();
    ffi::ObjectRef p = point_init(3, 4).cast<ffi::ObjectRef>();
    std::cout << "type_key=" << p->GetTypeKey() << "\n";

    // Fields through reflection and through the mirror struct.
    std::cout << "reflect.x=" << refl::FieldGetter("my_ext.Point", "x")(p).cast<int64_t>() << "\n";
    std::cout << "reflect.y=" << refl::FieldGetter("my_ext.Point", "y")(p).cast<int64_t>() << "\n";
    std::cout << "reflect.label=" << refl::FieldGetter("my_ext.Point", "label")(p).cast<ffi::String>()
              << "\n";
    const auto* mirror = reinterpret_cast<const PointMirror*>(p.get());
    std::cout << "mirror.x=" << mirror->x << "\n";
    std::cout << "mirror.y=" << mirror->y << "\n";
    std::cout << "mirror.label=" << mirror->label << "\n";

    // Methods through the reflected method table.
    ffi::Function norm2 = refl::GetMethod("my_ext.Point", "norm2");
    std::cout << "norm2=" << norm2(p).cast<int64_t>() << "\n";
    ffi::Function lift = refl::GetMethod("my_ext.Point", "lift");
    ffi::ObjectRef q = lift(p, 5).cast<ffi::ObjectRef>();
    const auto* mirror3 = reinterpret_cast<const Point3Mirror*>(q.get());
    std::cout << "lift.type_key=" << q->GetTypeKey() << "\n";
    std::cout << "lift.mirror=" << mirror3->x << "," << mirror3->y << "," << mirror3->z << "\n";
    std::cout << "lift.reflect.z=" << refl::FieldGetter("my_ext.Point3", "z")(q).cast<int64_t>()
              << "\n";
    ffi::Function origin = refl::GetMethod("my_ext.Point", "origin");
    ffi::ObjectRef o = origin().cast<ffi::ObjectRef>();
    std::cout << "origin.label=" << reinterpret_cast<const PointMirror*>(o.get())->label << "\n";

    // A writable field through its setter; the Rust method sees the new value.
    refl::FieldSetter("my_ext.Point", "x")(p.get(), 10);
    std::cout << "after_set.x=" << mirror->x << "\n";
    std::cout << "after_set.norm2=" << norm2(p).cast<int64_t>() << "\n";
    // A read-only field of a constructed object refuses the write.
    try {
      refl::FieldSetter("my_ext.Point", "y")(p.get(), 99);
      std::cout << "ro_set=accepted\n";
    } catch (const ffi::Error& err) {
      std::cout << "ro_set=" << err.kind() << "\n";
    }
    std::cout << "after_ro_set.y=" << mirror->y << "\n";

    // Errors keep their kind: a Rust constructor returning Err, a panic-free wrong argument.
    int32_t interval_index;
    TVMFFIByteArray interval_key{"my_ext.Interval", 15};
    TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&interval_key, &interval_index));
    ffi::Function interval_init = init_column[interval_index].cast<ffi::Function>();
    ffi::ObjectRef interval = interval_init(1.0, 3.5).cast<ffi::ObjectRef>();
    std::cout << "interval.length="
              << refl::GetMethod("my_ext.Interval", "length")(interval).cast<double>() << "\n";
    try {
      interval_init(2.0, 1.0);
    } catch (const ffi::Error& err) {
      std::cout << "interval.error=" << err.kind() << ": " << err.message() << "\n";
    }

    // The Rust subtype of the C++ type: C++ reads its own parent's fields in a Rust object.
    int32_t child_index;
    TVMFFIByteArray child_key{"my_ext.CxxChild", 15};
    TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&child_key, &child_index));
    ffi::ObjectRef child =
        init_column[child_index].cast<ffi::Function>()(5, 6, "from c++").cast<ffi::ObjectRef>();
    std::cout << "child.v_i64="
              << refl::FieldGetter("testing.TestCxxClassBase", "v_i64")(child).cast<int64_t>()
              << "\n";
    std::cout << "child.total=" << refl::GetMethod("my_ext.CxxChild", "total")(child).cast<int64_t>()
              << "\n";
    std::cout << "child.note=" << refl::FieldGetter("my_ext.CxxChild", "note")(child).cast<ffi::String>()
              << "\n";
  } catch (const ffi::Error& err) {
    std::cerr << "unexpected error: " << err.kind() << ": " << err.message() << "\n";
    return 1;
  }
  return 0;
}
