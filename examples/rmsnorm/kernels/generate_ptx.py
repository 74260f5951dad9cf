"""Writes rmsnorm.ptx: FlashInfer's RMSNorm and fused add + RMSNorm for float32, float16 and
bfloat16, as hand-written PTX (so that building the library needs no CUDA toolkit; the driver
compiles the PTX for the GPU at hand when the module is loaded).

    python3 examples/rmsnorm/kernels/generate_ptx.py   # rewrites rmsnorm{,_pdl}.ptx next to it

rmsnorm_pdl.ptx is the same kernels for sm_90+, each starting with `griddepcontrol.wait` so that
it may be launched with programmatic dependent launch (PDL).

One block per row, a block of a multiple of 32 threads (at most 1024). Each thread strides over
the row; the sum of squares (float32) is reduced in each warp with shuffles, then across warps
through shared memory. Rows are `row_stride` elements apart; elements within a row are
contiguous.

  rmsnorm_T(out, x, weight, hidden, x_stride, out_stride, eps):
      out[r, i] = T(x[r, i] * rsqrt(mean_i(x[r, i]^2) + eps) * weight[i])
  fused_add_rmsnorm_T(x, residual, weight, hidden, x_stride, residual_stride, eps):
      residual[r, i] = T(x[r, i] + residual[r, i]);  x[r, :] = rmsnorm(residual[r, :])

Arithmetic is float32 throughout; bfloat16 is converted with shifts and rounded to nearest
even by hand (portable to every architecture the PTX targets).
"""
import pathlib

SIZE = {"f32": 4, "f16": 2, "bf16": 2}


def load(t, dst, addr):
    if t == "f32":
        return f"\tld.global.f32 \t{dst}, [{addr}];\n"
    if t == "f16":
        return f"\tld.global.b16 \t%h1, [{addr}];\n\tcvt.f32.f16 \t{dst}, %h1;\n"
    return (
        f"\tld.global.b16 \t%h1, [{addr}];\n\tcvt.u32.u16 \t%r20, %h1;\n"
        f"\tshl.b32 \t%r20, %r20, 16;\n\tmov.b32 \t{dst}, %r20;\n"
    )


def store(t, addr, src):
    if t == "f32":
        return f"\tst.global.f32 \t[{addr}], {src};\n"
    if t == "f16":
        return f"\tcvt.rn.f16.f32 \t%h1, {src};\n\tst.global.b16 \t[{addr}], %h1;\n"
    # Round to nearest even: bits + 0x7fff + (bit 16); NaN stays a (quiet) NaN.
    return (
        f"\tmov.b32 \t%r21, {src};\n\tshr.u32 \t%r22, %r21, 16;\n\tand.b32 \t%r22, %r22, 1;\n"
        f"\tadd.u32 \t%r22, %r22, 32767;\n\tadd.u32 \t%r22, %r21, %r22;\n"
        f"\tshr.u32 \t%r22, %r22, 16;\n\tsetp.nan.f32 \t%p4, {src}, {src};\n"
        f"\tselp.b32 \t%r22, 32704, %r22, %p4;\n\tcvt.u16.u32 \t%h1, %r22;\n"
        f"\tst.global.b16 \t[{addr}], %h1;\n"
    )


def rounded(t, reg):
    """`reg = float32(T(reg))`: the value as stored in T."""
    if t == "f32":
        return ""
    if t == "f16":
        return f"\tcvt.rn.f16.f32 \t%h2, {reg};\n\tcvt.f32.f16 \t{reg}, %h2;\n"
    return (
        f"\tmov.b32 \t%r21, {reg};\n\tshr.u32 \t%r22, %r21, 16;\n\tand.b32 \t%r22, %r22, 1;\n"
        f"\tadd.u32 \t%r22, %r22, 32767;\n\tadd.u32 \t%r22, %r21, %r22;\n"
        f"\tand.b32 \t%r22, %r22, -65536;\n\tsetp.nan.f32 \t%p4, {reg}, {reg};\n"
        f"\tselp.b32 \t%r22, 2143289344, %r22, %p4;\n\tmov.b32 \t{reg}, %r22;\n"
    )


def shuffle_sum(reg, tmp):
    out = ""
    for offset in (16, 8, 4, 2, 1):
        out += f"\tshfl.sync.bfly.b32 \t{tmp}, {reg}, {offset}, 31, -1;\n\tadd.f32 \t{reg}, {reg}, {tmp};\n"
    return out


