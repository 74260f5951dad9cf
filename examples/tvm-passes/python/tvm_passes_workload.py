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


def random_module(seed: int, reuse_vars: bool = False) -> tvm.IRModule:
    """A random `PrimFunc` mixing what `RemoveNoOp` looks at: loops of constant, symbolic and
    loop-dependent extents, conditions (constant, pure, reading a buffer, `likely`, calls),
    attributes, pure and impure evaluations and bindings, stores of the stored value, `while`
    loops and nested sequences. The same seed gives the same function. With `reuse_vars`, loops
    and bindings draw their variables from a pool of three, so that variables are defined
    more than once (not SSA: what `ConvertSSA` fixes)."""
    import random

    rng = random.Random(seed)
    pool = [tirx.Var(f"v{i}", "int32") for i in range(3)]

    def new_var(prefix, depth):
        if reuse_vars:
            return rng.choice(pool)
        return tirx.Var(f"{prefix}{depth}_{rng.randrange(1000)}", "int32")

    n = tirx.Var("n", "int32")
    a = tirx.decl_buffer((64,), "int32", name="A")
    b = tirx.decl_buffer((64,), "int32", name="B")
    scope = [n]

    def index():
        return rng.choice([tirx.const(rng.randrange(8), "int32"), rng.choice(scope), rng.choice(scope) + 1])

    def expr(depth=0):
        kind = rng.randrange(8 if depth < 2 else 3)
        if kind == 0:
            return tirx.const(rng.randrange(-3, 5), "int32")
        if kind == 1:
            return rng.choice(scope)
        if kind == 2:
            return rng.choice(scope) + rng.randrange(-2, 3)
        if kind == 3:
            return tirx.BufferLoad(rng.choice([a, b]), [index()])
        if kind == 4:
            return expr(depth + 1) * expr(depth + 1)
        if kind == 5:
            return tirx.call_extern("int32", "f", expr(depth + 1))
        if kind == 6:
            return tirx.call_pure_extern("int32", "g", expr(depth + 1))
        return expr(depth + 1) - expr(depth + 1)

    def cond():
        return rng.choice([
            lambda: tirx.const(rng.randrange(2), "bool"),
            lambda: rng.choice(scope) < rng.randrange(-2, 10),
            lambda: tirx.BufferLoad(a, [index()]) == 5,
            lambda: tirx.likely(rng.choice(scope) < 4),
            lambda: rng.choice(scope) == rng.randrange(4),
            lambda: tirx.call_extern("bool", "p"),
        ])()

    def stmt(depth=0):
        kind = rng.randrange(11 if depth < 4 else 5)
        if kind == 0:
            return tirx.Evaluate(tirx.const(0, "int32"))
        if kind == 1:
            return tirx.Evaluate(expr())
        if kind in (2, 4):
            buf, at = rng.choice([a, b]), index()
            value = tirx.BufferLoad(buf, [at])
            return tirx.BufferStore(buf, value + rng.choice([0, 1]) if kind == 4 else value, [at])
        if kind == 3:
            return tirx.BufferStore(rng.choice([a, b]), expr(), [index()])
        if kind == 5:
            var = new_var("i", depth)
            extent = rng.choice([tirx.const(rng.randrange(-1, 5), "int32"), n, rng.choice(scope) - 3,
                                 rng.choice(scope) * rng.choice(scope) - 50])
            scope.append(var)
            body = stmt(depth + 1)
            scope.pop()
            return tirx.For(var, 0, extent, tirx.ForKind.SERIAL, body)
        if kind == 6:
            return tirx.IfThenElse(cond(), stmt(depth + 1), stmt(depth + 1) if rng.randrange(2) else None)
        if kind == 7:
            key = rng.choice(["pragma_note", "pragma_debug_skip_region"])
            value = rng.choice([tirx.const(1, "int32"), tirx.call_extern("int32", "h")])
            return tirx.AttrStmt(tirx.const(0, "int32"), key, value, stmt(depth + 1))
        if kind == 8:
            return tirx.SeqStmt([stmt(depth + 1) for _ in range(rng.randrange(2, 5))])
        if kind == 9:
            var = new_var("x", depth)
            bind = tirx.Bind(var, expr())
            scope.append(var)
            return tirx.SeqStmt([bind, stmt(depth + 1)])
        return tirx.While(cond(), stmt(depth + 1))

    body = tirx.SeqStmt([stmt() for _ in range(4)])
    return tvm.IRModule({"main": tirx.PrimFunc([a, b, n], body)})


