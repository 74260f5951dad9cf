//! The IR example used from Rust: build, print, compare and hash structurally (with and
//! without mapping free variables), find the first mismatch, deep-copy, serialize to a JSON
//! graph and back, evaluate; and the guarantee that Rust never sees a node whose required
//! children are unset.
use tvm_ffi::{reflection, serialization, structural, Function, ObjectRef, ObjectType};
use tvm_ffi_example_ir::{add, evaluate, let_in, mul, Add, Const, Expr, Var};

#[test]
fn build_print_and_evaluate() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let e = add(x.clone(), mul(Const::new(2), y.clone()));
    assert_eq!(
        e.to_string(),
        r#"ir_example.Add(a=ir_example.Var(name="x"), b=ir_example.Mul(a=ir_example.Const(value=2), b=ir_example.Var(name="y")))"#
    );
    assert_eq!(evaluate(&e, &[(x.clone(), 1), (y.clone(), 3)]).unwrap(), 7);
    let node: ObjectRef<Add> = e.clone().downcast().unwrap();
    assert!(node.a.clone().downcast::<Var>().unwrap().ptr_eq(&x));
    let err = evaluate(&e, &[(x, 1)]).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("ValueError", "unbound variable `y`")
    );
}

#[test]
fn structural_equality_hash_and_mismatch() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let x1 = add(x.clone(), Const::new(1));
    let y1 = add(y.clone(), Const::new(1));
    assert!(!structural::equal(&x1, &y1).unwrap());
    assert!(structural::equal_map_free_vars(&x1, &y1).unwrap());
    assert_eq!(
        structural::hash_map_free_vars(&x1).unwrap(),
        structural::hash_map_free_vars(&y1).unwrap()
    );
    let let_x = let_in(x.clone(), Const::new(1), add(x.clone(), x.clone()));
    let let_y = let_in(y.clone(), Const::new(1), add(y.clone(), y.clone()));
    assert!(structural::equal(&let_x, &let_y).unwrap());
    assert_eq!(
        structural::hash(&let_x).unwrap(),
        structural::hash(&let_y).unwrap()
    );
    let x2 = add(x.clone(), Const::new(2));
    let mismatch = structural::first_mismatch(&x1, &x2).unwrap().unwrap();
    assert_eq!(
        (mismatch.lhs_path.as_str(), mismatch.rhs_path.as_str()),
        ("<root>.b.value", "<root>.b.value")
    );
    assert!(structural::first_mismatch(&x1, &x1).unwrap().is_none());
}

#[test]
fn deep_copy_and_json_graph_round_trip() {
    let x = Var::new("x");
    let e = let_in(x.clone(), Const::new(6), mul(x.clone(), Const::new(7)));
    let copy = e.deep_copy().unwrap();
    assert!(!copy.ptr_eq(&e));
    assert!(structural::equal(&copy, &e).unwrap());
    assert_eq!(evaluate(&copy, &[]).unwrap(), 42);
    let json = serialization::to_json_graph(&e).unwrap();
    let back: ObjectRef<Expr> = serialization::from_json_graph(&json)
        .unwrap()
        .cast()
        .unwrap();
    assert_eq!(back.to_string(), e.to_string());
    assert!(structural::equal(&back, &e).unwrap());
    assert_eq!(evaluate(&back, &[]).unwrap(), 42);
}

#[test]
fn rust_never_sees_unset_children() {
    // The creator's node (as the runtime makes it before setting the children): no
    // `ObjectRef<Add>` of it can be made, so no `&Add` can read a null child (and `Deref`
    // never checks or fails).
    let new_add: Function = reflection::type_attr(Add::type_index(), "__ffi_new__")
        .unwrap()
        .cast()
        .unwrap();
    let bare = new_add.call(()).unwrap();
    let err = bare.cast::<ObjectRef<Add>>().unwrap_err();
    assert_eq!(
        (err.kind(), err.message()),
        (
            tvm_ffi::ErrorKind::Runtime,
            "the object of type `ir_example.Add` is not fully constructed: its required field `a` is not set"
        )
    );
    assert!(bare.checked_cast::<ObjectRef<Add>>().is_none());
    // The runtime completes such nodes through the setters (here `create_object`'s path):
    // then they are usable.
    let made: ObjectRef<Expr> = Function::get_global_required("ffi.MakeObjectFromPackedArgs")
        .unwrap()
        .call(("ir_example.Add", "a", Const::new(1), "b", Const::new(2)))
        .unwrap()
        .cast()
        .unwrap();
    assert_eq!(evaluate(&made, &[]).unwrap(), 3);
}

#[test]
fn casting_an_unfinished_node_to_its_parent_checks_the_node_itself() {
    // Sealing is a state of the whole object: making an `ObjectRef<Expr>` of an `Add` (a
    // parent method, a function taking `ObjectRef<Expr>`, a downcast) must check the `Add`'s
    // own required fields, or a later `ObjectRef<Add>` would find it sealed and read a null
    // child.
    let new_add: Function = reflection::type_attr(Add::type_index(), "__ffi_new__")
        .unwrap()
        .cast()
        .unwrap();
    let bare = new_add.call(()).unwrap();
    let err = bare.cast::<ObjectRef<Expr>>().unwrap_err();
    assert_eq!(
        err.message(),
        "the object of type `ir_example.Add` is not fully constructed: its required field `a` is not set"
    );
    let root: ObjectRef<tvm_ffi::builtin::AnyObject> = bare.cast().unwrap();
    assert!(root.downcast::<Expr>().is_none() && root.downcast::<Add>().is_none());
    assert!(bare.cast::<ObjectRef<Add>>().is_err());
}

/// A classification over the IR's node types (binding-free arms, so `match_any!` picks the arm
/// from its table by type index alone when the node is sealed).
fn kind(value: &tvm_ffi::Any) -> &'static str {
    use tvm_ffi_example_ir::{Let, Mul};
    tvm_ffi::match_any! {
        value {
            ObjectRef<Var>(_) => "var",
            ObjectRef<Const>(_) => "const",
            ObjectRef<Add>(_) => "add",
            ObjectRef<Mul>(_) => "mul",
            ObjectRef<Let>(_) => "let",
            ObjectRef<Expr>(_) => "expr",
            i64(_) => "int",
            _ => "other",
        }
    }
}

#[test]
fn a_classifying_match_takes_the_first_arm_of_the_type_and_never_an_unfinished_node() {
    let sum = add(Const::new(1), Const::new(2));
    let any = |e: &ObjectRef<Expr>| tvm_ffi::Any::new(e.clone());
    assert_eq!(kind(&any(&sum)), "add");
    assert_eq!(kind(&any(&mul(Const::new(1), Const::new(2)))), "mul");
    assert_eq!(kind(&tvm_ffi::Any::new(Const::new(3))), "const");
    assert_eq!(kind(&tvm_ffi::Any::new(7i64)), "int");
    assert_eq!(kind(&tvm_ffi::Any::new("text")), "other");
    assert_eq!(kind(&tvm_ffi::Any::none()), "other");
    // An unfinished `Add` is of the type but cannot be used: no arm of it, nor of its parent
    // `Expr`, takes it (as `checked_cast` refuses it), on every call (the table caches the
    // type's candidates, not the object's state).
    let new_add: Function = reflection::type_attr(Add::type_index(), "__ffi_new__")
        .unwrap()
        .cast()
        .unwrap();
    let bare = new_add.call(()).unwrap();
    for _ in 0..3 {
        assert_eq!(kind(&bare), "other");
        assert_eq!(kind(&any(&sum)), "add");
    }
}
