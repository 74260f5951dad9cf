//! Rust-defined object types through the Rust API and the runtime's reflection: registration
//! order across modules, layout, fields, methods, constructors, conversions, soundness of the
//! field accessors, and load errors for conflicting registrations.
use std::ffi::c_void;

use tvm_ffi::builtin::AnyObject as RootObject;
use tvm_ffi::reflection;
use tvm_ffi::sys;
use tvm_ffi::{Any, AnyView, Array, Function, Map, ObjectRef, ObjectType, Rw};

// The child is defined (in file order) before its parent, in another module, and the parent's
// methods are split over two modules: registration must not care.
mod child {
    use super::parent::Shape;
    use tvm_ffi::{ffi_methods, Object, ObjectRef};

    /// A circle: a shape with a radius.
    #[derive(Object, Clone)]
    #[ffi_type(key = "rust_tests.Circle", final, structural = "tree")]
    #[repr(C)]
    pub struct Circle {
        #[ffi(base)]
        pub base: Shape,
        /// The radius.
        pub radius: f64,
    }

    #[ffi_methods]
    impl Circle {
        /// pi r^2, rounded down.
        pub fn area(&self) -> i64 {
            (std::f64::consts::PI * self.radius * self.radius) as i64
        }
        /// The circle as its parent type.
        pub fn as_shape(this: ObjectRef<Self>) -> ObjectRef<Shape> {
            this.upcast()
        }
    }
}

mod parent {
    use tvm_ffi::{ffi_methods, Object, Rw};

    pub fn default_tags() -> tvm_ffi::Array<i64> {
        tvm_ffi::Array::new([1, 2, 3]).unwrap()
    }

    /// A named shape.
    #[derive(Object, Clone)]
    #[ffi_type(key = "rust_tests.Shape", structural = "tree")]
    #[repr(C)]
    pub struct Shape {
        /// Writable identifier.
        #[ffi(rw)]
        pub id: Rw<i64>,
        #[ffi(
            name = "title",
            default = "untitled",
            metadata(max_len = 32, unit = "chars")
        )]
        pub name: tvm_ffi::String,
        #[ffi(default_factory = default_tags, repr = false, compare = false, hash = false)]
        pub tags: tvm_ffi::Array<i64>,
        #[ffi(kw_only, init = false, structural = "ignore")]
        pub cache: i64,
        #[ffi(skip)]
        pub scratch: Vec<u8>,
    }

    #[ffi_methods]
    impl Shape {
        /// The id plus `k`.
        pub fn id_plus(&self, k: i64) -> i64 {
            self.id.get() + k
        }
        /// Always panics.
        pub fn explode(&self) -> i64 {
            panic!("shape exploded")
        }
    }
}

mod more_parent_methods {
    use super::parent::Shape;
    use tvm_ffi::ffi_methods;

    #[ffi_methods]
    impl Shape {
        /// Fails with a ValueError when `n` is negative.
        #[ffi(name = "checked")]
        pub fn checked_method(&self, n: i64) -> tvm_ffi::Result<i64> {
            tvm_ffi::ensure!(n >= 0, ValueError, "negative: {n}");
            Ok(n)
        }
        /// A static method.
        pub fn unit() -> i64 {
            1
        }
    }
}

/// Every supported field type, with required (non-nullable) object fields.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.AllFields")]
#[repr(C)]
pub struct AllFields {
    pub a_i8: i8,
    pub a_u16: u16,
    pub a_i32: i32,
    pub a_f32: f32,
    pub a_bool: bool,
    pub a_str: tvm_ffi::String,
    pub a_bytes: tvm_ffi::Bytes,
    pub a_opt: tvm_ffi::Optional<i64>,
    pub a_obj: ObjectRef<parent::Shape>,
    pub a_opt_obj: Option<ObjectRef<parent::Shape>>,
    pub a_array: Array<tvm_ffi::String>,
    pub a_map: Map<tvm_ffi::String, i64>,
    pub a_any: Any,
    pub a_func: Function,
    pub a_dtype: tvm_ffi::DataType,
    pub a_device: tvm_ffi::Device,
}

/// A type with an explicit constructor returning `ObjectRef<Self>`.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.Counter2")]
#[repr(C)]
pub struct Counter2 {
    #[ffi(rw)]
    pub count: Rw<i64>,
}

#[tvm_ffi::ffi_methods]
impl Counter2 {
    #[ffi(init)]
    pub fn create(start: i64) -> ObjectRef<Self> {
        ObjectRef::new(Counter2 {
            count: start.into(),
        })
    }
}

/// A field whose default is an object of another type of this library: defaults are
/// computed once every type has its index.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.Leaf")]
#[repr(C)]
pub struct Leaf {
    pub v: i64,
}

