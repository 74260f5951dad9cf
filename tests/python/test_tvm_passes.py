"""TVM passes written in Rust (`examples/tvm-passes`), against TVM's own C++ passes.

`libtvm_passes.so`, loaded into a process that imported `tvm` (`apache-tvm==0.27.0.post1`),
registers `tvm_passes.RemoveNoOp()`, `tvm_passes.ConvertSSA()` and
`tvm_passes.DeadCodeElimination(entry_functions=None)`, factories with the parameters of
`tvm.tirx.transform.RemoveNoOp()`, `ConvertSSA()` and `tvm.relax.transform.DeadCodeElimination()`
returning real `tvm.transform.Pass`es. Each input here (written for these tests) goes through the
Rust and the C++ pass, and the outputs must be structurally equal: one input per rule of C++'s
`NoOpRemover` and per kind of redefinition `IRConvertSSA` renames, Relax modules of dead bindings
and unused functions for `DeadCodeElimination`, mixed `tvm.transform.Sequential`s of C++ and Rust
passes, 1,000 random functions, 200 random Relax modules, a generated function of 10^4 statements
and a generated Relax module of 300 functions."""
import inspect
import pathlib
import sys

import pytest
from conftest import UNDER_ASAN, _lib_path

tvm = pytest.importorskip(
    "tvm", reason="Apache TVM is not installed (scripts/setup.sh installs apache-tvm from python-requirements.txt)")
import tvm_ffi  # noqa: E402
from tvm import relax, s_tir, tirx  # noqa: E402
from tvm.script import ir as I  # noqa: E402
from tvm.script import relax as R  # noqa: E402
from tvm.script import tirx as T  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "tvm-passes" / "python"))
from tvm_passes_workload import (  # noqa: E402
    binding_count, dead_code_module, no_op_heavy_module, random_module, random_relax_module, statement_count)

pytestmark = pytest.mark.skipif(
    UNDER_ASAN, reason="scripts/asan.sh does not build the TVM examples under AddressSanitizer")


@pytest.fixture(scope="module")
def rust_remove_no_op():
    tvm_ffi.load_module(_lib_path("libtvm_passes.so"))
    return tvm_ffi.get_global_func("tvm_passes.RemoveNoOp")


def _both(rust_factory, mod):
    """`(Rust output, C++ output)` of RemoveNoOp on `mod`, asserted structurally equal."""
    expected = tirx.transform.RemoveNoOp()(mod)
    got = rust_factory()(mod)
    tvm.ir.assert_structural_equal(got, expected)
    return got, expected


def _module(func):
    return tvm.IRModule({"main": func})


# One input per rule. Each is a TVMScript function, or built with TVM's constructors where the
# parser would normalise the shape away (nested sequences).

@T.prim_func(private=True)
def evaluate_pure_and_side_effects(n: T.int32):
    T.evaluate(0)
    T.evaluate(n + 1)
    T.evaluate(T.call_extern("int32", "kept"))
    T.evaluate(T.call_pure_extern("int32", "pure_call", n))


@T.prim_func(private=True)
def loop_with_no_op_body(A: T.Buffer(16, "int32")):
    for i in range(16):
        T.evaluate(0)
    for i in range(16):
        A[i] = 1


@T.prim_func(private=True)
def loop_of_zero_extent(A: T.Buffer(16, "int32"), n: T.int32):
    for i in range(0):
        A[i] = 42
    for i in range(n - n):
        A[i] = 7


@T.prim_func(private=True)
def loop_of_provably_empty_extent(A: T.Buffer(16, "int32")):
    for i in range(16):
        for j in range(i - 20):
            A[i] = j


@T.prim_func(private=True)
def loop_extent_known_from_context(A: T.Buffer(16, "int32"), n: T.int32):
    x = T.Bind(n - n - 1)
    for i in range(x):
        A[i] = 1
    if n <= 0:
        for i in range(n):
            A[i] = 2
    for i in range(16):
        for j in range(i * i - 300):
            A[j] = 3


@T.prim_func(private=True)
def loop_with_symbolic_extent_kept(A: T.Buffer(16, "int32"), n: T.int32):
    for i in range(n):
        A[i] = 1


@T.prim_func(private=True)
def if_with_no_op_branches(A: T.Buffer(16, "int32"), n: T.int32):
    for i in range(16):
        if i < 8:
            T.evaluate(0)
        else:
            A[i] = 1
        if i < 4:
            A[i] = 2
        else:
            T.evaluate(0)
        if i < n:
            T.evaluate(0)
        if T.call_extern("bool", "probe", i):
            T.evaluate(0)
        else:
            T.evaluate(0)


@T.prim_func(private=True)
def if_with_constant_condition(A: T.Buffer(16, "int32")):
    if T.bool(True):
        A[0] = 1
    else:
        A[0] = 2
    if T.bool(False):
        A[1] = 1
    if T.bool(False):
        A[2] = 1
    else:
        A[2] = 3


@T.prim_func(private=True)
def if_likely(A: T.Buffer(16, "int32"), n: T.int32):
    for i in range(16):
        if T.likely(i < n):
            A[i] = A[i]
    # The condition inside `likely` constrains the branch: this loop never runs.
    if T.likely(n < 4):
        for j in range(n - 3):
            A[j] = 1


@T.prim_func(private=True)
def attr_with_no_op_body(A: T.Buffer(16, "int32")):
    with T.attr(0, "pragma_note", 1):
        T.evaluate(0)
    with T.attr(0, "pragma_kept", 1):
        A[0] = 1
    with T.attr(0, "pragma_side_effect", T.call_extern("int32", "value")):
        T.evaluate(0)


