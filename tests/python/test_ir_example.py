"""The IR of `examples/ir` (Var, Const, Add, Mul, Let: nodes with required object children)
used from Python as a C++ IR would be: constructed with positional and keyword arguments,
printed, pickled, copied, deep-copied, written as a JSON graph and read back, compared and
hashed structurally (free variables mapped, `let` bindings by position), evaluated in Rust."""
import copy
import json
import os
import pickle
import sys

import pytest
import tvm_ffi

from conftest import ROOT, _lib_path

# The classes of the example (examples/ir/python/ir_example.py), on the library this suite built.
os.environ["IR_EXAMPLE_LIB"] = _lib_path("libtvm_ffi_example_ir.so")
sys.path.insert(0, str(ROOT / "examples" / "ir" / "python"))
from ir_example import Add, Const, Expr, Let, Mul, Var  # noqa: E402


def sample():
    x, y = Var("x"), Var(name="y")
    return x, y, Add(x, Mul(a=Const(2), b=y))


def test_nodes_are_constructed_with_positional_and_keyword_arguments():
    x, y, e = sample()
    assert repr(e) == (
        'ir_example.Add(a=ir_example.Var(name="x"), '
        'b=ir_example.Mul(a=ir_example.Const(value=2), b=ir_example.Var(name="y")))'
    )
    assert e.a.same_as(x) and e.b.b.same_as(y) and e.b.a.value == 2
    assert isinstance(e, Expr) and isinstance(e.b, Mul)
    assert e.eval({x: 1, y: 3}) == 7


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Add(Var("x")), "ir_example.Add.__ffi_init__() missing required argument: 'b'"),
        (lambda: Add(b=Const(1)), "ir_example.Add.__ffi_init__() missing required argument: 'a'"),
        (lambda: Let(Var("x"), Const(1)), "ir_example.Let.__ffi_init__() missing required argument: 'body'"),
        (
            lambda: Add(1, Const(1)),
            "ir_example.Add.__ffi_init__() field 'a':\n  Cannot convert from type `int` to `ir_example.Expr`",
        ),
        (
            lambda: Let(Const(1), Const(1), Const(1)),
            "ir_example.Let.__ffi_init__() field 'var':\n"
            "  Cannot convert from type `ir_example.Const` to `ir_example.Var`",
        ),
        (
            lambda: Add(None, Const(1)),
            "ir_example.Add.__ffi_init__() field 'a':\n  Cannot convert from type `None` to `ir_example.Expr`",
        ),
    ],
)
def test_a_missing_or_wrong_child_is_a_clear_error(make, message):
    with pytest.raises(TypeError) as err:
        make()
    assert str(err.value) == message


def test_pickle_copy_and_deepcopy():
    x, y, e = sample()
    back = pickle.loads(pickle.dumps(e))
    assert repr(back) == repr(e) and not back.same_as(e)
    # Unpickled variables are new variables: equal once free variables are mapped.
    assert not tvm_ffi.structural_equal(back, e)
    assert tvm_ffi.structural_equal(back, e, map_free_vars=True)
    # `register_object` classes copy through pickle, as for C++ types; the type's own shallow
    # copy shares the children.
    assert tvm_ffi.structural_equal(copy.copy(e), e, map_free_vars=True)
    shallow_copy = tvm_ffi.core._lookup_type_attr(Add.__tvm_ffi_type_info__.type_index, "__ffi_shallow_copy__")
    shallow = shallow_copy(e)
    assert shallow.a.same_as(x) and shallow.b.same_as(e.b) and not shallow.same_as(e)
    deep = copy.deepcopy(e)
    assert repr(deep) == repr(e) and not deep.a.same_as(x)
    assert deep.eval({deep.a: 1, deep.b.b: 3}) == 7


