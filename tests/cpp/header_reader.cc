// Reads examples/point's Rust objects through the C++ header generated from the library's
// reflection (tests/python/test_cpp_header.py generates `my_ext_types.h`, compiles this into a
// library and calls its functions with objects made in Python): each function returns the
// fields as the header's accessors read them.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <string>

#include "my_ext_types.h"

namespace ffi = tvm::ffi;

namespace {

ffi::Array<ffi::Any> Point(ffi::ObjectRef obj) {
  my_ext::Point p(obj);
  // `x` is an `Rw<i64>`: read through its getter; `y` and `label` in place.
  return {p.x(), p.y(), p.label()};
}

ffi::Array<ffi::Any> Point3(ffi::ObjectRef obj) {
  my_ext::Point3 p(obj);
  return {p.x(), p.y(), p.label(), p.z()};
}

ffi::Array<ffi::Any> Interval(ffi::ObjectRef obj) {
  my_ext::Interval i(obj);
  return {i.lo(), i.hi()};
}

ffi::Array<ffi::Any> Options(ffi::ObjectRef obj) {
  my_ext::Options o(obj);
  return {o.id(),    o.title(),   o.tags(),    o.hits(), o.verbose(),
          o.cache(), o.version(), o.timeout(), o.parent()};
}

ffi::Array<ffi::Any> CxxChild(ffi::ObjectRef obj) {
  my_ext::CxxChild c(obj);
  return {c.v_i64(), c.v_i32(), c.note()};
}

bool IsPoint(ffi::ObjectRef obj) { return my_ext::Point::Is(obj); }

// Nodes built with the header's typed constructors (`label` and `verbose` are keyword-only),
// read back through its typed accessors.
ffi::Array<ffi::Any> Made() {
  my_ext::Point p = my_ext::Point::New(1, 2, "made in C++");
  my_ext::Options parent =
      my_ext::Options::New(3, "parent", ffi::Array<int64_t>{4, 5}, 0, 0, 10, std::nullopt, false);
  my_ext::Options child = my_ext::Options::New(6, "child", ffi::Array<int64_t>{}, 0, 0, 20,
                                               parent.object(), true);
  const ffi::Array<int64_t>& tags = parent.tags();
  return {p.x(),         p.y(),           p.label(), tags[0] + tags[1], child.verbose(),
          child.parent().value().same_as(parent.object()), child.object()};
}

// A node with enum fields built from entries looked up by value (`Get`), read back as values;
// and the error of a value the enum lacks.
ffi::Array<ffi::Any> Stroked() {
  my_ext::Stroke s = my_ext::Stroke::New(my_ext::Marker::Get(2), my_ext::Color::Get("dark blue"));
  std::string error;
  try {
    my_ext::Color::Get("purple");
  } catch (const ffi::Error& err) {
    error = err.kind() + ": " + err.message();
  }
  return {my_ext::Marker(s.marker()).value(), my_ext::Color(s.color()).value(), error, s.object()};
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("header_reader.point", Point)
      .def("header_reader.point3", Point3)
      .def("header_reader.interval", Interval)
      .def("header_reader.options", Options)
      .def("header_reader.cxx_child", CxxChild)
      .def("header_reader.is_point", IsPoint)
      .def("header_reader.made", Made)
      .def("header_reader.stroked", Stroked);
}