@T.prim_func(private=True)
def attr_debug_skip_region(A: T.Buffer(16, "int32")):
    A[0] = 1
    with T.attr(0, "pragma_debug_skip_region", 0):
        A[1] = 2


@T.prim_func(private=True)
def store_of_the_stored_value(A: T.Buffer(16, "int32"), B: T.Buffer(16, "int32")):
    for i in range(16):
        A[i] = A[i]
        A[i] = A[i] + 0
        A[i] = A[i + 1]
        B[i] = A[i]
        A[i] = A[i * 1 + 0]


@T.prim_func(private=True)
def store_under_a_condition(A: T.Buffer(16, "int32")):
    for i in range(16):
        if A[i] == 5:
            A[i] = 5
        if A[i] == 5:
            A[i] = 6
        else:
            A[i] = 5


@T.prim_func(private=True)
def store_under_an_index_condition(A: T.Buffer(16, "int32")):
    for i in range(16):
        if i == 3:
            A[i] = A[3]
        else:
            A[i] = A[3]


@T.prim_func(private=True)
def store_after_an_assert(A: T.Buffer(16, "int32"), n: T.int32):
    assert A[3] == 7, "A[3] is 7"
    A[3] = 7
    assert n == 3, "n is 3"
    A[n] = A[3]
    A[4] = A[n]


@T.prim_func(private=True)
def store_with_side_effect_index(A: T.Buffer(16, "int32")):
    A[T.call_extern("int32", "index")] = A[T.call_extern("int32", "index")]


@T.prim_func(private=True)
def bind_and_store(A: T.Buffer(16, "int32"), n: T.int32):
    x = T.Bind(n + 1)
    for i in range(4):
        A[i] = A[x - n - 1 + i]


@T.prim_func(private=True)
def while_with_no_op_body(A: T.Buffer(16, "int32")):
    while A[0] < 3:
        T.evaluate(0)
    while A[1] < 3:
        A[1] = A[1] + 1


@T.prim_func(private=True)
def thread_extent(A: T.Buffer(64, "int32")):
    tx = T.launch_thread("threadIdx.x", 64)
    if tx < 64:
        A[tx] = A[tx]


