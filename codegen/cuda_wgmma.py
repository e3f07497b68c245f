"""T.gemm as Hopper's wgmma.mma_async (sm_90a): codegen.lower.wgmma's Wgmma printed.

The gemm's warpgroups each issue, per k step, one m64nNk16 per (accumulator tile along
M, N block), both operands read from the plan's swizzled shared buffers through matrix
descriptors (reducer_wgmma_desc over the tile's first element before the swizzle, the
lowering's LBO, SBO and mode), the accumulator registers named by their slots
(Wgmma.c_slot) in the instruction's register order. Around them: the operand fences
(the compiler keeps the accumulator's accesses on their side), wgmma.fence, one commit
and a wait for every group, so the gemm's shared reads are complete when it ends (the
plan's barriers then order later writes as for any other read). Between the commit and
the wait go the events a pipeline issues while the gemm runs (codegen.lower.pipeline
.WhileRunning: the refill of a K loop's other stage). The shared writes a
wgmma reads reach it through the async proxy: the plan's barriers fence them
(BodyBarrier.async_proxy). interp.sim_wgmma executes the same descriptors."""
from __future__ import annotations

from verify_reducer.spec import ir

from .lower import wgmma as lowered
from .lower.gemm import GemmLowering

_NAMES = {lowered.STEP: "gemm_ks", lowered.GROUP: "gemm_wg"}
UNROLLED_STEPS = 8


def render_wgmma(body, stmt: ir.Gemm, low: GemmLowering, acc: str) -> None:
    out, w = body.out, low.wgmma
    function = _definition(body, w)
    described = (w.b,) if w.registers_a else (w.a, w.b)
    if any(lowered.GROUP in op.first.free_vars() for op in described):
        # the warpgroup, where a descriptor's tile depends on it (unused, nvcc warns)
        out.line(f"const int gemm_wg = gemm_t / {lowered.WARPGROUP};")
    _fence_operands(body, acc, low.slots)
    if w.registers_a:
        _pack_all_a(body, w)
    out.line("reducer_wgmma_fence();")
    # A in registers names its slots by the step: the steps unrolled, as the mma's
    unrolled = w.steps <= UNROLLED_STEPS or w.registers_a
    out.line("#pragma unroll" if unrolled else "#pragma unroll 1")
    with body.maybe_block(f"for (int gemm_ks = 0; gemm_ks < {w.steps}; ++gemm_ks)"):
        for tile in range(w.tiles):
            fixed = {lowered.TILE: tile}
            if w.registers_a:
                first = [_a_register(tile, w.tiles, q) for q in range(4)]
            else:
                first = [_descriptor(body, w.a, fixed)]
            for nblock in range(w.nblocks):
                fixed = {lowered.TILE: tile, lowered.NBLOCK: nblock}
                registers = ", ".join(
                    f"{acc}[{int(w.c_slot(tile, nblock, r))}]" for r in range(w.registers))
                out.line(f"{function}({', '.join(first + [_descriptor(body, w.b, fixed)])},")
                out.line(f"    {registers});")
    out.line("reducer_wgmma_commit();")
    if body.while_in_flight is not None:     # a pipeline's refill, while the wgmmas run
        printed, body.while_in_flight = body.while_in_flight, None
        printed()
    out.line("reducer_wgmma_wait_all();")
    _fence_operands(body, acc, low.slots)
    if w.registers_a:
        out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {w.steps * w.tiles * 4}; "
                              f"++gemm_s)"):
            out.line("reducer_wgmma_operand(gemm_a[gemm_s]);")


