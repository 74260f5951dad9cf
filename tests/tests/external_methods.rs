//! Methods cannot be added to a type declared `external` (its method table belongs to the
//! library that defines it): a load error naming the method, the rest still registers. The
//! declaration lives in the binary `external_methods` (tests/src/bin), run here as a
//! subprocess whose output is asserted.
use tvm_ffi_tests::run_helper;

#[test]
fn methods_on_external_types_are_load_errors() {
    let error = "cannot register method `ffi.Shape.rank`: the type is declared `external` \
                 (defined elsewhere); add methods to a Rust subtype or register a global \
                 function instead";
    let (stdout, stderr) = run_helper(env!("CARGO_BIN_EXE_external_methods"));
    assert_eq!(stderr, format!("tvm-ffi: {error}\n"));
    assert_eq!(
        stdout,
        format!("load error: {error}\nShapeDeclaration is ffi.Shape: true\n")
    );
}