#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.LeafHolder")]
#[repr(C)]
pub struct LeafHolder {
    #[ffi(default = Some(ObjectRef::new(Leaf { v: 1 })))]
    pub leaf: Option<ObjectRef<Leaf>>,
}

use child::Circle;
use parent::Shape;

fn shape(id: i64, name: &str) -> ObjectRef<Shape> {
    ObjectRef::new(Shape {
        id: id.into(),
        name: name.into(),
        tags: parent::default_tags(),
        cache: 0,
        scratch: vec![1, 2],
    })
}

fn circle(id: i64, radius: f64) -> ObjectRef<Circle> {
    ObjectRef::new(Circle {
        base: (*shape(id, "circle")).clone(),
        radius,
    })
}

/// A copy of a field's reflection entry (leaked: test helpers hand out `'static` references).
fn field(index: i32, name: &str) -> &'static sys::TVMFFIFieldInfo {
    let info = reflection::fields(index)
        .into_iter()
        // SAFETY: registry strings live for the process.
        .find(|f| unsafe { f.name.as_bytes() } == name.as_bytes())
        .unwrap_or_else(|| panic!("no field {name}"));
    Box::leak(Box::new(info))
}

fn method(index: i32, name: &str) -> (Function, &'static sys::TVMFFIMethodInfo) {
    let info = reflection::methods(index)
        .into_iter()
        // SAFETY: registry strings live for the process.
        .find(|m| unsafe { m.name.as_bytes() } == name.as_bytes())
        .unwrap_or_else(|| panic!("no method {name}"));
    let info: &'static sys::TVMFFIMethodInfo = Box::leak(Box::new(info));
    // SAFETY: the method Any is owned by the registry; AnyView borrows it.
    let view = unsafe { &*(&info.method as *const sys::TVMFFIAny as *const AnyView<'_>) };
    (view.cast::<Function>().unwrap(), info)
}

fn text(bytes: &sys::TVMFFIByteArray) -> &str {
    // SAFETY: registry strings live for the process.
    std::str::from_utf8(unsafe { bytes.as_bytes() }).unwrap()
}

/// Reads a field through its reflected getter.
fn get(obj: &ObjectRef<RootObject>, info: &sys::TVMFFIFieldInfo) -> Any {
    let mut out = Any::default().into_raw();
    // SAFETY: the getter receives the field address of a live object and writes an owned value.
    let rc = unsafe {
        (info.getter.unwrap())(
            (obj.as_raw().as_ptr() as *mut u8).add(info.offset as usize) as *mut c_void,
            &mut out,
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: `out` now holds an owned value.
    unsafe { Any::from_raw(out) }
}

/// Writes a field through its reflected setter.
fn set(
    obj: &ObjectRef<RootObject>,
    info: &sys::TVMFFIFieldInfo,
    value: Any,
) -> tvm_ffi::Result<()> {
    // SAFETY: a plain (non-Function) setter of this type's field.
    let setter: sys::TVMFFIFieldSetter = unsafe { std::mem::transmute(info.setter) };
    // SAFETY: field address of a live object; the value is borrowed.
    let rc = unsafe {
        setter(
            (obj.as_raw().as_ptr() as *mut u8).add(info.offset as usize) as *mut c_void,
            value.as_raw(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(tvm_ffi::Error::take_raised().unwrap())
    }
}

#[test]
fn conflicting_registrations_are_load_errors_naming_the_key() {
    // A type claiming the built-in `ffi.Shape`, a wrong declaration of `ffi.Shape` and a child
    // of it, in the helper binary `conflicting_types`.
    let errors = [
        "cannot register type `ffi.Shape`: the Rust declaration does not match the registered \
         type: it has no field `rank`",
        "cannot register type `ffi.Shape`: type `ffi.Shape` is already registered with a \
         different layout (it has no field `x`)",
        "cannot register type `rust_tests.OnWrongParent`: parent type `ffi.Shape` failed to \
         register (see the error reported for it)",
    ];
    let (stdout, stderr) = tvm_ffi_tests::run_helper(env!("CARGO_BIN_EXE_conflicting_types"));
    // Each load error is printed once, as it happens, and recorded.
    let printed: Vec<String> = errors.iter().map(|e| format!("tvm-ffi: {e}")).collect();
    let mut lines: Vec<&str> = stderr.lines().collect();
    let mut expected: Vec<&str> = printed.iter().map(String::as_str).collect();
    lines.sort_unstable();
    expected.sort_unstable();
    assert_eq!(lines, expected, "{stderr}");
    let mut recorded: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("load error: "))
        .collect();
    recorded.sort_unstable();
    let mut want = errors.to_vec();
    want.sort_unstable();
    assert_eq!(recorded, want, "{stdout}");
    let facts: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("load error: "))
        .collect();
    assert_eq!(
        facts,
        [
            "rust_tests.OnWrongParent registered: false",
            // The rest of the binary registered.
            "rust_tests.Bystander registered: true",
            // A type that failed its layout check is unusable, never aliased to the runtime's.
            "NotTheBuiltinShape::type_index panics: Some(\"RuntimeError: TVM-FFI type `ffi.Shape` \
             did not register when its library loaded: cannot register type `ffi.Shape`: the \
             Rust declaration does not match the registered type: it has no field `rank`; \
             cannot register type `ffi.Shape`: type `ffi.Shape` is already registered with a \
             different layout (it has no field `x`)\")",
            "OnWrongParent::type_index panics: true",
        ]
    );
}

#[test]
fn subtypes_of_builtin_types_are_load_errors() {
    // Rust subtypes of `ffi.Function` and `ffi.Array` (declared `external`), in the helper
    // binary `builtin_parents`: the runtime ends the process when asked for such an index. And
    // a Rust subtype of the final C++ type `testing.TestIntPair`.
    let (stdout, stderr) = tvm_ffi_tests::run_helper(env!("CARGO_BIN_EXE_builtin_parents"));
    let errors = [
        "cannot register type `rust_tests.MyArray`: its parent `ffi.Array` is (or derives from) \
         the runtime's built-in type `ffi.Array`, which takes no subtypes",
        "cannot register type `rust_tests.MyFunction`: its parent `ffi.Function` is (or derives \
         from) the runtime's built-in type `ffi.Function`, which takes no subtypes",
        "cannot register type `rust_tests.SubIntPair`: its parent `testing.TestIntPair` is final \
         and takes no subtypes",
    ];
    let mut recorded: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("load error: "))
        .collect();
    recorded.sort_unstable();
    assert_eq!(recorded, errors, "{stdout}{stderr}");
    let facts: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("load error: "))
        .collect();
    assert_eq!(
        facts,
        [
            "rust_tests.MyFunction registered: false",
            "rust_tests.MyArray registered: false",
            "rust_tests.SubIntPair registered: false",
            "rust_tests.BuiltinBystander registered: true",
        ]
    );
}

#[test]
fn parent_is_registered_before_child_across_modules() {
    let shape_ty = reflection::lookup_type("rust_tests.Shape").unwrap();
    let circle_ty = reflection::lookup_type("rust_tests.Circle").unwrap();
    assert_eq!(Shape::type_index(), shape_ty.index);
    assert_eq!(Circle::type_key(), "rust_tests.Circle");
    assert_eq!(shape_ty.depth, 1);
    assert_eq!(circle_ty.depth, 2);
    assert!(circle_ty.index > shape_ty.index);
    // Methods from both modules are on the parent; the child has its own.
    for name in ["id_plus", "explode", "checked", "unit"] {
        method(shape_ty.index, name);
    }
    method(circle_ty.index, "area");
    // Every type publishes the attribute stubgen reads, `False` when not final (as C++).
    let is_final = reflection::type_attr(circle_ty.index, "__ffi_type_final__").unwrap();
    assert!(is_final.cast::<bool>().unwrap());
    let not_final = reflection::type_attr(shape_ty.index, "__ffi_type_final__").unwrap();
    assert!(!not_final.cast::<bool>().unwrap());
}

#[test]
fn layout_is_header_then_parent_then_own_fields() {
    let circle_ty = Circle::type_index();
    let shape_ty = Shape::type_index();
    let id = field(shape_ty, "id");
    assert_eq!(id.offset, 24);
    assert_eq!(id.size, 8);
    let radius = field(circle_ty, "radius");
    assert_eq!(
        radius.offset as usize,
        24 + std::mem::offset_of!(Circle, radius)
    );
    assert_eq!(
        std::mem::offset_of!(Circle, radius),
        std::mem::size_of::<Shape>()
    );
    // Only own fields are registered per type.
    assert_eq!(reflection::fields(circle_ty).len(), 1);
    assert_eq!(reflection::fields(shape_ty).len(), 4);
    // SAFETY: metadata registered by this binary.
    let meta = unsafe { &*(*sys::TVMFFIGetTypeInfo(circle_ty)).metadata };
    assert_eq!(
        meta.total_size as usize,
        tvm_ffi::__private::ObjectCell::<Circle>::TOTAL_SIZE
    );
    assert_eq!(
        meta.structural_eq_hash_kind,
        sys::kTVMFFISEqHashKindTreeNode
    );
    assert!(meta.creator.is_some());
}

#[test]
fn field_flags_metadata_rename_and_static_type_indices() {
    use sys::field_flags::*;
    let shape_ty = Shape::type_index();
    let id = field(shape_ty, "id");
    assert_eq!(id.flags, kTVMFFIFieldFlagBitMaskWritable);
    assert_eq!(text(&id.doc), "Writable identifier.");
    let title = field(shape_ty, "title");
    assert_eq!(title.flags, kTVMFFIFieldFlagBitMaskHasDefault);
    assert_eq!(
        text(&title.metadata),
        r#"{"type_schema":"{\"type\":\"ffi.String\"}","max_len":32,"unit":"chars"}"#
    );
    let tags = field(shape_ty, "tags");
    assert_eq!(
        tags.flags,
        kTVMFFIFieldFlagBitMaskHasDefault
            | kTVMFFIFieldFlagBitMaskDefaultFromFactory
            | kTVMFFIFieldFlagBitMaskReprOff
            | kTVMFFIFieldFlagBitMaskCompareOff
            | kTVMFFIFieldFlagBitMaskHashOff
    );
    assert_eq!(
        text(&tags.metadata),
        r#"{"type_schema":"{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"int\"}]}"}"#
    );
    let cache = field(shape_ty, "cache");
    assert_eq!(
        cache.flags,
        kTVMFFIFieldFlagBitMaskKwOnly
            | kTVMFFIFieldFlagBitMaskInitOff
            | kTVMFFIFieldFlagBitMaskSEqHashIgnore
    );

    let all = AllFields::type_index();
    let expected = [
        ("a_i8", 1, 1),
        ("a_u16", 1, 2),
        ("a_i32", 1, 4),
        ("a_f32", 3, 4),
        ("a_bool", 2, 1),
        ("a_str", -1, 16),
        ("a_bytes", -1, 16),
        ("a_opt", -1, 16),
        ("a_obj", 64, 8),
        ("a_opt_obj", 64, 8),
        ("a_array", 71, 8),
        ("a_map", 64, 8),
        ("a_any", -1, 16),
        ("a_func", 64, 8),
        ("a_dtype", 5, 4),
        ("a_device", 6, 8),
    ];
    // What C++ reports for the same storage (`Optional<int64_t>`, `ObjectPtr<T>`, `Map`,
    // `Function`).
    for (name, index, size) in expected {
        let f = field(all, name);
        assert_eq!((f.field_static_type_index, f.size), (index, size), "{name}");
    }
    // Required object fields start unset: the type has a creator (as C++ `UnsafeInit`), the
    // reflection constructor, and `__ffi_new__`.
    // SAFETY: metadata registered by this binary.
    let meta = unsafe { &*(*sys::TVMFFIGetTypeInfo(all)).metadata };
    assert!(meta.creator.is_some());
    assert!(reflection::type_attr(all, "__ffi_init__").is_some());
    assert!(reflection::type_attr(all, "__ffi_new__").is_some());
    // Indices below the attribute column's first one (plain values, negative numbers) have
    // none: the column is never read before its start.
    for below in [0, 1, -1, i32::MIN] {
        assert!(
            reflection::type_attr(below, "__ffi_new__").is_none(),
            "{below}"
        );
    }
    assert!(!reflection::type_attr(all, "__ffi_type_final__")
        .unwrap()
        .cast::<bool>()
        .unwrap());
}

#[test]
fn refs_deref_upcast_downcast_and_any() {
    let c = circle(7, 2.0);
    assert_eq!(c.radius, 2.0);
    assert_eq!(c.base.id.get(), 7);
    assert_eq!(&*c.base.name, "circle");
    assert_eq!(c.type_key(), "rust_tests.Circle");
    let as_shape: ObjectRef<Shape> = c.clone().upcast();
    assert_eq!(as_shape.id.get(), 7);
    assert_eq!(as_shape.type_key(), "rust_tests.Circle");
    let root = c.clone().into_object();
    assert!(root.is_instance::<Shape>() && root.is_instance::<Circle>());
    let back = root.downcast::<Circle>().unwrap();
    assert!(back.ptr_eq(&c));
    assert!(shape(1, "s").into_object().downcast::<Circle>().is_none());
    assert_eq!(c.strong_count(), 4);

    let any = Any::new(c.clone());
    assert!(any.cast::<ObjectRef<Circle>>().unwrap().ptr_eq(&c));
    assert!(any.cast::<ObjectRef<Shape>>().unwrap().ptr_eq(&c));
    let err = Any::new(shape(1, "s"))
        .cast::<ObjectRef<Circle>>()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `rust_tests.Shape` to `rust_tests.Circle`"
    );
}

#[test]
fn debug_prints_through_the_runtime_repr() {
    let s = shape(3, "sq");
    // `tags` is repr=false.
    assert_eq!(
        format!("{s:?}"),
        r#"rust_tests.Shape(id=3, title="sq", cache=0)"#
    );
    assert_eq!(
        format!("{:?}", circle(1, 0.5)),
        r#"rust_tests.Circle(id=1, title="circle", cache=0, radius=0.5)"#
    );
}

#[test]
fn methods_through_the_reflected_table() {
    let c = circle(5, 1.0);
    let shape_ty = Shape::type_index();
    let (id_plus, info) = method(shape_ty, "id_plus");
    assert_eq!(text(&info.doc), "The id plus `k`.");
    assert_eq!(info.flags, 0);
    assert_eq!(id_plus.call_as::<i64, _>((&c, 10)).unwrap(), 15);
    let err = id_plus.call((&c, "x")).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument #1 (`k`) when calling: `rust_tests.Shape.id_plus(self: rust_tests.Shape, k: int) -> int`. Expected `int` but got `ffi.SmallStr`"
    );
    let (unit, info) = method(shape_ty, "unit");
    assert_eq!(
        info.flags,
        sys::field_flags::kTVMFFIFieldFlagBitMaskIsStaticMethod
    );
    assert_eq!(unit.call_as::<i64, _>(()).unwrap(), 1);
    let (checked, _) = method(shape_ty, "checked");
    let err = checked.call((&c, -1)).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("ValueError", "negative: -1")
    );
    let (explode, _) = method(shape_ty, "explode");
    let err = explode.call((&c,)).unwrap_err();
    assert_eq!(err.kind().as_str(), "RuntimeError");
    assert!(
        err.message().contains("rust_tests.Shape.explode")
            && err.message().contains("shape exploded"),
        "{}",
        err.message()
    );
    // The process survives and the next call works.
    assert_eq!(id_plus.call_as::<i64, _>((&c, 1)).unwrap(), 6);
    let (as_shape, _) = method(Circle::type_index(), "as_shape");
    let same: ObjectRef<Shape> = as_shape.call_as((&c,)).unwrap();
    assert!(same.ptr_eq(&c));
}