def test_json_graph_round_trip_keeps_sharing():
    x = Var("x")
    let = Let(x, Const(1), Add(x, x))
    text = tvm_ffi.serialization.to_json_graph_str(let)
    assert json.loads(text) == {
        "root_index": 4,
        "nodes": [
            {"type": "ffi.String", "data": "x"},
            {"type": "ir_example.Var", "data": {"name": 0}},
            {"type": "ir_example.Const", "data": {"value": 1}},
            {"type": "ir_example.Add", "data": {"a": 1, "b": 1}},
            {"type": "ir_example.Let", "data": {"var": 1, "value": 2, "body": 3}},
        ],
    }
    back = tvm_ffi.serialization.from_json_graph_str(text)
    assert back.var.same_as(back.body.a) and back.body.a.same_as(back.body.b)
    assert tvm_ffi.structural_equal(back, let)  # the let binds its variable
    assert back.eval({}) == 2


def test_structural_equality_and_hash_with_free_variables_and_bindings():
    x, y = Var("x"), Var("y")
    assert not tvm_ffi.structural_equal(Add(x, Const(1)), Add(y, Const(1)))
    assert tvm_ffi.structural_equal(Add(x, Const(1)), Add(y, Const(1)), map_free_vars=True)
    assert tvm_ffi.structural_hash(Add(x, Const(1)), map_free_vars=True) == tvm_ffi.structural_hash(
        Add(y, Const(1)), map_free_vars=True
    )
    # A free variable maps to one variable only.
    assert not tvm_ffi.structural_equal(Add(x, x), Add(x, y), map_free_vars=True)
    # Bound variables compare by position; names do not matter.
    let_x = Let(x, Const(1), Add(x, x))
    let_y = Let(y, Const(1), Add(y, y))
    assert tvm_ffi.structural_equal(let_x, let_y)
    assert tvm_ffi.structural_hash(let_x) == tvm_ffi.structural_hash(let_y)
    assert not tvm_ffi.structural_equal(let_x, Let(y, Const(1), Add(y, Const(1))))
    mismatch = tvm_ffi.get_first_structural_mismatch(Add(x, Const(1)), Add(x, Const(2)))
    assert str(mismatch) == "(<root>.b.value, <root>.b.value)"


def test_rust_functions_walk_the_tree():
    x, y, z = Var("x"), Var("y"), Var("z")
    free_vars = tvm_ffi.get_global_func("ir_example.free_vars")
    assert [v.name for v in free_vars(Let(x, y, Add(x, Mul(z, y))))] == ["y", "z"]
    evaluate = tvm_ffi.get_global_func("ir_example.eval")
    assert evaluate(Let(x, Const(6), Mul(x, y)), {y: 7}) == 42
    with pytest.raises(ValueError, match="unbound variable `z`"):
        evaluate(Add(x, z), {x: 1})


def test_rust_never_sees_a_node_whose_children_are_not_set():
    """The creator makes nodes with unset children (as C++'s `UnsafeInit`), for the runtime to
    fill through the setters. Python may look at such a node (unset children read as None);
    Rust code may not: using it from Rust is an error, not a null dereference."""
    new_add = tvm_ffi.core._lookup_type_attr(Add.__tvm_ffi_type_info__.type_index, "__ffi_new__")
    bare = new_add()
    assert bare.a is None and bare.b is None
    assert repr(bare) == "ir_example.Add(a=None, b=None)"
    message = (
        "the object of type `ir_example.Add` is not fully constructed: its required field `a` is "
        "not set (when calling `{}`)"
    )
    with pytest.raises(RuntimeError) as err:
        bare.eval({})
    assert str(err.value) == message.format("ir_example.Expr.eval")
    with pytest.raises(RuntimeError) as err:
        tvm_ffi.get_global_func("ir_example.eval")(bare, {})
    assert str(err.value) == message.format("ir_example.eval")
    # Once the runtime has set both children, the node is complete and usable.
    Add.a.set(bare, Const(1))
    Add.b.set(bare, Const(2))
    assert bare.eval({}) == 3