@T.prim_func(private=True, s_tir=True)
def inside_blocks(A: T.Buffer((16, 16), "int32"), B: T.Buffer(16, "int32")):
    for i, j in T.grid(16, 16):
        with T.sblock("reduce"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                B[vi] = B[vi]
            B[vi] = B[vi] + A[vi, vj]
            if vj < 0:
                B[vi] = 1
            A[vi, vj] = A[vi, vj]


RULES = [
    evaluate_pure_and_side_effects,
    loop_with_no_op_body,
    loop_of_zero_extent,
    loop_of_provably_empty_extent,
    loop_extent_known_from_context,
    loop_with_symbolic_extent_kept,
    if_with_no_op_branches,
    if_with_constant_condition,
    if_likely,
    attr_with_no_op_body,
    attr_debug_skip_region,
    store_of_the_stored_value,
    store_under_a_condition,
    store_under_an_index_condition,
    store_after_an_assert,
    store_with_side_effect_index,
    bind_and_store,
    while_with_no_op_body,
    thread_extent,
    inside_blocks,
]


def test_the_factory_has_tvm_s_parameters(rust_remove_no_op):
    assert inspect.signature(tirx.transform.RemoveNoOp).parameters == {}
    made = rust_remove_no_op()
    assert isinstance(made, tvm.transform.Pass)
    assert made.info.name == "tirx.RemoveNoOp" and made.info.opt_level == 0


@pytest.mark.parametrize("func", RULES, ids=[f.attrs["global_symbol"] if f.attrs and "global_symbol" in f.attrs
                                             else str(i) for i, f in enumerate(RULES)])
def test_each_rule_matches_the_cpp_pass(rust_remove_no_op, func):
    got, _ = _both(rust_remove_no_op, _module(func))
    assert got["main"].body is not None


def test_each_rule_changes_or_keeps_what_cpp_does(rust_remove_no_op):
    # The inputs are not trivial: most change, and the Rust pass changes the same ones.
    changed = 0
    for func in RULES:
        got, expected = _both(rust_remove_no_op, _module(func))
        before = _module(func)
        rust_changed = not tvm_ffi.structural_equal(got, before)
        cpp_changed = not tvm_ffi.structural_equal(expected, before)
        assert rust_changed == cpp_changed, func
        changed += rust_changed
    assert changed >= len(RULES) - 3


def test_literal_conditionals_are_folded_where_cpp_folds_them(rust_remove_no_op):
    # C++ folds an `if_then_else` or `Select` with a literal condition in the expressions its
    # analyzer-aware visitor visits (loop bounds, conditions, bindings, assertions, attribute
    # values, block domains, predicates, iteration values and regions), and leaves those of
    # evaluations and stores alone.
    n, i, vi = (tirx.Var(name, "int32") for name in ("n", "i", "vi"))
    a = tirx.decl_buffer((16,), "int32", name="A")
    yes, no = tirx.const(True, "bool"), tirx.const(False, "bool")
    store = tirx.BufferStore(a, 1, [0])
    call = tirx.call_extern("int32", "f")

    def ite(c, x, y):
        return tirx.call_intrin("int32", "prim.if_then_else", c, x, y)  # unfolded

    def realize(dom=tvm.ir.Range(0, 16), predicate=yes, value=i, region_min=vi):
        region = [tvm.ir.TensorRegion(a, [tvm.ir.Range.from_min_extent(region_min, 1)],
                                      tirx.BufferRegionType())]
        block = s_tir.SBlock([tirx.IterVar(dom, vi, 0)], region, region, "b",
                             tirx.BufferStore(a, vi + 1, [vi]))
        return tirx.For(i, 0, 16, tirx.ForKind.SERIAL,
                        s_tir.SBlockRealize([value], predicate, block))

    bodies = {
        "evaluate": (tirx.Evaluate(ite(no, call, 0)), False),
        "store": (tirx.BufferStore(a, tirx.Select(yes, n, 1), [0]), False),
        "loop bounds": (tirx.For(i, tirx.Select(yes, 1, 0), n, tirx.ForKind.SERIAL, store,
                                 step=tirx.Select(yes, 2, 1)), True),
        "loop extent": (tirx.For(i, 0, ite(yes, 0, n), tirx.ForKind.SERIAL, store), True),
        "condition": (tirx.IfThenElse(tirx.Select(tirx.Select(yes, yes, no), n > 0, n < 0),
                                      store, None), True),
        "binding": (tirx.SeqStmt([tirx.Bind(i, tirx.Select(yes, n, 1)), store]), True),
        "assertion": (tirx.SeqStmt([tirx.AssertStmt(tirx.Select(yes, n > 0, no),
                                                    tvm.ir.StringImm("RuntimeError"), []), store]),
                      True),
        "attribute": (tirx.AttrStmt(n, "pragma_x", tirx.Select(yes, 1, 2), store), True),
        "while": (tirx.While(tirx.Select(yes, n > 0, no), store), True),
        "inside a let": (tirx.For(i, 0, tirx.Let(vi, 3, tirx.Select(yes, n, 1)),
                                  tirx.ForKind.SERIAL, store), True),
        "not literal": (tirx.IfThenElse(tirx.Select(n > 2, n > 0, n < 0), store, None), False),
        "block domain": (realize(dom=tvm.ir.Range.from_min_extent(0, tirx.Select(yes, 16, n))),
                         True),
        "block predicate": (realize(predicate=tirx.Select(yes, i < 8, i < 4)), True),
        "block value": (realize(value=tirx.Select(yes, i, 0)), True),
        "block region": (realize(region_min=tirx.Select(yes, vi, 0)), True),
    }
    for name, (body, folds) in bodies.items():
        mod = _module(tirx.PrimFunc([a, n], body))
        got, _ = _both(rust_remove_no_op, mod)
        assert tvm_ffi.structural_equal(got, mod) != folds, name


def test_nested_sequences_are_flattened(rust_remove_no_op):
    a = tirx.decl_buffer((16,), "int32", name="A")
    nop = tirx.Evaluate(tirx.const(0, "int32"))
    one = tirx.Evaluate(tirx.const(1, "int32"))
    store = tirx.BufferStore(a, tirx.BufferLoad(a, [0]) + 1, [1])
    for body in [
        tirx.SeqStmt([nop, tirx.SeqStmt([store, one])]),
        tirx.SeqStmt([tirx.SeqStmt([nop, nop]), tirx.SeqStmt([one, store])]),
        tirx.SeqStmt([store, tirx.SeqStmt([store, tirx.SeqStmt([store, one])])]),
    ]:
        _both(rust_remove_no_op, _module(tirx.PrimFunc([a], body)))


def test_the_configuration_is_read_from_the_pass_context(rust_remove_no_op):
    timers = tirx.SeqStmt([
        tirx.Evaluate(tirx.call_intrin("int32", "tirx.timer_start_cuda")),
        tirx.Evaluate(tirx.call_extern("int32", "work")),
        tirx.Evaluate(tirx.call_intrin("int32", "tirx.timer_end_cuda")),
    ])
    mod = _module(tirx.PrimFunc([], timers))
    # By default a profiler call is a side effect; `ignore_profiler_call` makes it a no-op.
    default, _ = _both(rust_remove_no_op, mod)
    assert len(default["main"].body.seq) == 3
    with tvm.transform.PassContext(config={"tirx.RemoveNoOp": {"ignore_profiler_call": True}}):
        ignored, _ = _both(rust_remove_no_op, mod)
    assert isinstance(ignored["main"].body, tirx.Evaluate)
    with tvm.transform.PassContext(config={"tirx.RemoveNoOp": {"max_simplification_steps": 0}}):
        _both(rust_remove_no_op, _module(store_of_the_stored_value))


def test_inside_a_sequential_of_cpp_passes(rust_remove_no_op):
    mod = _module(if_with_no_op_branches)
    cpp = tvm.transform.Sequential([tirx.transform.ConvertSSA(), tirx.transform.RemoveNoOp(),
                                    tirx.transform.StmtSimplify(), tirx.transform.RemoveNoOp()])
    mixed = tvm.transform.Sequential([tirx.transform.ConvertSSA(), rust_remove_no_op(),
                                      tirx.transform.StmtSimplify(), rust_remove_no_op()])
    tvm.ir.assert_structural_equal(mixed(mod), cpp(mod))


def test_a_large_generated_function(rust_remove_no_op):
    mod = no_op_heavy_module()
    assert statement_count(mod) > 10_000
    got, _ = _both(rust_remove_no_op, mod)
    assert statement_count(got) < statement_count(mod) // 2


def test_random_functions(rust_remove_no_op):
    # A differential run: 1,000 random functions, each through both passes.
    compared = 0
    for seed in range(1000):
        try:
            mod = random_module(seed)
        except tvm.error.InternalError:
            continue  # TVM refuses the input itself (a sequence that normalises to one statement)
        try:
            expected = tirx.transform.RemoveNoOp()(mod)
        except tvm.TVMError:
            continue  # an input C++ refuses (none so far) is not compared
        tvm.ir.assert_structural_equal(rust_remove_no_op()(mod), expected)
        compared += 1
    assert compared >= 990


# ConvertSSA. Inputs that define a variable twice are not valid TVMScript, so most are built with
# TVM's constructors (as TVM's own tests of the pass do).

@pytest.fixture(scope="module")
def rust_convert_ssa():
    tvm_ffi.load_module(_lib_path("libtvm_passes.so"))
    return tvm_ffi.get_global_func("tvm_passes.ConvertSSA")


def _both_ssa(rust_factory, mod):
    expected = tirx.transform.ConvertSSA()(mod)
    got = rust_factory()(mod)
    tvm.ir.assert_structural_equal(got, expected)
    return got, expected


def _twice(func):
    """A module holding `func` under two names: every variable of the second is a redefinition."""
    return tvm.IRModule({"f": func.with_attr("global_symbol", "f"), "g": func.with_attr("global_symbol", "g")})


@T.prim_func(private=True)
def symbolic_buffer(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 2,), "int32")
    for i in range(n):
        with T.launch_thread("threadIdx.x", 32) as tx:
            A[i] = A[i] + tx
    x = T.Bind(n + 1)
    A[0] = x