#[test]
fn auto_init_with_defaults_factory_and_init_off() {
    let init: Function = reflection::type_attr(Shape::type_index(), "__ffi_init__")
        .unwrap()
        .cast()
        .unwrap();
    let s: ObjectRef<Shape> = init.call_as((9,)).unwrap();
    assert_eq!(s.id.get(), 9);
    assert_eq!(&*s.name, "untitled");
    assert_eq!(s.tags.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(s.cache, 0);
    assert!(s.scratch.is_empty()); // skipped: Default
    let c: ObjectRef<Circle> = reflection::type_attr(Circle::type_index(), "__ffi_init__")
        .unwrap()
        .cast::<Function>()
        .unwrap()
        .call_as((1, 2.5))
        .unwrap();
    assert_eq!((c.base.id.get(), c.radius), (1, 2.5));
    let err = init.call(()).unwrap_err();
    assert_eq!(
        err.message(),
        "rust_tests.Shape.__ffi_init__() missing required argument: 'id'"
    );
}

#[test]
fn explicit_init_returning_an_object_ref() {
    let ty = Counter2::type_index();
    let init: Function = reflection::type_attr(ty, "__ffi_init__")
        .unwrap()
        .cast()
        .unwrap();
    let c: ObjectRef<Counter2> = init.call_as((41,)).unwrap();
    assert_eq!(c.count.get(), 41);
    let (_, info) = method(ty, "__ffi_init__");
    assert_eq!(
        text(&info.metadata),
        r#"{"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"ffi.Object\"}],\"params\":[{\"type\":\"int\"}]}}","arg_names":["start"]}"#
    );
    // Keyword arguments in the runtime's KWARGS convention (what Python's `Counter2(start=7)`
    // passes) bind by name.
    let kwargs = Function::get_global("ffi.GetKwargsObject")
        .unwrap()
        .call(())
        .unwrap();
    let c: ObjectRef<Counter2> = init.call_as((&kwargs, "start", 7)).unwrap();
    assert_eq!(c.count.get(), 7);
    let err = init.call((&kwargs, "count", 7)).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert!(
        err.message()
            .starts_with("Unexpected keyword argument `count` when calling: "),
        "{}",
        err.message()
    );
}

#[test]
fn read_only_setter_only_writes_objects_under_construction() {
    let s = shape(1, "s");
    let root = s.clone().into_object();
    let cache = field(Shape::type_index(), "cache");
    // A sealed object (Rust made it): the read-only field is not writable.
    let err = set(&root, cache, Any::new(5)).unwrap_err();
    assert_eq!(err.kind().as_str(), "AttributeError");
    assert!(
        err.message().contains("rust_tests.Shape"),
        "{}",
        err.message()
    );
    assert_eq!(s.cache, 0);
    // An object made by the runtime through the creator is open until Rust dereferences it.
    // SAFETY: metadata registered by this binary.
    let meta = unsafe { &*(*sys::TVMFFIGetTypeInfo(Shape::type_index())).metadata };
    let mut handle: sys::TVMFFIObjectHandle = std::ptr::null_mut();
    // SAFETY: the creator writes a new object with one reference.
    assert_eq!(unsafe { (meta.creator.unwrap())(&mut handle) }, 0);
    // SAFETY: one owned reference to an object of this type.
    let fresh: ObjectRef<RootObject> = unsafe {
        ObjectRef::from_raw(std::ptr::NonNull::new(handle as *mut sys::TVMFFIObject).unwrap())
    };
    set(&fresh, cache, Any::new(5)).unwrap();
    assert_eq!(get(&fresh, cache).cast::<i64>().unwrap(), 5);
    let typed = fresh.downcast::<Shape>().unwrap();
    assert_eq!(typed.cache, 5); // first dereference seals
    assert_eq!(
        set(&fresh, cache, Any::new(6)).unwrap_err().kind(),
        "AttributeError"
    );
    assert_eq!(typed.cache, 5);
    // Wrong-typed values are rejected before anything is written.
    let id = field(Shape::type_index(), "id");
    let err = set(&root, id, Any::new("text")).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "TypeError",
            "Cannot convert from type `ffi.SmallStr` to `int`"
        )
    );
    assert_eq!(s.id.get(), 1);
}