def _pack_all_a(body, w: lowered.Wgmma) -> None:
    """Every step's A registers, packed before wgmma.fence. They are read by the wgmmas
    until the wait, so they are packed once and kept live past it (a register rewritten
    before the wait would change what they read). Packed between the fence and the
    wgmmas, ptxas would have to insert a warpgroup.arrive of its own before each wgmma
    that reads a register written after the fence (its warning C7519)."""
    out = body.out
    out.line(f"unsigned gemm_a[{w.steps * w.tiles * 4}];  // [k step][tile][register]")
    out.line("#pragma unroll")
    with body.maybe_block(f"for (int gemm_ks = 0; gemm_ks < {w.steps}; ++gemm_ks)"):
        for tile in range(w.tiles):
            _pack_a(body, w.a, tile, w.tiles)
    out.line("#pragma unroll")
    with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {w.steps * w.tiles * 4}; "
                          f"++gemm_s)"):
        out.line("reducer_wgmma_operand(gemm_a[gemm_s]);")


def _a_register(tile: int, tiles: int, q: int) -> str:
    """A's register q of instruction tile `tile` at step gemm_ks."""
    return f"gemm_a[(gemm_ks * {tiles} + {tile}) * 4 + {q}]"


def _pack_a(body, a: lowered.WgmmaRegisters, tile: int, tiles: int) -> None:
    """Tile `tile`'s four A registers at step gemm_ks from the fragment's slots, two
    16-bit elements to a register, the lower-numbered in the low half."""
    array = body.buffer(a.buffer)
    body.register_slots[array] = body.layouts.fragment(a.buffer).slots_per_thread
    for q in range(4):
        halves = [a.slot.substitute({lowered.TILE: tile, lowered.REG: 2 * q + h}).to_c(
            {lowered.STEP: "gemm_ks"}) for h in range(2)]
        body.out.line(f"{_a_register(tile, tiles, q)} = reducer_pack16({array}[{halves[0]}], "
                      f"{array}[{halves[1]}]);")


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
    the translation unit once: A's descriptor (or its four registers), B's descriptor,
    the accumulator registers as references, in order."""
    form = "rs_" if w.registers_a else f"{w.a.transposed}"
    name = (f"reducer_wgmma_m64n{w.instr_n}k16_{w.instruction.replace('.', '_')}_"
            f"{form}{w.b.transposed}")
    if any(name in text for text in body.table_text):
        return name
    n = w.registers
    params = ", ".join(f"float& d{r}" for r in range(n))
    regs = ", ".join(f"%{r}" for r in range(n))
    outs = ", ".join(f'"+f"(d{r})' for r in range(n))
    if w.registers_a:
        a_params = "unsigned a0, unsigned a1, unsigned a2, unsigned a3"
        a_operand, b_at, pred = f"{{%{n}, %{n + 1}, %{n + 2}, %{n + 3}}}", n + 4, n + 5
        ins = '"r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1)'
        tail = f"p, 1, 1, {w.b.transposed}"          # no transpose of A in registers
        what = "A from the registers a0..a3 (the mma's A fragment)"
    else:
        a_params = "unsigned long long da"
        a_operand, b_at, pred = f"%{n}", n + 1, n + 2
        ins = '"l"(da), "l"(db), "r"(1)'
        tail = f"p, 1, 1, {w.a.transposed}, {w.b.transposed}"
        what = "A from the descriptor da"
    body.table_text.append("\n".join([
        f"// wgmma.mma_async m64n{w.instr_n}k16 {w.instruction}: d += A·B, {what}, B from",
        "// the descriptor db (codegen.lower.wgmma); d in the instruction's register order",
        f"__device__ __forceinline__ void {name}({a_params}, unsigned long long db,",
        f"    {params}) {{",
        # device code only; compiled for plain sm_90, ptxas refuses the instruction by
        # name (sm_90a: codegen.cuda.compile_arch), never a silent no-op
        "#if defined(__CUDA_ARCH__)",
        "  asm volatile(",
        "      \"{\\n.reg .pred p;\\n\"",
        f"      \"setp.ne.b32 p, %{pred}, 0;\\n\"",
        f"      \"wgmma.mma_async.sync.aligned.m64n{w.instr_n}k16.{w.instruction} \"",
        f"      \"{{{regs}}}, {a_operand}, %{b_at}, {tail};\\n}}\\n\"",
        f"      : {outs}",
        f"      : {ins});",
        "#endif",
        "}"]))
    return name

