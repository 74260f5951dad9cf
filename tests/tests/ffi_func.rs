//! `#[ffi_func]` in a Rust test binary: the load-time constructor registers the globals, which
//! Rust calls back through `Function::get_global`; the module exports are called as the C
//! symbols they are, and, through `ffi.FunctionFromExternC`, as runtime function objects.
use std::ffi::c_void;

use tvm_ffi::sys::TVMFFIAny;
use tvm_ffi::{ffi_func, Any, AnyView, Function, String};

/// Adds one.
#[ffi_func(name = "rust_ffi_func.add_one", export = "rust_ffi_func_add_one")]
pub fn add_one(x: i64) -> i64 {
    x + 1
}

/// Panics on a negative argument.
#[ffi_func(export = "rust_ffi_func_sqrt")]
pub fn sqrt(x: f64) -> f64 {
    assert!(x >= 0.0, "negative argument {x}");
    x.sqrt()
}

/// Scales and shifts: every parameter after `x` has a default.
#[ffi_func(name = "rust_ffi_func.affine", metadata(unit = "m"))]
pub fn affine(
    x: f64,
    #[ffi(default = 2)] scale: i64,
    #[ffi(default = -0.5)] shift: f64,
    #[ffi(default = "y")] label: &str,
    #[ffi(default = None)] note: Option<String>,
    #[ffi(default = true)] enabled: bool,
) -> std::string::String {
    let value = if enabled { x * scale as f64 + shift } else { x };
    match note {
        Some(note) => format!("{label}={value} ({note})"),
        None => format!("{label}={value}"),
    }
}

#[ffi_func(export = "rust_ffi_func_undocumented")]
pub fn undocumented() {}

/// Sums integers, however many.
#[ffi_func(name = "rust_ffi_func.sum", export = "rust_ffi_func_sum")]
pub fn sum(args: &[AnyView]) -> tvm_ffi::Result<i64> {
    args.iter().map(|a| a.cast::<i64>()).sum()
}

