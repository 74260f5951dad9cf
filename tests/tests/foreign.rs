//! Objects of types defined elsewhere (here C++'s `libtvm_ffi_testing`), read, written and
//! called by name from Rust without declaring their layout: inherited members, static methods,
//! and the errors for a missing member or a value the setter refuses.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{Function, ObjectRef};

fn create(args: &[tvm_ffi::Any]) -> ObjectRef<AnyObject> {
    tvm_ffi_tests::load_cpp_testing_library();
    Function::get_global("ffi.MakeObjectFromPackedArgs")
        .unwrap()
        .call(args)
        .unwrap()
        .cast()
        .unwrap()
}

fn any<T: tvm_ffi::IntoAny>(v: T) -> tvm_ffi::Any {
    tvm_ffi::Any::new(v)
}

#[test]
fn fields_and_methods_by_name_own_and_inherited() {
    let obj = create(&[
        any("testing.TestObjectDerived"),
        any("v_i64"),
        any(7),
        any("v_map"),
        any(tvm_ffi::Map::<tvm_ffi::String, i64>::new([("k".into(), 1)]).unwrap()),
        any("v_array"),
        any(tvm_ffi::Array::<i64>::new([1, 2]).unwrap()),
    ]);
    assert_eq!(obj.get_field::<i64>("v_i64").unwrap(), 7);
    assert_eq!(obj.get_field::<f64>("v_f64").unwrap(), 10.0);
    assert_eq!(obj.get_field::<String>("v_str").unwrap(), "hello");
    let map: tvm_ffi::Map<tvm_ffi::String, i64> = obj.get_field("v_map").unwrap();
    assert_eq!(map.len(), 1);
    // SAFETY: only this thread uses `obj`.
    unsafe { obj.set_field("v_i64", 35) }.unwrap();
    // SAFETY: as above.
    unsafe { obj.set_field("v_str", "set from rust") }.unwrap();
    assert_eq!(obj.get_field::<String>("v_str").unwrap(), "set from rust");
    assert_eq!(obj.call_method::<i64>("add_i64", (7,)).unwrap(), 42);
    // The method as a function: self first.
    let add = obj.method("add_i64").unwrap();
    assert_eq!(add.call_as::<i64, _>((&obj, 1)).unwrap(), 36);
}

#[test]
fn static_methods_take_no_receiver() {
    tvm_ffi_tests::load_cpp_testing_library();
    let index = tvm_ffi::reflection::lookup_type("testing.SchemaAllTypes")
        .unwrap()
        .index;
    let make_with = tvm_ffi::reflection::methods(index)
        .into_iter()
        // SAFETY: registry strings live for the process.
        .find(|m| unsafe { m.name.as_bytes() } == b"make_with")
        .unwrap();
    // SAFETY: a borrowed view of a registry-owned function.
    let view = unsafe { &*(&make_with.method as *const _ as *const tvm_ffi::AnyView<'_>) };
    let make_with: Function = view.cast().unwrap();
    let obj: ObjectRef<AnyObject> = make_with.call_as((1, 2.5, "s")).unwrap();
    let again: ObjectRef<AnyObject> = obj.call_method("make_with", (3, 0.5, "t")).unwrap();
    assert_eq!(again.get_field::<i64>("v_int").unwrap(), 3);
    assert_eq!(again.call_method::<i64>("add_int", (4,)).unwrap(), 7);
}

#[test]
fn missing_members_and_refused_values_are_errors() {
    let pair = create(&[
        any("testing.TestIntPair"),
        any("a"),
        any(1),
        any("b"),
        any(2),
    ]);
    let err = pair.get_field::<i64>("c").unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "AttributeError",
            "Cannot find field `c` in testing.TestIntPair"
        )
    );
    let err = pair.call_method::<i64>("product", ()).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "AttributeError",
            "Cannot find method `product` in testing.TestIntPair"
        )
    );
    // SAFETY: only this thread uses `pair`.
    let err = unsafe { pair.set_field("a", "x") }.unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "TypeError",
            "Cannot convert from type `ffi.SmallStr` to `int`"
        )
    );
    let err = pair.get_field::<String>("a").unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(pair.call_method::<i64>("sum", ()).unwrap(), 3);
}