def test_convert_ssa_factory_has_tvm_s_parameters(rust_convert_ssa):
    assert inspect.signature(tirx.transform.ConvertSSA).parameters == {}
    made = rust_convert_ssa()
    assert isinstance(made, tvm.transform.Pass)
    assert made.info.name == "tirx.ConvertSSA" and made.info.opt_level == 0


def test_convert_ssa_renames_each_redefinition(rust_convert_ssa):
    v = tirx.Var("v", "int32")
    a = tirx.decl_buffer((16,), "int32", name="A")
    store = lambda value: tirx.BufferStore(a, value, [v])  # noqa: E731
    bodies = {
        "sequential binds": tirx.SeqStmt([tirx.Bind(v, 1), store(v), tirx.Bind(v, 2), store(v + 1)]),
        "sibling loops": tirx.SeqStmt([tirx.For(v, 0, 4, tirx.ForKind.SERIAL, store(v)),
                                       tirx.For(v, 0, 8, tirx.ForKind.SERIAL, store(v * 2))]),
        "nested loops": tirx.For(v, 0, 4, tirx.ForKind.SERIAL,
                                 tirx.SeqStmt([store(v), tirx.For(v, 0, v, tirx.ForKind.SERIAL, store(v))])),
        "let expressions": tirx.SeqStmt([
            tirx.Bind(v, 3),
            tirx.BufferStore(a, tirx.Let(v, v + 1, tirx.Let(v, v * 2, v + 1)), [0]),
            store(v),
        ]),
        "branches": tirx.IfThenElse(a[0] > 0, tirx.SeqStmt([tirx.Bind(v, 1), store(v)]),
                                    tirx.SeqStmt([tirx.Bind(v, 2), store(v)])),
    }
    for name, body in bodies.items():
        func = tirx.PrimFunc([a], body)
        got, _ = _both_ssa(rust_convert_ssa, _module(func))
        assert not tvm_ffi.structural_equal(got["main"], func) or name == "branches", name


def test_convert_ssa_renames_inside_every_operator(rust_convert_ssa):
    # A variable bound twice, used under each kind of expression node after each binding.
    v = tirx.Var("v", "int32")
    a = tirx.decl_buffer((16,), "int32", name="A")
    uses = lambda: [v << 1, v >> 1, v & 3, v | 3, v ^ 3, ~v, tirx.Not(v > 0),  # noqa: E731
                    tirx.Cast("int64", v), tirx.Select(v > 0, v, 1), tirx.max(v, 2) % 3,
                    tirx.Let(v, v + 1, v * 2)]
    body = tirx.SeqStmt([tirx.Bind(v, 1), *map(tirx.Evaluate, uses()),
                         tirx.Bind(v, 2), *map(tirx.Evaluate, uses())])
    got, _ = _both_ssa(rust_convert_ssa, _module(tirx.PrimFunc([a], body)))
    second = got["main"].body.seq[len(uses()) + 1]
    assert not second.var.same_as(v)


def test_convert_ssa_across_functions(rust_convert_ssa):
    # Parameters, a buffer whose shape uses a parameter, a thread index and a binding, all
    # defined again by the second function.
    got, _ = _both_ssa(rust_convert_ssa, _twice(symbolic_buffer))
    f, g = got["f"], got["g"]
    assert not f.params[1].same_as(g.params[1])


def test_convert_ssa_rebuilds_a_buffer_whose_shape_var_is_renamed(rust_convert_ssa):
    n = tirx.Var("n", "int32")
    a = tirx.decl_buffer((tirx.max(n, 1) * 4,), "float32", name="A")
    func = tirx.PrimFunc([a], tirx.Evaluate(tirx.BufferLoad(a, [0])))
    _both_ssa(rust_convert_ssa, _twice(func))
    _both_ssa(rust_convert_ssa, _twice(allocated_buffer))