#[test]
fn rw_field_written_by_the_runtime_while_rust_reads() {
    let s = shape(0, "rw");
    let root = s.clone().into_object();
    let id = field(Shape::type_index(), "id");
    let writer = {
        let root = root.clone();
        std::thread::spawn(move || {
            let id = field(Shape::type_index(), "id");
            for i in 0..20_000 {
                set(&root, id, Any::new(i)).unwrap();
            }
        })
    };
    let mut last = 0;
    for _ in 0..20_000 {
        let now = s.id.get();
        assert!(now >= last, "values only grow: {now} after {last}");
        last = now;
        let through_getter = get(&root, id).cast::<i64>().unwrap();
        assert!(through_getter >= last);
    }
    writer.join().unwrap();
    assert_eq!(s.id.get(), 19_999);
}

#[test]
fn all_field_types_read_back_through_getters() {
    let inner = shape(2, "inner");
    let f = Function::from_typed(|x: i64| x * 2);
    let obj = ObjectRef::new(AllFields {
        a_i8: -5,
        a_u16: 65535,
        a_i32: -70000,
        a_f32: 1.5,
        a_bool: true,
        a_str: "a string longer than seven".into(),
        a_bytes: tvm_ffi::Bytes::from(&b"\x00\x01"[..]),
        a_opt: tvm_ffi::Optional::none(),
        a_obj: inner.clone(),
        a_opt_obj: Some(inner.clone()),
        a_array: Array::new(["x".into(), "y".into()]).unwrap(),
        a_map: Map::new([("k".into(), 3)]).unwrap(),
        a_any: Any::new(2.5),
        a_func: f,
        a_dtype: "float32".parse().unwrap(),
        a_device: "cpu:0".parse().unwrap(),
    });
    let root = obj.clone().into_object();
    let all = AllFields::type_index();
    let read = |name: &str| get(&root, field(all, name));
    assert_eq!(read("a_i8").cast::<i64>().unwrap(), -5);
    assert_eq!(read("a_u16").cast::<i64>().unwrap(), 65535);
    assert_eq!(read("a_i32").cast::<i64>().unwrap(), -70000);
    assert_eq!(read("a_f32").cast::<f64>().unwrap(), 1.5);
    assert!(read("a_bool").cast::<bool>().unwrap());
    assert_eq!(
        read("a_str").cast::<std::string::String>().unwrap(),
        "a string longer than seven"
    );
    assert!(read("a_opt").is_none());
    assert!(read("a_obj")
        .cast::<ObjectRef<Shape>>()
        .unwrap()
        .ptr_eq(&inner));
    assert!(read("a_opt_obj")
        .cast::<ObjectRef<Shape>>()
        .unwrap()
        .ptr_eq(&inner));
    assert_eq!(
        read("a_array")
            .cast::<Array<tvm_ffi::String>>()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(read("a_any").cast::<f64>().unwrap(), 2.5);
    let func = read("a_func").cast::<Function>().unwrap();
    assert_eq!(func.call_as::<i64, _>((21,)).unwrap(), 42);
    assert_eq!(
        read("a_dtype")
            .cast::<tvm_ffi::DataType>()
            .unwrap()
            .to_string(),
        "float32"
    );
    // Getters hand out owned references: +1 while held.
    let before = inner.strong_count();
    let held = read("a_obj");
    assert_eq!(inner.strong_count(), before + 1);
    drop(held);
    assert_eq!(inner.strong_count(), before);
    drop((obj, root));
    assert_eq!(inner.strong_count(), 1);
}

#[test]
fn shallow_copy_attr_copies_clone_types() {
    let c = circle(3, 1.0);
    let copy: Function = reflection::type_attr(Circle::type_index(), "__ffi_shallow_copy__")
        .unwrap()
        .cast()
        .unwrap();
    let d: ObjectRef<Circle> = copy.call_as((&c,)).unwrap();
    assert!(!d.ptr_eq(&c));
    assert_eq!((d.base.id.get(), d.radius), (3, 1.0));
    d.base.id.set(4);
    assert_eq!(c.base.id.get(), 3);
    // As in C++: a subtype is copied through its parent's payload (sliced to the parent).
    let shape_copy: Function = reflection::type_attr(Shape::type_index(), "__ffi_shallow_copy__")
        .unwrap()
        .cast()
        .unwrap();
    let sliced: ObjectRef<RootObject> = shape_copy.call_as((&c,)).unwrap();
    assert_eq!(sliced.type_key(), "rust_tests.Shape");
    let sliced: ObjectRef<Shape> = sliced.downcast().unwrap();
    assert_eq!(sliced.id.get(), 3);
    // The receiver is checked and counted as C++ checks it.
    let signature = "`rust_tests.Circle.__ffi_shallow_copy__(0: rust_tests.Circle) -> ffi.Object`";
    assert_eq!(
        copy.call((&c, 1)).unwrap_err().message(),
        format!("Mismatched number of arguments when calling: {signature}. Expected 1 but got 2 arguments")
    );
    let wrong = copy.call((7,)).unwrap_err();
    assert_eq!(
        (wrong.kind().as_str(), wrong.message()),
        ("TypeError", format!("Mismatched type on argument #0 when calling: {signature}. Expected `rust_tests.Circle` but got `int`").as_str())
    );
    // Not Clone: no attribute.
    assert!(reflection::type_attr(Counter2::type_index(), "__ffi_shallow_copy__").is_none());
}

#[test]
fn objects_cross_a_cpp_function_keeping_identity_and_counts() {
    tvm_ffi_tests::load_cpp_testing_library();
    let echo = Function::get_global("testing.echo").unwrap();
    let s = shape(1, "e");
    let back: ObjectRef<Shape> = echo.call_as((&s,)).unwrap();
    assert!(back.ptr_eq(&s));
    assert_eq!(s.strong_count(), 2);
    drop(back);
    let use_count = Function::get_global("testing.object_use_count").unwrap();
    assert_eq!(use_count.call_as::<i64, _>((&s,)).unwrap(), 1);
}

#[test]
fn defaults_may_make_objects_of_this_librarys_types() {
    let init: Function = reflection::type_attr(LeafHolder::type_index(), "__ffi_init__")
        .unwrap()
        .cast()
        .unwrap();
    let holder: ObjectRef<LeafHolder> = init.call_as(()).unwrap();
    assert_eq!(holder.leaf.as_ref().unwrap().v, 1);
}

#[test]
fn foreign_strings_are_valid_utf8_in_rust() {
    // A C++ setter stores bytes that are not UTF-8 into a string field of a C++ type; Rust reads
    // the field through an `external` declaration (helper binary `foreign_strings`).
    let (stdout, stderr) = tvm_ffi_tests::run_helper(env!("CARGO_BIN_EXE_foreign_strings"));
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "before=\"hello\"",
            "after=\"ok \u{fffd}\u{fffd} end\"",
            "valid=true"
        ],
        "{stderr}"
    );
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn external_field_types_are_checked_against_the_registered_schema() {
    // Declarations of C++ types whose fields the static type index cannot tell apart, in the
    // helper binary `external_field_types`: each mismatch is a load error naming the type, the
    // field, the registered and the declared type; correct declarations register.
    let errors = [
        "cannot register type `testing.TestVisitHook`: the Rust declaration does not match the \
         registered type: field `child` has type_schema `{\"type\":\"ffi.Object\"}`, the Rust \
         field `{\"type\":\"ffi.Function\"}`",
        "cannot register type `testing.TestDeepCopyEdges`: the Rust declaration does not match \
         the registered type: field `v_any` has type_schema `{\"type\":\"Any\"}`, the Rust field \
         `{\"type\":\"ffi.BigInt\"}`",
        "cannot register type `testing.TestObjectPtrHolder`: the Rust declaration does not \
         match the registered type: field `value` is a C++ reference of type \
         `{\"type\":\"testing.TestObjectBase\"}`, which may be null: declare it `Option<..>` \
         (type_schema `{\"type\":\"Optional\",\"args\":[{\"type\":\"testing.TestObjectBase\"}]}`), \
         the Rust field `{\"type\":\"testing.TestObjectBase\"}` cannot be null",
    ];
    let (stdout, stderr) = tvm_ffi_tests::run_helper(env!("CARGO_BIN_EXE_external_field_types"));
    let mut printed: Vec<String> = errors.iter().map(|e| format!("tvm-ffi: {e}")).collect();
    let mut lines: Vec<String> = stderr.lines().map(str::to_owned).collect();
    printed.sort_unstable();
    lines.sort_unstable();
    assert_eq!(lines, printed, "{stderr}");
    let mut recorded: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("load error: "))
        .collect();
    recorded.sort_unstable();
    let mut want = errors.to_vec();
    want.sort_unstable();
    assert_eq!(recorded, want, "{stdout}");
    let facts: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("load error: "))
        .collect();
    assert_eq!(
        facts,
        [
            "CxxObjectBase usable: true",
            "CxxInitSubset usable: true",
            "VisitHook usable: true",
            "ObjectPtrHolder usable: true",
            "ChildAsFunction usable: false",
            "AnyAsBigInt usable: false",
            "NullableAsNonNull usable: false",
            "v_i64=7",
        ]
    );
}

