//! The IR example from C++ (`examples/ir/cpp/main.cc`): construction through the reflected
//! constructors, structural equality and hashing, JSON graphs, deep copy, a Rust function.
use std::path::Path;

#[test]
fn cpp_builds_compares_and_serializes_the_rust_ir() {
    let lib = tvm_ffi_tests::ir_cdylib();
    let exe = tvm_ffi_tests::compile_cpp_example(
        "examples/ir/cpp/main.cc",
        "ir_main",
        Path::new(env!("CARGO_TARGET_TMPDIR")),
    );
    let (stdout, stderr) = tvm_ffi_tests::run_program(&exe, &[&lib]);
    let json = r#"{"root_index":4,"nodes":[{"type":"ffi.String","data":"x"},{"type":"ir_example.Var","data":{"name":0}},{"type":"ir_example.Const","data":{"value":1}},{"type":"ir_example.Add","data":{"a":1,"b":1}},{"type":"ir_example.Let","data":{"var":1,"value":2,"body":3}}]}"#;
    let expr = r#"ir_example.Add(a=ir_example.Var(name="x"), b=ir_example.Mul(a=ir_example.Const(value=2), b=ir_example.Var(name="y")))"#;
    let expected = [
        format!("expr: {expr}"),
        "eval: 7".into(),
        "x+1 == y+1: false, with free vars mapped: true".into(),
        "let x = 1 in x + x == let y = 1 in y + y: true, same hash: true".into(),
        format!("json: {json}"),
        r#"from json: ir_example.Let(var=ir_example.Var(name="x"), value=ir_example.Const(value=1), body=ir_example.Add(a=ir_example.Var(name="x"), b=ir_example.Var(name="x"))), equal: true"#.into(),
        format!("deep copy: {expr}, shares x: false"),
        "expected TypeError: ir_example.Add.__ffi_init__() missing required argument: 'b'".into(),
    ];
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        expected,
        "stderr:\n{stderr}"
    );
    assert!(stderr.is_empty(), "{stderr}");
}
