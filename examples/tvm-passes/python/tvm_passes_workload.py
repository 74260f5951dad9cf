"""Large generated TIR inputs for the Rust passes of `examples/tvm-passes`, shared by
`tests/python/test_tvm_passes.py` and `benches/tvm_passes.py`."""
import tvm
from tvm import tirx


def no_op_heavy_module(blocks: int = 160) -> tvm.IRModule:
    """A `PrimFunc` of `blocks` loop nests (two loops each) whose bodies mix statements
    `RemoveNoOp` removes (stores of a value into itself, pure `Evaluate`s, loops of extent 0,
    empty branches and attributes) with statements it keeps: about 60 statements a block,
    10^4 in all for the default 160 blocks."""
    n = tirx.Var("n", "int32")
    a = tirx.decl_buffer((4096,), "int32", name="A")
    b = tirx.decl_buffer((4096,), "int32", name="B")
    zero = tirx.Evaluate(tirx.const(0, "int32"))
    extern = tirx.call_extern("int32", "side_effect")
    seq = []
    for blk in range(blocks):
        i = tirx.Var(f"i{blk}", "int32")
        j = tirx.Var(f"j{blk}", "int32")
        k = tirx.Var(f"k{blk}", "int32")
        idx = i * 8 + j
        inner = []
        for s in range(6):
            at = idx + s
            inner += [
                tirx.BufferStore(a, tirx.BufferLoad(a, [at]), [at]),  # no-op: A[x] = A[x]
                tirx.BufferStore(b, tirx.BufferLoad(a, [at]) + s, [at]),  # kept
                zero,  # no-op
                tirx.Evaluate(n + s),  # no side effect: removed
                tirx.IfThenElse(i < 4, zero, tirx.BufferStore(b, tirx.const(s, "int32"), [at])),
                tirx.For(k, 0, 0, tirx.ForKind.SERIAL, tirx.BufferStore(a, k, [k])),  # extent 0
                tirx.AttrStmt(tirx.const(0, "int32"), "pragma_note", tirx.const(1, "int32"), zero),
                tirx.IfThenElse(j < 8, tirx.BufferStore(b, j, [at]), None),
            ]
        inner.append(tirx.Evaluate(extern))  # kept: a side effect
        body = tirx.SeqStmt(inner)
        seq.append(tirx.For(i, 0, 8, tirx.ForKind.SERIAL, tirx.For(j, 0, 8, tirx.ForKind.SERIAL, body)))
    func = tirx.PrimFunc([a, b, n], tirx.SeqStmt(seq))
    return tvm.IRModule({"main": func})


def statement_count(mod: tvm.IRModule) -> int:
    """How many statements the module's functions hold."""

    def count(stmt) -> int:
        if stmt is None:
            return 0
        if isinstance(stmt, tirx.SeqStmt):
            return 1 + sum(count(s) for s in stmt.seq)
        if isinstance(stmt, tirx.IfThenElse):
            return 1 + count(stmt.then_case) + count(stmt.else_case)
        if isinstance(stmt, (tirx.For, tirx.AttrStmt, tirx.While)):
            return 1 + count(stmt.body)
        return 1

    return sum(count(func.body) for func in mod.functions.values())