/// The fallible constructors (for code that must not unwind, e.g. under its own `extern "C"`)
/// return the values `new` returns; out of memory they return a `MemoryError` instead of
/// unwinding (the allocation failure itself cannot be provoked here).
#[test]
fn try_new_forms_build_the_same_values() {
    let leaf = ObjectRef::try_new(Leaf { v: 5 }).unwrap();
    assert_eq!(leaf.v, 5);
    assert_eq!(
        leaf.type_index(),
        ObjectRef::new(Leaf { v: 6 }).type_index()
    );
    for text in ["short", "a string longer than the seven inline bytes"] {
        let s = tvm_ffi::String::try_new(text).unwrap();
        assert_eq!(s, tvm_ffi::String::new(text));
        assert_eq!(s.as_str(), text);
    }
    let b = tvm_ffi::Bytes::try_new(b"\xff bytes that are not UTF-8").unwrap();
    assert_eq!(&*b, b"\xff bytes that are not UTF-8");
    // What `ObjectRef::try_new` fails with, through `?`.
    let err = tvm_ffi::Error::from(tvm_ffi::AllocFailure { bytes: 48 });
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("MemoryError", "cannot allocate 48 bytes: out of memory")
    );
}

/// `child_slots = 2` reserves the two indices after the type's own: its first two subtypes take
/// them (in registration order, which the linker decides), the third a dynamic index past them;
/// every subtype is still an instance of the parent.
mod reserved_child_slots {
    use tvm_ffi::{reflection, ObjectType};

    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "rust_tests.SlottedParent", child_slots = 2)]
    #[repr(C)]
    pub struct SlottedParent {
        pub value: i64,
    }

    macro_rules! slotted_children {
        ($($name:ident = $key:literal),*) => {$(
            #[derive(tvm_ffi::Object)]
            #[ffi_type(key = $key, final)]
            #[repr(C)]
            pub struct $name {
                #[ffi(base)]
                pub base: SlottedParent,
            }
        )*};
    }
    slotted_children!(
        SlottedA = "rust_tests.SlottedA",
        SlottedB = "rust_tests.SlottedB",
        SlottedC = "rust_tests.SlottedC"
    );

    #[test]
    fn subtypes_take_the_reserved_indices_then_overflow() {
        let parent = SlottedParent::type_index();
        let mut children = [
            SlottedA::type_index(),
            SlottedB::type_index(),
            SlottedC::type_index(),
        ];
        children.sort_unstable();
        assert_eq!(&children[..2], &[parent + 1, parent + 2], "parent {parent}");
        assert!(children[2] > parent + 2, "{children:?}, parent {parent}");
        for child in children {
            assert!(reflection::is_instance_index(
                child,
                SlottedParent::runtime_type()
            ));
        }
    }

    #[test]
    fn a_made_up_slot_count_above_the_bound_is_an_error_naming_the_key() {
        // SAFETY: every other registration in this binary happens at load, before `main`.
        let err = unsafe {
            tvm_ffi::__private::allocate_type_index(
                "rust_tests.TooManySlots",
                tvm_ffi::builtin::AnyObject::runtime_type(),
                1 << 20,
            )
        }
        .expect_err("over the bound");
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(
            err.message(),
            "cannot register type `rust_tests.TooManySlots`: it reserves 1048576 child slots, at \
             most 4096 are allowed"
        );
        assert!(tvm_ffi::reflection::lookup_type("rust_tests.TooManySlots").is_none());
    }
}