def test_convert_ssa_rebuilds_a_buffer_only_where_its_shape_var_is_renamed(rust_convert_ssa):
    # `A` is allocated once and its shape's variable bound again between its uses: only the
    # later uses see a rebuilt buffer, which nothing defines (so both passes' outputs hold free
    # variables, compared by position). `B`'s shape holds a `Let`, which each visit of the
    # buffer's type defines again, remapped or not; `C`'s constant shape never changes.
    n, x = tirx.Var("n", "int32"), tirx.Var("x", "int32")
    a = tirx.decl_buffer((n,), "int32", name="A")
    b = tirx.decl_buffer((tirx.Let(x, 2, x * 4),), "int32", name="B")
    c = tirx.decl_buffer((4,), "int32", name="C")
    uses = lambda: tirx.SeqStmt([tirx.BufferStore(a, n, [0]),  # noqa: E731
                                 tirx.BufferStore(c, tirx.BufferLoad(a, [0]), [1])])
    body = tirx.SeqStmt([tirx.Bind(n, 4), *map(tirx.AllocBuffer, (a, b, c)), uses(),
                         tirx.BufferStore(b, 1, [0]), tirx.Bind(n, 8), uses(),
                         tirx.For(n, 0, 2, tirx.ForKind.SERIAL, uses()), uses()])
    mod = _module(tirx.PrimFunc([], body))
    got = rust_convert_ssa()(mod)
    tvm.ir.assert_structural_equal(got, tirx.transform.ConvertSSA()(mod), map_free_vars=True)
    seq = got["main"].body.seq
    assert seq[4].buffer.same_as(a) and not seq[8].buffer.same_as(a)
    assert all(s.buffer.same_as(c) for s in (seq[5], seq[9]))


def test_convert_ssa_plain_use_of_a_renamed_allocation(rust_convert_ssa):
    # In the second function the allocated (or declared) buffer is renamed and rebuilt (its
    # shape's variable is renamed too): stores use the rebuilt buffer, and a plain use of the
    # buffer's variable (a call argument) the renamed variable, as TVM 0.27's C++ pass leaves it.
    n = tirx.Var("n", "int32")
    data = tirx.Var("data", tvm.ir.PointerType(tvm.ir.PrimType("int32")))
    a = tirx.decl_buffer((n,), "int32", name="A")
    for define in (tirx.AllocBuffer(a), tirx.DeclBuffer(a, data=data)):
        body = tirx.SeqStmt([define, tirx.BufferStore(a, 1, [0]),
                             tirx.Evaluate(tirx.call_extern("int32", "use", a))])
        mod = _twice(tirx.PrimFunc([n, data], body))
        got = rust_convert_ssa()(mod)
        tvm.ir.assert_structural_equal(got, tirx.transform.ConvertSSA()(mod), map_free_vars=True)
        seq = got["g"].body.seq
        assert seq[1].buffer.same_as(seq[0].buffer)
        assert not seq[2].value.args[1].same_as(seq[0].buffer)


@T.prim_func(private=True)
def allocated_buffer(n: T.int32):
    A = T.alloc_buffer((n + 1,), "int32")
    for i in range(n):
        A[i] = i


def test_convert_ssa_keeps_ssa_input(rust_convert_ssa):
    mod = _module(if_with_no_op_branches)
    got, _ = _both_ssa(rust_convert_ssa, mod)
    assert got.same_as(mod)


def test_convert_ssa_random_functions(rust_convert_ssa):
    compared = 0
    for seed in range(500):
        try:
            func = random_module(seed, reuse_vars=True)["main"]
        except tvm.error.InternalError:
            continue
        _both_ssa(rust_convert_ssa, _twice(func))
        compared += 1
    assert compared >= 490


@T.prim_func(private=True, s_tir=True)
def ssa_blocks(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 16), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i, k in T.grid(n, 16):
        with T.sblock("sum"):
            vi = T.axis.spatial((2, n), i)
            vk = T.axis.reduce(16, k)
            T.where(i >= 2)
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i in range(n):
        with T.sblock("copy"):
            vi = T.axis.spatial(n, i)
            T.reads(A[vi, 0:4])
            T.writes(B[vi])
            C = T.alloc_buffer((4,), "float32")
            S = T.match_buffer(A[vi, 0:4], (4,), "float32")
            C[0] = S[0]
            B[vi] = C[0]


@T.prim_func(private=True, s_tir=True)
def ssa_nested_blocks(a: T.handle, b: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 32), "float32")
    B = T.match_buffer(b, (32, 32), "float32")
    C = T.match_buffer(c, (n, 32), "float32")
    A_shared = T.alloc_buffer((n, 32), "float32", scope="shared")
    for i, k in T.grid(n, 32):
        with T.sblock("cache"):
            vi, vk = T.axis.remap("SS", [i, k])
            A_shared[vi, vk] = A[vi, vk]
    for i0, j0 in T.grid(T.ceildiv(n, 4), 8):
        with T.sblock("outer"):
            vi0, vj0 = T.axis.remap("SS", [i0, j0])
            T.reads(A_shared[vi0 * 4:vi0 * 4 + 4, 0:32], B[0:32, vj0 * 4:vj0 * 4 + 4])
            T.writes(C[vi0 * 4:vi0 * 4 + 4, vj0 * 4:vj0 * 4 + 4])
            for i1, j1, k in T.grid(4, 4, 32):
                with T.sblock("update"):
                    vi = T.axis.spatial(n, vi0 * 4 + i1)
                    vj = T.axis.spatial(32, vj0 * 4 + j1)
                    vk = T.axis.reduce(32, k)
                    T.where(vi0 * 4 + i1 < n)
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    x = T.Bind(A_shared[vi, vk] * B[vk, vj])
                    C[vi, vj] = C[vi, vj] + x