def dead_code_module(functions: int = 300, bindings: int = 16, seed: int = 0) -> tvm.IRModule:
    """A Relax module of `functions` functions full of what `DeadCodeElimination` removes: each
    a dataflow block of `bindings` random bindings (`add`, `multiply`, a `call_tir` of one of
    the module's `PrimFunc`s, a call of a Relax function built before it) of which only those
    its result needs are live; one function in four has a `global_symbol` (an entry), the others
    are private, reached only through live calls or not at all (then removed, with the
    `PrimFunc`s only they call). The same seed gives the same module."""
    import random

    from tvm import relax
    from tvm.script import tirx as T

    def prim_func(scale: float):
        @T.prim_func(private=True)
        def scaled(a: T.Buffer((16, 16), "float32"), b: T.Buffer((16, 16), "float32"),
                   c: T.Buffer((16, 16), "float32")):
            for i, j in T.grid(16, 16):
                c[i, j] = a[i, j] * T.float32(scale) + b[i, j]

        return scaled

    rng = random.Random(seed)
    bb = relax.BlockBuilder()
    ty = relax.TensorType((16, 16), "float32")
    prims = [bb.add_func(prim_func(float(k + 1)), f"scaled{k}") for k in range(max(functions // 10, 1))]
    relax_gvars = []
    for i in reversed(range(functions)):
        x, y = relax.Var("x", ty), relax.Var("y", ty)
        name = f"f{i}"
        with bb.function(name, [x, y], private=i % 4 != 0):
            with bb.dataflow():
                values = [x, y]
                for _ in range(bindings):
                    a, b = rng.choice(values), rng.choice(values)
                    kind = rng.randrange(5)
                    if kind == 0:
                        value = relax.op.add(a, b)
                    elif kind == 1:
                        value = relax.op.multiply(a, b)
                    elif kind == 2 and relax_gvars:
                        value = relax.Call(rng.choice(relax_gvars[-20:]), [a, b])
                    else:
                        value = relax.call_tir(rng.choice(prims), (a, b), ty)
                    values.append(bb.emit(value))
                # The result needs the last binding and one other: the rest are dead.
                out = bb.emit_output(relax.op.add(values[-1], values[2 + rng.randrange(bindings)]))
            bb.emit_func_output(out)
        relax_gvars.append(bb.get().get_global_var(name))
    return bb.finalize()


def binding_count(mod: tvm.IRModule) -> int:
    """How many bindings the module's Relax functions hold (outermost blocks)."""
    from tvm import relax

    return sum(len(block.bindings) for func in mod.functions.values() if isinstance(func, relax.Function)
               for block in func.body.blocks)


def random_relax_module(seed: int) -> tvm.IRModule:
    """A random Relax module (parsed from generated TVMScript) mixing what `DeadCodeElimination`
    looks at: an impure `main` of pure and impure bindings (`R.print`), `match_cast`s, tuples,
    branches, dataflow blocks with some of their bindings output, local functions (some
    capturing an outer variable, some called) and calls of pure and impure helpers, private or
    exported. The same seed gives the same module."""
    import random

    from tvm.script import from_source

    rng = random.Random(seed)
    tensor = 'R.Tensor((4,), "float32")'
    lines = ["@I.ir_module", "class Module:"]
    helpers = []
    for h in range(rng.randrange(4)):
        impure, private = rng.random() < 0.4, rng.random() < 0.7
        flags = ", ".join(flag for flag, on in [("pure=False", impure), ("private=True", private)] if on)
        lines += [f"    @R.function({flags})", f"    def h{h}(x: {tensor}) -> {tensor}:"]
        if impure:
            lines.append('        p = R.print(x, format="{}")')
        lines += ["        d = R.add(x, x)", "        return x"]
        helpers.append((f"h{h}", impure))
    count = [0]

    def fresh():
        count[0] += 1
        return f"v{count[0]}"

    def block(indent, values, depth, in_dataflow=False, pure=False):
        pad = " " * indent
        out = []
        for _ in range(rng.randrange(1, 6)):
            kind = rng.randrange(9 if depth < 2 and not in_dataflow else 3)
            a, b, v = rng.choice(values), rng.choice(values), fresh()
            if kind == 0:
                out.append(f"{pad}{v} = R.add({a}, {b})")
                values.append(v)
            elif kind == 1:
                out.append(f"{pad}{v} = R.multiply({a}, {b})")
                values.append(v)
            elif kind == 2:
                out.append(f"{pad}{v} = R.match_cast({a}, {tensor})")
                values.append(v)
            elif kind == 3 and not pure:
                out.append(f'{pad}{v} = R.print({a}, format="{{}}")')
            elif kind == 4:
                out.append(f"{pad}if c:")
                branch = list(values)
                out += block(indent + 4, branch, depth + 1, pure=pure)
                out.append(f"{pad}    {v} = {rng.choice(branch)}")
                out.append(f"{pad}else:")
                branch = list(values)
                out += block(indent + 4, branch, depth + 1, pure=pure)
                out.append(f"{pad}    {v} = {rng.choice(branch)}")
                values.append(v)
            elif kind == 5:
                out += [f"{pad}@R.function", f"{pad}def local_{v}(y: {tensor}) -> {tensor}:"]
                inner = ["y"] + ([rng.choice(values)] if rng.random() < 0.5 else [])
                out += block(indent + 4, inner, depth + 1, pure=True)
                out.append(f"{pad}    return {rng.choice(inner)}")
                if rng.random() < 0.6:
                    out.append(f"{pad}{v} = local_{v}({a})")
                    values.append(v)
            elif kind == 6 and helpers:
                name, impure = rng.choice(helpers)
                if not (impure and pure):
                    out.append(f"{pad}{v} = cls.{name}({a})")
                    values.append(v)
            elif kind == 7:
                out.append(f"{pad}with R.dataflow():")
                inner = list(values)
                out += block(indent + 4, inner, depth + 1, in_dataflow=True, pure=True)
                outputs = [x for x in inner[len(values):] if rng.random() < 0.5] or inner[len(values):][-1:]
                if not outputs:
                    out.append(f"{pad}    {v} = R.add({a}, {b})")
                    outputs = [v]
                out.append(f"{pad}    R.output({', '.join(outputs)})")
                values.extend(outputs)
            else:
                item = fresh()
                out += [f"{pad}{v} = ({a}, {b})", f"{pad}{item} = {v}[{rng.randrange(2)}]"]
                values.append(item)
        return out

    lines += ["    @R.function(pure=False)",
              f'    def main(x: {tensor}, c: R.Tensor((), "bool")) -> {tensor}:',
              "        cls = Module"]
    values = ["x"]
    lines += block(8, values, 0)
    lines.append(f"        return {rng.choice(values)}")
    return from_source("\n".join(lines))