def kernel(t, fused, pdl):
    size = SIZE[t]
    shift = {4: 2, 2: 1}[size]
    name = f"fused_add_rmsnorm_{t}" if fused else f"rmsnorm_{t}"
    p = name
    if fused:
        params = ["x", "residual", "weight"]
        strides = ["x_stride", "residual_stride"]
    else:
        params = ["out", "x", "weight"]
        strides = ["x_stride", "out_stride"]
    s = f".visible .entry {name}(\n"
    s += "".join(f"\t.param .u64 {p}_{q},\n" for q in params)
    s += f"\t.param .u32 {p}_hidden,\n"
    s += "".join(f"\t.param .u32 {p}_{q},\n" for q in strides)
    s += f"\t.param .f32 {p}_eps\n)\n{{\n"
    s += "\t.reg .pred \t%p<5>;\n\t.reg .b16 \t%h<3>;\n\t.reg .b32 \t%r<24>;\n"
    s += "\t.reg .f32 \t%f<12>;\n\t.reg .b64 \t%rd<16>;\n"
    s += f"\t.shared .align 4 .b8 {p}_partial[128];\n\n"
    if pdl:
        # Programmatic dependent launch: wait for the previous kernel's memory before reading.
        s += "\tgriddepcontrol.wait;\n"
    # rd1: first (out | x), rd2: second (x | residual), rd3: weight
    for i, q in enumerate(params, start=1):
        s += f"\tld.param.u64 \t%rd{i}, [{p}_{q}];\n\tcvta.to.global.u64 \t%rd{i}, %rd{i};\n"
    s += f"\tld.param.u32 \t%r1, [{p}_hidden];\n"
    s += f"\tld.param.u32 \t%r2, [{p}_{strides[0]}];\n"
    s += f"\tld.param.u32 \t%r3, [{p}_{strides[1]}];\n"
    s += f"\tld.param.f32 \t%f1, [{p}_eps];\n"
    s += "\tmov.u32 \t%r4, %ctaid.x;\n\tmov.u32 \t%r5, %tid.x;\n\tmov.u32 \t%r6, %ntid.x;\n"
    # Row bases. Plain kernel: %rd4 = x row (read), %rd5 = out row (written).
    # Fused kernel: %rd4 = x row (read, then written), %rd5 = residual row.
    if fused:
        src_base, src_stride, dst_base, dst_stride = "%rd1", "%r2", "%rd2", "%r3"
    else:
        src_base, src_stride, dst_base, dst_stride = "%rd2", "%r2", "%rd1", "%r3"
    s += f"\tmul.wide.u32 \t%rd4, %r4, {src_stride};\n\tshl.b64 \t%rd4, %rd4, {shift};\n"
    s += f"\tadd.s64 \t%rd4, {src_base}, %rd4;\n"
    s += f"\tmul.wide.u32 \t%rd5, %r4, {dst_stride};\n\tshl.b64 \t%rd5, %rd5, {shift};\n"
    s += f"\tadd.s64 \t%rd5, {dst_base}, %rd5;\n"
    s += "\tmov.f32 \t%f2, 0f00000000;\n\tmov.u32 \t%r7, %r5;\n"
    # Pass 1: the sum of squares (fused: of x + residual as stored, written to residual).
    s += f"{p}_LOOP1:\n\tsetp.ge.u32 \t%p1, %r7, %r1;\n\t@%p1 bra \t{p}_DONE1;\n"
    s += f"\tmul.wide.u32 \t%rd6, %r7, {size};\n\tadd.s64 \t%rd7, %rd4, %rd6;\n"
    s += load(t, "%f3", "%rd7")
    if fused:
        s += "\tadd.s64 \t%rd8, %rd5, %rd6;\n"
        s += load(t, "%f4", "%rd8")
        s += "\tadd.f32 \t%f3, %f3, %f4;\n"
        s += store(t, "%rd8", "%f3")
        s += rounded(t, "%f3")
    s += "\tfma.rn.f32 \t%f2, %f3, %f3, %f2;\n\tadd.u32 \t%r7, %r7, %r6;\n"
    s += f"\tbra.uni \t{p}_LOOP1;\n{p}_DONE1:\n"
    # Reduce: each warp, then warp 0 over the warps' partial sums.
    s += shuffle_sum("%f2", "%f3")
    s += "\tand.b32 \t%r8, %r5, 31;\n\tshr.u32 \t%r9, %r5, 5;\n"
    s += f"\tmov.u32 \t%r10, {p}_partial;\n\tshl.b32 \t%r11, %r9, 2;\n\tadd.u32 \t%r11, %r10, %r11;\n"
    s += f"\tsetp.ne.u32 \t%p2, %r8, 0;\n\t@%p2 bra \t{p}_STORED;\n"
    s += "\tst.shared.f32 \t[%r11], %f2;\n"
    s += f"{p}_STORED:\n\tbar.sync \t0;\n"
    s += f"\tsetp.ne.u32 \t%p3, %r9, 0;\n\t@%p3 bra \t{p}_REDUCED;\n"
    s += "\tadd.u32 \t%r12, %r6, 31;\n\tshr.u32 \t%r12, %r12, 5;\n\tmov.f32 \t%f4, 0f00000000;\n"
    s += f"\tsetp.ge.u32 \t%p1, %r8, %r12;\n\t@%p1 bra \t{p}_SUM;\n"
    s += "\tshl.b32 \t%r13, %r8, 2;\n\tadd.u32 \t%r13, %r10, %r13;\n\tld.shared.f32 \t%f4, [%r13];\n"
    s += f"{p}_SUM:\n"
    s += shuffle_sum("%f4", "%f5")
    s += f"\t@%p2 bra \t{p}_REDUCED;\n"
    s += "\tcvt.rn.f32.u32 \t%f6, %r1;\n\tdiv.rn.f32 \t%f7, %f4, %f6;\n\tadd.f32 \t%f7, %f7, %f1;\n"
    s += "\trsqrt.approx.f32 \t%f8, %f7;\n\tst.shared.f32 \t[%r10], %f8;\n"
    s += f"{p}_REDUCED:\n\tbar.sync \t0;\n\tld.shared.f32 \t%f8, [%r10];\n"
    # Pass 2: scale by rsqrt and the weight.
    s += f"\tmov.u32 \t%r7, %r5;\n{p}_LOOP2:\n\tsetp.ge.u32 \t%p1, %r7, %r1;\n\t@%p1 bra \t{p}_DONE2;\n"
    s += f"\tmul.wide.u32 \t%rd6, %r7, {size};\n"
    if fused:
        s += "\tadd.s64 \t%rd7, %rd5, %rd6;\n"  # the residual as stored
    else:
        s += "\tadd.s64 \t%rd7, %rd4, %rd6;\n"
    s += load(t, "%f3", "%rd7")
    s += "\tadd.s64 \t%rd9, %rd3, %rd6;\n"
    s += load(t, "%f9", "%rd9")
    s += "\tmul.f32 \t%f3, %f3, %f8;\n\tmul.f32 \t%f3, %f3, %f9;\n"
    if fused:
        s += "\tadd.s64 \t%rd10, %rd4, %rd6;\n"
    else:
        s += "\tadd.s64 \t%rd10, %rd5, %rd6;\n"
    s += store(t, "%rd10", "%f3")
    s += f"\tadd.u32 \t%r7, %r7, %r6;\n\tbra.uni \t{p}_LOOP2;\n{p}_DONE2:\n\tret;\n}}\n\n"
    return s


def module(pdl):
    header = (
        "// Generated by generate_ptx.py (hand-written PTX templates): FlashInfer's RMSNorm and\n"
        "// fused add + RMSNorm for float32, float16 and bfloat16. Do not edit; regenerate.\n\n"
        + (
            "// This module waits on the previous kernel (griddepcontrol.wait, sm_90+): launched\n"
            "// with programmatic dependent launch.\n.version 7.8\n.target sm_90\n"
            if pdl
            else ".version 6.0\n.target sm_50\n"
        )
        + ".address_size 64\n\n"
    )
    body = "".join(kernel(t, fused, pdl) for fused in (False, True) for t in ("f32", "f16", "bf16"))
    return header + body


def main():
    here = pathlib.Path(__file__).resolve().parent
    (here / "rmsnorm.ptx").write_text(module(pdl=False))
    (here / "rmsnorm_pdl.ptx").write_text(module(pdl=True))


if __name__ == "__main__":
    main()