def test_convert_ssa_inside_blocks(rust_convert_ssa):
    # As TVM 0.27's C++ pass: a block opens no scope and defines nothing (its iteration
    # variables, allocated and matched buffers stay); its domains, regions, `init` and body are
    # visited like any other statement's expressions.
    got, _ = _both_ssa(rust_convert_ssa, _module(ssa_blocks))
    assert got["main"].same_as(ssa_blocks)
    # Nested blocks over an allocation of the root block, in one to three functions.
    for names in ("f", "fg", "fgh"):
        mod = tvm.IRModule({k: ssa_nested_blocks.with_attr("global_symbol", k) for k in names})
        _both_ssa(rust_convert_ssa, mod)
    got, _ = _both_ssa(rust_convert_ssa, _twice(ssa_blocks))
    # (TVMScript wraps the body in a root block.)
    f, g = (got[name].body.block.body.seq[0].body.body.block for name in "fg")
    assert not f.iter_vars[0].dom.extent.same_as(g.iter_vars[0].dom.extent)
    assert not f.reads[0].source.same_as(g.reads[0].source)
    # The same block twice in one function, a binding inside a block that outlives it, and a
    # region over a buffer whose shape variable is bound again (the region keeps the buffer).
    realize = ssa_blocks.body.block.body.seq[0].body.body
    block = realize.block
    x, n = tirx.Var("x", "int32"), ssa_blocks.params[2]
    with_bind = s_tir.SBlockRealize(realize.iter_values, realize.predicate, s_tir.SBlock(
        block.iter_vars, block.reads, block.writes, block.name_hint,
        tirx.SeqStmt([tirx.Bind(x, 3), block.body]), block.init))
    bodies = [
        tirx.SeqStmt([realize, realize]),
        tirx.SeqStmt([tirx.Bind(x, 1), with_bind, tirx.Evaluate(x + 1)]),
        tirx.SeqStmt([tirx.Bind(n, 5), realize]),
    ]
    for body in bodies:
        mod = _module(tirx.PrimFunc(list(ssa_blocks.params), body))
        got = rust_convert_ssa()(mod)
        tvm.ir.assert_structural_equal(got, tirx.transform.ConvertSSA()(mod), map_free_vars=True)


def test_rust_passes_in_a_sequential(rust_remove_no_op, rust_convert_ssa):
    mod = _twice(symbolic_buffer)
    cpp = tvm.transform.Sequential([tirx.transform.ConvertSSA(), tirx.transform.StmtSimplify(),
                                    tirx.transform.RemoveNoOp()])
    mixed = tvm.transform.Sequential([rust_convert_ssa(), tirx.transform.StmtSimplify(),
                                      rust_remove_no_op()])
    tvm.ir.assert_structural_equal(mixed(mod), cpp(mod))


# DeadCodeElimination, a Relax module pass. Each input goes through the Rust pass and TVM's
# `relax.transform.DeadCodeElimination` with the same entry functions.

@pytest.fixture(scope="module")
def rust_dce():
    tvm_ffi.load_module(_lib_path("libtvm_passes.so"))
    return tvm_ffi.get_global_func("tvm_passes.DeadCodeElimination")


def _both_dce(rust_factory, mod, entry_functions=None):
    expected = relax.transform.DeadCodeElimination(entry_functions)(mod)
    got = rust_factory(entry_functions)(mod)
    tvm.ir.assert_structural_equal(got, expected)
    return got, expected


def _names(mod):
    return sorted(gvar.name_hint for gvar in mod.get_global_vars())