extern "C" {
    fn __tvm_ffi_rust_ffi_func_add_one(
        this: *mut c_void,
        args: *const TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> i32;
    fn __tvm_ffi_rust_ffi_func_sqrt(
        this: *mut c_void,
        args: *const TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> i32;
    fn __tvm_ffi__metadata_rust_ffi_func_sum(
        this: *mut c_void,
        args: *const TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> i32;
    fn __tvm_ffi__doc_rust_ffi_func_add_one(
        this: *mut c_void,
        args: *const TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> i32;
}

type SafeCall = unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> i32;

/// Calls an export the way the runtime's library module does (null `self`, zeroed result).
fn call_export(f: SafeCall, args: &[Any]) -> tvm_ffi::Result<Any> {
    let mut result = TVMFFIAny::NONE;
    // SAFETY: the safe-call contract: `args.len()` live borrowed values, a zeroed result slot.
    let rc = unsafe {
        f(
            std::ptr::null_mut(),
            args.as_ptr() as *const TVMFFIAny,
            args.len() as i32,
            &mut result,
        )
    };
    if rc == 0 {
        // SAFETY: on success the callee wrote an owned value.
        Ok(unsafe { Any::from_raw(result) })
    } else {
        Err(tvm_ffi::Error::take_raised().expect("a failing call raises an error"))
    }
}

/// The export wrapped as a runtime function object, as C++ `Function::FromExternC` does.
fn export_as_function(f: SafeCall) -> Function {
    // SAFETY: called below with a safe-call function and null handle and deleter.
    let from_extern = unsafe { Function::get_global_unchecked("ffi.FunctionFromExternC") }.unwrap();
    // SAFETY: `f` is a safe-call function of the C ABI's signature; no handle and no deleter
    // (null), as `ffi.FunctionFromExternC` accepts.
    let (handle, safe_call, deleter) = unsafe {
        (
            Any::from_opaque_ptr(std::ptr::null_mut::<c_void>()),
            Any::from_opaque_ptr(f as *mut c_void),
            Any::from_opaque_ptr(std::ptr::null_mut::<c_void>()),
        )
    };
    from_extern.call_as((handle, safe_call, deleter)).unwrap()
}

fn metadata_of_global(name: &str) -> std::string::String {
    let get = Function::get_global("ffi.GetGlobalFuncMetadata").unwrap();
    get.call_as::<std::string::String, _>((name,)).unwrap()
}

#[test]
fn globals_are_registered_and_callable_from_rust() {
    assert!(tvm_ffi::registry::load_errors().is_empty());
    let f = Function::get_global("rust_ffi_func.add_one").unwrap();
    assert_eq!(f.call_as::<i64, _>((41,)).unwrap(), 42);
    let err = f.call(("x",)).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 (`x`) when calling: `rust_ffi_func.add_one(x: int) -> int`. Expected `int` but got `ffi.SmallStr`"
    );
    let sum = Function::get_global("rust_ffi_func.sum").unwrap();
    assert_eq!(sum.call_as::<i64, _>((1, 2, 3, 4)).unwrap(), 10);
    assert_eq!(sum.call_as::<i64, _>(()).unwrap(), 0);
    assert_eq!(
        sum.call((1, "x")).unwrap_err().message(),
        "Cannot convert from type `ffi.SmallStr` to `int`"
    );
    // Export-only functions are not globals.
    assert!(Function::get_global("rust_ffi_func_sqrt").is_none());
}

#[test]
fn packed_and_typed_metadata_match_cpp() {
    assert_eq!(
        metadata_of_global("rust_ffi_func.sum"),
        r#"{"type_schema":"{\"type\":\"ffi.Function\"}"}"#
    );
    assert_eq!(
        metadata_of_global("rust_ffi_func.add_one"),
        r#"{"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"int\"}],\"params\":[{\"type\":\"int\"}]}}","arg_names":["x"]}"#
    );
    let meta = call_export(__tvm_ffi__metadata_rust_ffi_func_sum, &[]).unwrap();
    assert_eq!(
        meta.cast::<&str>().unwrap(),
        r#"{"type_schema":"{\"type\":\"ffi.Function\"}"}"#
    );
    let doc = call_export(__tvm_ffi__doc_rust_ffi_func_add_one, &[]).unwrap();
    assert_eq!(doc.cast::<String>().unwrap(), "Adds one.");
}

#[test]
fn exports_share_the_conversions_and_name_themselves() {
    assert_eq!(
        call_export(__tvm_ffi_rust_ffi_func_add_one, &[Any::new(1)])
            .unwrap()
            .cast::<i64>()
            .unwrap(),
        2
    );
    let err = call_export(__tvm_ffi_rust_ffi_func_add_one, &[]).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched number of arguments when calling: `rust_ffi_func_add_one(x: int) -> int`. Expected 1 but got 0 arguments"
    );
    // Through a function object wrapping the symbol, as `Module::GetFunction` hands it out.
    let f = export_as_function(__tvm_ffi_rust_ffi_func_add_one);
    assert_eq!(f.call_as::<i64, _>((9,)).unwrap(), 10);
    let err = f.call((1.5,)).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 (`x`) when calling: `rust_ffi_func_add_one(x: int) -> int`. Expected `int` but got `float`"
    );
}

#[test]
fn a_panic_in_an_export_is_an_error_and_the_next_call_works() {
    let err = call_export(__tvm_ffi_rust_ffi_func_sqrt, &[Any::new(-4.0)]).unwrap_err();
    assert_eq!(err.kind().as_str(), "RuntimeError");
    assert!(
        err.message()
            .starts_with("Rust panic in `rust_ffi_func_sqrt` at "),
        "{}",
        err.message()
    );
    assert!(
        err.message().ends_with("negative argument -4"),
        "{}",
        err.message()
    );
    let ok = call_export(__tvm_ffi_rust_ffi_func_sqrt, &[Any::new(16.0)]).unwrap();
    assert_eq!(ok.cast::<f64>().unwrap(), 4.0);
}

/// The runtime's `KWARGS` sentinel: `[positional.., KWARGS, key0, value0, ..]` passes keywords.
fn kwargs() -> Any {
    Function::get_global("ffi.GetKwargsObject")
        .unwrap()
        .call(())
        .unwrap()
}

#[test]
fn names_and_defaults_are_registered_in_the_metadata() {
    assert_eq!(
        metadata_of_global("rust_ffi_func.affine"),
        r#"{"type_schema":"{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":\"ffi.String\"}],\"params\":[{\"type\":\"float\"},{\"type\":\"int\"},{\"type\":\"float\"},{\"type\":\"ffi.String\"},{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.String\"}]},{\"type\":\"bool\"}]}}","arg_names":["x","scale","shift","label","note","enabled"],"arg_defaults":{"scale":2,"shift":-0.5,"label":"y","note":null,"enabled":true},"unit":"m"}"#
    );
}

#[test]
fn omitted_arguments_take_their_defaults_and_keywords_bind_by_name() {
    let f = Function::get_global("rust_ffi_func.affine").unwrap();
    let call = |args: &[Any]| f.call_packed(&args.iter().map(Any::view).collect::<Vec<_>>());
    let text = |args: &[Any]| call(args).unwrap().cast::<std::string::String>().unwrap();
    assert_eq!(text(&[Any::new(1.0)]), "y=1.5");
    assert_eq!(text(&[Any::new(1.0), Any::new(3)]), "y=2.5");
    let k = kwargs();
    assert_eq!(
        text(&[
            Any::new(1.0),
            k.clone(),
            Any::new("label"),
            Any::new("z"),
            Any::new("note"),
            Any::new("n")
        ]),
        "z=1.5 (n)"
    );
    assert_eq!(
        text(&[
            k.clone(),
            Any::new("enabled"),
            Any::new(false),
            Any::new("x"),
            Any::new(4.0)
        ]),
        "y=4"
    );
    let error = |args: &[Any]| call(args).unwrap_err();
    let sig = "`rust_ffi_func.affine(x: float, scale: int = 2, shift: float = -0.5, label: str = \"y\", note: Optional<str> = None, enabled: bool = True) -> str`";
    for (args, message) in [
        (vec![Any::new(1.0), k.clone(), Any::new("nope"), Any::new(1)], format!("Unexpected keyword argument `nope` when calling: {sig}")),
        (vec![Any::new(1.0), k.clone(), Any::new("x"), Any::new(1.0)], format!("Multiple values for argument `x` when calling: {sig}")),
        (vec![k.clone(), Any::new("scale"), Any::new(1)], format!("Missing argument `x` when calling: {sig}")),
        (vec![Any::new(1.0), k.clone(), Any::new("scale")], format!("Keyword arguments must come in key/value pairs after the KWARGS marker when calling: {sig}")),
        (vec![Any::new(1.0), k.clone(), Any::new(7), Any::new(1)], format!("A keyword must be a string, got `int` when calling: {sig}")),
        (vec![Any::new(1.0), k.clone(), Any::new("scale"), Any::new("s")], format!("Mismatched type on argument #1 (`scale`) when calling: {sig}. Expected `int` but got `ffi.SmallStr`")),
        (vec![], format!("Mismatched number of arguments when calling: {sig}. Expected 6 but got 0 arguments")),
    ] {
        let err = error(&args);
        assert_eq!((err.kind().as_str(), err.message()), ("TypeError", message.as_str()));
    }
}
