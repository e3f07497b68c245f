"""T.gemm as Hopper's wgmma.mma_async (sm_90a): codegen.lower.wgmma's Wgmma printed.

The gemm's warpgroups each issue, per k step, one m64nNk16 per (accumulator tile along
M, N block), both operands read from the plan's swizzled shared buffers through matrix
descriptors (reducer_wgmma_desc over the tile's first element before the swizzle, the
lowering's LBO, SBO and mode), the accumulator registers named by their slots
(Wgmma.c_slot) in the instruction's register order. Around them: the operand fences
(the compiler keeps the accumulator's accesses on their side), wgmma.fence, one commit
and a wait for every group, so the gemm's shared reads are complete when it ends (the
plan's barriers then order later writes as for any other read). The shared writes a
wgmma reads reach it through the async proxy: the plan's barriers fence them
(BodyBarrier.async_proxy). interp.sim_wgmma executes the same descriptors."""
from __future__ import annotations

from verify_reducer.spec import ir

from .cuda_exprs import literal
from .lower import wgmma as lowered
from .lower.gemm import GemmLowering

_NAMES = {lowered.STEP: "gemm_ks", lowered.GROUP: "gemm_wg"}
UNROLLED_STEPS = 8


def render_wgmma(body, stmt: ir.Gemm, low: GemmLowering, acc: str) -> None:
    out, w = body.out, low.wgmma
    zero = literal(0, stmt.c.dtype).text
    with body.maybe_block("if (gemm_clear)"):
        out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {low.slots}; ++gemm_s)"):
            out.line(f"{acc}[gemm_s] = {zero};")
    function = _definition(body, w)
    out.line(f"const int gemm_wg = gemm_t / {lowered.WARPGROUP};")
    _fence_operands(body, acc, low.slots)
    out.line("reducer_wgmma_fence();")
    out.line("#pragma unroll" if w.steps <= UNROLLED_STEPS else "#pragma unroll 1")
    with body.maybe_block(f"for (int gemm_ks = 0; gemm_ks < {w.steps}; ++gemm_ks)"):
        for tile in range(w.tiles):
            for nblock in range(w.nblocks):
                fixed = {lowered.TILE: tile, lowered.NBLOCK: nblock}
                descriptors = [_descriptor(body, op, fixed) for op in (w.a, w.b)]
                registers = ", ".join(
                    f"{acc}[{int(w.c_slot(tile, nblock, r))}]" for r in range(w.registers))
                out.line(f"{function}({', '.join(descriptors)},")
                out.line(f"    {registers});")
    out.line("reducer_wgmma_commit();")
    out.line("reducer_wgmma_wait_all();")
    _fence_operands(body, acc, low.slots)


def _fence_operands(body, acc: str, slots: int) -> None:
    body.out.line("#pragma unroll")
    with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {slots}; ++gemm_s)"):
        body.out.line(f"reducer_wgmma_operand({acc}[gemm_s]);")


def _descriptor(body, op: lowered.WgmmaOperand, fixed: dict) -> str:
    """reducer_wgmma_desc of the instruction tile's first element (before the swizzle)
    in the buffer's current stage."""
    first = op.first.substitute(fixed)
    swz = op.swizzle
    chunked = swz.chunked(first // swz.cols, first % swz.cols).to_c(_NAMES)
    base = body.stage_base.get(op.buffer)
    at = chunked if base is None else f"{base} + {chunked}"
    lbo, sbo, mode = lowered.descriptor_fields(op)
    return f"reducer_wgmma_desc(&{body.buffer(op.buffer)}[{at}], {lbo}, {sbo}, {mode})"


def _definition(body, w: lowered.Wgmma) -> str:
    """The instruction's device function (one per shape, types and majors), added to
    the translation unit once: its accumulator registers as references, in order."""
    name = (f"reducer_wgmma_m64n{w.instr_n}k16_{w.instruction.replace('.', '_')}_"
            f"{w.a.transposed}{w.b.transposed}")
    if any(name in text for text in body.table_text):
        return name
    n = w.registers
    params = ", ".join(f"float& d{r}" for r in range(n))
    regs = ", ".join(f"%{r}" for r in range(n))
    outs = ", ".join(f'"+f"(d{r})' for r in range(n))
    body.table_text.append("\n".join([
        f"// wgmma.mma_async m64n{w.instr_n}k16 {w.instruction}: d += A·B, A and B from the",
        "// descriptors da, db (codegen.lower.wgmma); d in the instruction's register order",
        f"__device__ __forceinline__ void {name}(unsigned long long da, unsigned long long db,",
        f"    {params}) {{",
        # device code only; compiled for plain sm_90, ptxas refuses the instruction by
        # name (sm_90a: codegen.cuda.compile_arch), never a silent no-op
        "#if defined(__CUDA_ARCH__)",
        "  asm volatile(",
        "      \"{\\n.reg .pred p;\\n\"",
        f"      \"setp.ne.b32 p, %{n + 2}, 0;\\n\"",
        f"      \"wgmma.mma_async.sync.aligned.m64n{w.instr_n}k16.{w.instruction} \"",
        f"      \"{{{regs}}}, %{n}, %{n + 1}, p, 1, 1, {w.a.transposed}, {w.b.transposed};\\n}}\\n\"",
        f"      : {outs}",
        "      : \"l\"(da), \"l\"(db), \"r\"(1));",
        "#endif",
        "}"]))
    return name