@I.ir_module
class DeadChainsInDataflow:
    @R.function
    def main(x: R.Tensor((4, 4), "float32"), y: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
        with R.dataflow():
            a = R.add(x, y)
            chain0 = R.multiply(a, a)
            chain1 = R.nn.relu(chain0)
            pair = (chain1, a)
            first = pair[0]
            b = R.subtract(a, x)
            unused_output = R.add(b, first)
            R.output(b, unused_output)
        return b


@I.ir_module
class BlocksLeftEmpty:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        a = R.add(x, x)
        with R.dataflow():
            d = R.multiply(x, x)
            e = R.exp(d)
            R.output(e)
        dead = R.negative(a)
        b = R.add(a, x)
        with R.dataflow():
            f = R.multiply(b, b)
            R.output(f)
        return b


@I.ir_module
class ImpureCallsKept:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        printed = R.print(x, format="{}")
        packed = R.call_packed("test.impure", x, ty_args=R.Tensor((4,), "float32"))
        pure_packed = R.call_pure_packed("test.pure", x, ty_args=R.Tensor((4,), "float32"))
        arith = R.add(x, x)
        used_by_impure = R.multiply(x, x)
        printed_again = R.print(used_by_impure, format="{}")
        cls = ImpureCallsKept
        from_impure = cls.impure_helper(x)
        from_pure = cls.pure_helper(x)
        return x

    @R.function(pure=False, private=True)
    def impure_helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        printed = R.print(x, format="{}")
        return x

    @R.function(private=True)
    def pure_helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.add(x, x)
        return y


@I.ir_module
class UnusedFunctions:
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = UnusedFunctions
        with R.dataflow():
            a = cls.used_helper(x)
            b = cls.called_from_dead_code(x)
            R.output(a)
        return a

    @R.function(private=True)
    def used_helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = UnusedFunctions
        y = cls.used_indirectly(x)
        return y

    @R.function(private=True)
    def used_indirectly(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function(private=True)
    def called_from_dead_code(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = UnusedFunctions
        y = cls.only_from_dead_code(x)
        return y

    @R.function(private=True)
    def only_from_dead_code(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function(private=True)
    def never_called(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = UnusedFunctions
        y = cls.used_indirectly(x)
        return y

    @R.function
    def exported_but_unused(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        dead = R.add(x, x)
        return x


@I.ir_module
class PrivateOnly:
    @R.function(private=True)
    def f(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = PrivateOnly
        dead = cls.h(x)
        y = cls.g(x)
        return y

    @R.function(private=True)
    def g(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        dead = R.add(x, x)
        return x

    @R.function(private=True)
    def h(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x


@I.ir_module
class NestedFunctionsAndBranches:
    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")) -> R.Tensor((4,), "float32"):
        @R.function
        def local(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            dead = R.add(y, y)
            z = R.multiply(y, y)
            return z

        @R.function
        def unused_local(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return y

        captured = R.add(x, x)

        @R.function
        def closure(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            z = R.add(y, captured)
            return z

        if c:
            t = R.add(x, x)
            dead_t = R.multiply(t, t)
            r = local(t)
        else:
            dead_f = R.exp(x)
            r = R.subtract(x, x)
        if c:
            unused_branch_value = R.add(x, x)
            u = unused_branch_value
        else:
            u = x
        return r


@I.ir_module
class CallTirToPrimFuncs:
    @T.prim_func(private=True)
    def used_prim(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] + T.float32(1)

    @T.prim_func(private=True)
    def dead_prim(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] * T.float32(2)

    @T.prim_func(private=True)
    def never_called_prim(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i]

    @T.prim_func
    def exported_prim(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] - T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = CallTirToPrimFuncs
        with R.dataflow():
            a = R.call_tir(cls.used_prim, (x,), R.Tensor((4,), "float32"))
            b = R.call_tir(cls.dead_prim, (a,), R.Tensor((4,), "float32"))
            R.output(a)
        return a


@I.ir_module
class MatchCastAndShapes:
    @R.function
    def main(x: R.Tensor(("n",), "float32"), s: R.Shape(["m"])) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        m = T.int64()
        y = R.match_cast(x, R.Tensor((n,), "float32"))
        dead = R.add(y, y)
        shape = R.shape_of(x)
        dead_shape = R.shape([m, n])
        z = R.add(x, x)
        w = R.match_cast(z, R.Tensor((n,), "float32"))
        return x


DCE_INPUTS = [DeadChainsInDataflow, BlocksLeftEmpty, ImpureCallsKept, UnusedFunctions, PrivateOnly,
              NestedFunctionsAndBranches, CallTirToPrimFuncs, MatchCastAndShapes]


def test_dce_factory_has_tvm_s_parameters(rust_dce):
    assert list(inspect.signature(relax.transform.DeadCodeElimination).parameters) == ["entry_functions"]
    for made in [rust_dce(), rust_dce(None), rust_dce(["main"])]:
        assert isinstance(made, tvm.transform.Pass)
        assert made.info.name == "DeadCodeElimination" and made.info.opt_level == 1


@pytest.mark.parametrize("mod", DCE_INPUTS, ids=[mod.__name__ for mod in DCE_INPUTS])
def test_dce_matches_the_cpp_pass(rust_dce, mod):
    got, _ = _both_dce(rust_dce, mod)
    assert not tvm_ffi.structural_equal(got, mod)


def test_dce_removes_bindings_and_functions(rust_dce):
    got, _ = _both_dce(rust_dce, DeadChainsInDataflow)
    assert [b.var.name for b in got["main"].body.blocks[0].bindings] == ["a", "b"]
    got, _ = _both_dce(rust_dce, BlocksLeftEmpty)
    assert len(got["main"].body.blocks) == 1  # the two plain blocks around the emptied one merge
    got, _ = _both_dce(rust_dce, ImpureCallsKept)
    kept = [b.var.name for b in got["main"].body.blocks[0].bindings]
    assert kept == ["printed", "packed", "used_by_impure", "printed_again", "from_impure"]
    got, _ = _both_dce(rust_dce, UnusedFunctions)
    assert _names(got) == ["exported_but_unused", "main", "used_helper", "used_indirectly"]
    got, _ = _both_dce(rust_dce, CallTirToPrimFuncs)
    assert _names(got) == ["exported_prim", "main", "used_prim"]


def test_dce_entry_functions(rust_dce):
    # Private functions only: without entries every one is removed.
    got, _ = _both_dce(rust_dce, PrivateOnly)
    assert _names(got) == []
    got, _ = _both_dce(rust_dce, PrivateOnly, ["f"])
    assert _names(got) == ["f", "g"]
    for entries in [["g"], ["h", "g"], ["f", "f"], []]:
        _both_dce(rust_dce, PrivateOnly, entries)
    _both_dce(rust_dce, UnusedFunctions, ["never_called", "main"])
    # An entry that is not in the module: both refuse, naming it.
    with pytest.raises(ValueError, match="missing"):
        relax.transform.DeadCodeElimination(["missing"])(PrivateOnly)
    with pytest.raises(ValueError, match="missing"):
        rust_dce(["missing"])(PrivateOnly)


@I.ir_module
class PrimFuncCalls:
    @T.prim_func(private=True)
    def leaf(a: T.handle):
        T.evaluate(0)

    @T.prim_func(private=True)
    def unused_leaf(a: T.handle):
        T.evaluate(0)

    @T.prim_func
    def caller(a: T.handle):
        T.evaluate(0)


def test_dce_follows_calls_between_prim_funcs(rust_dce):
    # `caller` (exported) calls the private `leaf` through its `GlobalVar`: `leaf` is kept.
    mod = PrimFuncCalls
    caller = mod["caller"]
    call = tvm.ir.Call(mod.get_global_var("leaf"), [caller.params[0]], ret_ty="int32")
    mod = tvm.IRModule({gvar: func for gvar, func in mod.functions.items()})
    mod["caller"] = caller.with_body(tirx.Evaluate(call))
    got, _ = _both_dce(rust_dce, mod)
    assert _names(got) == ["caller", "leaf"]


def test_dce_keeps_functions_when_a_callee_is_missing(rust_dce):
    # `main` calls `used_helper`, which this module lacks: C++ removes no function then.
    mod = tvm.IRModule({gvar: func for gvar, func in UnusedFunctions.functions.items()
                        if gvar.name_hint != "used_helper"})
    got, _ = _both_dce(rust_dce, mod)
    assert len(got.functions) == len(mod.functions)


def test_dce_keeps_extern_functions(rust_dce):
    bb = relax.BlockBuilder()
    bb.add_func(relax.extern("an_extern_symbol"), "an_extern")
    mod = bb.get()
    mod["main"] = DeadChainsInDataflow["main"]
    got, _ = _both_dce(rust_dce, mod)
    assert "an_extern" in _names(got)


def test_dce_keeps_a_module_without_dead_code(rust_dce):
    mod = _both_dce(rust_dce, DeadChainsInDataflow)[0]
    got, _ = _both_dce(rust_dce, mod)
    assert got.same_as(mod)


def test_dce_normalizes_blocks_as_tvm_does(rust_dce):
    # Functions built with constructors, not normalized: neighbouring blocks of one kind, empty
    # blocks, a binding to a `SeqExpr`, `SeqExpr`s without a type. C++ rebuilds every function
    # through its normalizing `BlockBuilder`; the Rust pass gives the same result.
    ty = relax.TensorType((4,), "float32")
    x = relax.Var("x", ty)
    bb = relax.BlockBuilder()
    add = bb.normalize(relax.op.add(x, x))
    a, b, v, inner = (relax.Var(name, ty) for name in "abvi")
    d = relax.DataflowVar("d", ty)
    dead = relax.Var("dead", ty)
    bodies = [
        relax.SeqExpr([relax.BindingBlock([relax.VarBinding(a, add)]),
                       relax.BindingBlock([relax.VarBinding(b, bb.normalize(relax.op.add(a, x)))])], b),
        relax.SeqExpr([relax.BindingBlock([]), relax.BindingBlock([relax.VarBinding(a, add)]),
                       relax.DataflowBlock([])], a),
        relax.SeqExpr([relax.DataflowBlock([relax.VarBinding(a, add)]),
                       relax.DataflowBlock([relax.VarBinding(d, bb.normalize(relax.op.add(x, x)))]),
                       relax.BindingBlock([relax.VarBinding(b, bb.normalize(relax.op.add(a, x)))])], b),
        relax.SeqExpr([relax.BindingBlock([relax.VarBinding(dead, add)]), relax.DataflowBlock(
            [relax.VarBinding(d, add)]), relax.BindingBlock([relax.VarBinding(a, add)])], a),
        relax.SeqExpr([relax.BindingBlock([relax.VarBinding(v, bb.normalize(relax.SeqExpr(
            [relax.BindingBlock([relax.VarBinding(inner, add)])], inner)))])], v),
    ]
    for body in bodies:
        func = relax.Function([x], body, ty, True).with_attr("global_symbol", "main")
        _both_dce(rust_dce, tvm.IRModule({"main": func}))


def test_dce_inside_a_sequential_of_cpp_passes(rust_dce):
    def pipeline(dce, entry):
        return tvm.transform.Sequential([relax.transform.ConvertToDataflow(), dce(),
                                         relax.transform.CanonicalizeBindings(), dce(),
                                         relax.transform.FoldConstant(), dce([entry])])

    for mod, entry in [(NestedFunctionsAndBranches, "main"), (UnusedFunctions, "used_helper"),
                       (BlocksLeftEmpty, "main"), (dead_code_module(40, seed=1), "f0")]:
        expected = pipeline(relax.transform.DeadCodeElimination, entry)(mod)
        tvm.ir.assert_structural_equal(pipeline(rust_dce, entry)(mod), expected)


def test_dce_a_large_generated_module(rust_dce):
    mod = dead_code_module()
    assert len(mod.functions) == 330 and binding_count(mod) > 4000
    got, _ = _both_dce(rust_dce, mod)
    assert len(got.functions) < len(mod.functions)
    assert binding_count(got) < binding_count(mod) // 2


def test_dce_random_modules(rust_dce):
    # A differential run: generated modules of different shapes, with and without entries.
    for seed in range(30):
        mod = dead_code_module(functions=4 + seed, bindings=2 + seed % 7, seed=seed)
        entries = None if seed % 3 else [f"f{seed % 4 + 1}"]
        _both_dce(rust_dce, mod, entries)


def test_dce_random_relax_functions(rust_dce):
    # A differential run over random TVMScript: branches, local functions, dataflow blocks,
    # impure calls and helpers; nearly every module changes.
    changed = 0
    for seed in range(200):
        mod = random_relax_module(seed)
        got, _ = _both_dce(rust_dce, mod, None if seed % 3 else ["main"])
        changed += not tvm_ffi.structural_equal(got, mod)
    assert changed >= 180
