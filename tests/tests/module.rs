//! `Module` from Rust: load a library module, call its exports, read their docs and metadata,
//! imports; errors for a missing file, a missing extension and a missing function.
use tvm_ffi::{Any, Function, Module};

/// The example library defines a subtype of a C++ type of the wheel's test library: load that
/// first, as Python's `import tvm_ffi` does.
fn example_module() -> Module {
    tvm_ffi_tests::load_cpp_testing_library();
    // SAFETY: a library this workspace built.
    unsafe { Module::load_from_file(tvm_ffi_tests::example_cdylib()) }.unwrap()
}

#[test]
fn load_call_and_inspect_a_library_module() {
    let module = example_module();
    assert_eq!(module.kind().unwrap().as_str(), "library");
    let add_one = module.function("add_one").unwrap();
    assert_eq!(add_one.call_as::<i64, _>((41,)).unwrap(), 42);
    assert!(module.implements_function("checked_div").unwrap());
    assert!(!module.implements_function("missing").unwrap());
    let doc = module.function_doc("add_one").unwrap().unwrap();
    assert!(doc.starts_with("Adds one: a module export"), "{doc}");
    let metadata = module.function_metadata("add_one").unwrap().unwrap();
    assert!(
        metadata.contains(r#"\"params\":[{\"type\":\"int\"}]"#),
        "{metadata}"
    );
    assert!(module.get_function("missing").unwrap().is_none());
    let err = module.function("missing").unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("AttributeError", "Module has no function 'missing'")
    );
    // Modules are values: through `Any` and back, and as function arguments.
    let back: Module = Any::new(module.clone()).cast().unwrap();
    assert!(back.as_object_ref().ptr_eq(module.as_object_ref()));
    let kind_of = Function::from_typed(|m: Module| m.kind());
    assert_eq!(kind_of.call_as::<String, _>((&module,)).unwrap(), "library");
    assert_eq!(module.imports().unwrap().len(), 0);
}

#[test]
fn imports_are_searched_after_the_module() {
    let outer = example_module();
    // SAFETY: a library this workspace built.
    let inner = unsafe { Module::load_from_file(tvm_ffi_tests::peer_cdylib()) }.unwrap();
    outer.import(&inner).unwrap();
    assert_eq!(outer.imports().unwrap().len(), 1);
    // A cycle is refused by the runtime.
    assert!(inner.import(&outer).is_err());
}

#[test]
fn loading_errors_name_the_path() {
    // SAFETY: the file does not exist: nothing is loaded.
    let err = unsafe { Module::load_from_file("/nonexistent/libnothing.so") }.unwrap_err();
    assert!(
        err.message().contains("/nonexistent/libnothing.so"),
        "{}: {}",
        err.kind(),
        err.message()
    );
    // SAFETY: as above.
    let err = unsafe { Module::load_from_file("/nonexistent/no_extension") }.unwrap_err();
    assert!(
        err.message()
            .contains("Failed to get file format from /nonexistent/no_extension"),
        "{}",
        err.message()
    );
}
