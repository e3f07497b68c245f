"""T.gemm as CUDA: the thread program's GemmLowering (codegen.lower.gemm) printed.

The tensor-core form (low.mma): per k step, each lane loads the registers the lowering
names — two 16-bit or four 8-bit elements per 32-bit register, one 32-bit shared load
where they are adjacent (MmaOperand.whole), else element loads packed; one ldmatrix per
tile where the lowering found one (MmaOperand.ldmatrix); a fragment operand's own
register slots — and issues one mma.sync (m16n8k16 or m16n8k32) per (A tile, B tile) of
its warp on the accumulator slots the lowering names (reducer_mma_* in the runtime
header). The simulator (interp.sim_gemm) executes the same data. clear_accum zeroes the
slots first.

The scalar form (float8 on a target without its mma, K not whole steps): each thread
loops over its accumulator slots; slot s holds element (row, col) of C as the lowering
names it, and is computed by multiply-adds in k order in the lowering's work dtype,
rounded into C's dtype after each step. Both forms are orders of the sum interp.gemm
bounds."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import BOOL, DTYPES
from verify_reducer.spec.indexexpr import Var, floordiv, mod

from .cuda_access import Frame
from .cuda_exprs import ADD, C, convert, literal
from .cuda_wgmma import render_wgmma
from .lower import gemm as lowered

# the C names of the lowering's variables, inside the gemm's own block
_NAMES = {lowered.THREAD: "gemm_t", lowered.SLOT: "gemm_s", lowered.K: "gemm_k",
          "row": "gemm_row", "col": "gemm_col", lowered.STEP: "gemm_ks",
          lowered.MI: "gemm_mi", lowered.NI: "gemm_ni", "q": "gemm_q"}
UNROLLED_STEPS = 8
_MMA = {"f32.f16.f16.f32": "reducer_mma_f32_f16", "f32.bf16.bf16.f32": "reducer_mma_f32_bf16",
        "f16.f16.f16.f16": "reducer_mma_f16_f16", "s32.s8.s8.s32": "reducer_mma_s32_s8",
        "f32.e4m3.e4m3.f32": "reducer_mma_f32_e4m3", "f32.e5m2.e5m2.f32": "reducer_mma_f32_e5m2"}


def render_gemm(body, stmt: ir.Gemm, low: lowered.GemmLowering, frame: Frame) -> None:
    out = body.out
    acc = body.buffer(stmt.c)
    body.register_slots[acc] = body.layouts.fragment(stmt.c).slots_per_thread
    offset, _ = low.participants
    out.comment(f"line {stmt.span.line}: T.gemm: {low.describe()}")
    body.fence(stmt, "before")
    with body.maybe_block(""):
        clear = body.exprs(frame).operand(stmt.clear_accum, BOOL).text
        out.line(f"const bool gemm_clear = {clear};")
        # the thread within the gemm's participants: some forms name no lane by it
        # (a wgmma reading A from registers), so it is declared maybe unused
        out.line(f"[[maybe_unused]] const int gemm_t = tid - {offset};" if offset else
                 "[[maybe_unused]] const int gemm_t = tid;")
        if low.wgmma is not None or low.mma is not None:
            _clear(body, stmt, low, acc)      # the tensor-core forms add into C in place
        if low.wgmma is not None:
            render_wgmma(body, stmt, low, acc)
        elif low.mma is not None:
            _render_mma(body, stmt, low, acc)
        else:
            _render_scalar(body, stmt, low, acc)
    body.fence(stmt, "after")


def _clear(body, stmt: ir.Gemm, low: lowered.GemmLowering, acc: str) -> None:
    """clear_accum: the thread's accumulator slots zeroed before the first step."""
    zero = literal(0, stmt.c.dtype).text
    with body.maybe_block("if (gemm_clear)"):
        body.out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {low.slots}; ++gemm_s)"):
            body.out.line(f"{acc}[gemm_s] = {zero};")


def _render_mma(body, stmt: ir.Gemm, low: lowered.GemmLowering, acc: str) -> None:
    out, mma = body.out, low.mma
    # a fragment operand's slot depends on the step: unrolled, every slot is a constant;
    # a few steps of shared loads unrolled let the next step's loads overlap this one's
    # mma (a tile's block_K is 2-4 steps; a whole long K stays a loop)
    fragment = mma.a.slot is not None or mma.b.slot is not None
    out.line("#pragma unroll" if fragment or mma.steps <= UNROLLED_STEPS else
             "#pragma unroll 1")
    with body.maybe_block(f"for (int gemm_ks = 0; gemm_ks < {mma.steps}; ++gemm_ks)"):
        for name, op, tile in (("gemm_a", mma.a, lowered.MI), ("gemm_b", mma.b, lowered.NI)):
            _render_loads(body, name, op, tile, low)
        out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_mi = 0; gemm_mi < {mma.a.tiles}; ++gemm_mi)"):
            out.line("#pragma unroll")
            with body.maybe_block(
                    f"for (int gemm_ni = 0; gemm_ni < {mma.b.tiles}; ++gemm_ni)"):
                mi, ni = Var(lowered.MI), Var(lowered.NI)
                d = ", ".join(f"{acc}[{mma.c_slot(mi, ni, r).to_c(_NAMES)}]"
                              for r in range(4))
                out.line(f"{_MMA[mma.instruction]}({d}, gemm_a[gemm_mi], gemm_b[gemm_ni]);")


def _render_loads(body, name: str, op: lowered.MmaOperand, tile: str,
                  low: lowered.GemmLowering) -> None:
    """`unsigned name[tiles][words]`: the lane's registers of one operand at this step,
    each `packed` elements, the lowest-numbered in the low bits."""
    out = body.out
    ranges = {lowered.THREAD: (0, low.participants[1] - 1), lowered.TILE: (0, op.tiles - 1),
              lowered.STEP: (0, low.mma.steps - 1), lowered.REG: (0, op.registers - 1)}
    words = op.registers // op.packed
    array = body.buffer(op.buffer)
    names = dict(_NAMES, **{lowered.TILE: _NAMES[tile]})
    q = Var("q")

    def at(expr, part: int) -> str:
        return expr.substitute({lowered.REG: q * op.packed + part}).to_c(names)

    out.line(f"unsigned {name}[{op.tiles}][{words}];")
    out.line("#pragma unroll")
    with body.maybe_block(f"for (int {names[tile]} = 0; {names[tile]} < {op.tiles}; "
                          f"++{names[tile]})"):
        if op.ldmatrix is not None:
            # one instruction per tile: this lane supplies one row's address
            plan = op.ldmatrix
            base = body.stage_base.get(op.buffer)
            row = _pitched(body, op.buffer, plan.address, ranges).to_c(names)
            row = row if base is None else f"{base} + {row}"
            function = f"reducer_ldmatrix_x{plan.matrices}{'_trans' if plan.trans else ''}"
            out.line(f"{function}({name}[{names[tile]}], &{array}[{row}]);")
            return
        out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_q = 0; gemm_q < {words}; ++gemm_q)"):
            target = f"{name}[{names[tile]}][gemm_q]"
            pack = f"reducer_pack{32 // op.packed}"
            if op.slot is not None:
                body.register_slots[array] = body.layouts.fragment(op.buffer).slots_per_thread
                value = f"{pack}(" + ", ".join(f"{array}[{at(op.slot, h)}]"
                                               for h in range(op.packed)) + ")"
            else:
                base = body.stage_base.get(op.buffer)
                index = _pitched(body, op.buffer, op.index, ranges)
                flat = [at(index, h) if base is None else f"{base} + {at(index, h)}"
                        for h in range(op.packed)]
                value = (f"*reinterpret_cast<const unsigned*>(&{array}[{flat[0]}])"
                         if op.whole else
                         f"{pack}(" + ", ".join(f"{array}[{f}]" for f in flat) + ")")
            out.line(f"{target} = {value};")


def _render_scalar(body, stmt: ir.Gemm, low: lowered.GemmLowering, acc: str) -> None:
    out, c = body.out, stmt.c
    work = DTYPES[low.work]
    out.line("#pragma unroll")
    with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {low.slots}; ++gemm_s)"):
        out.line(f"const int gemm_row = {low.row.to_c(_NAMES)};")
        out.line(f"const int gemm_col = {low.col.to_c(_NAMES)};")
        old = convert(C(f"{acc}[gemm_s]"), c.dtype, work).text
        out.line(f"{work.c_name} gemm_acc = gemm_clear ? {work.c_name}(0) : {old};")
        out.line("#pragma unroll 1")
        with body.maybe_block(f"for (int gemm_k = 0; gemm_k < {low.k}; ++gemm_k)"):
            a = _operand(body, stmt.a, low.a_index, work)
            b = _operand(body, stmt.b, low.b_index, work)
            out.line(f"gemm_acc = {_step(a, b, work, c)};")
        out.line(f"{acc}[gemm_s] = {convert(C('gemm_acc'), work, c.dtype).text};")


def _pitched(body, buffer: ir.Buffer, index, ranges=None):
    """A shared operand's flat element as its address under the plan's padded rows
    (codegen.plan_pitch): row·pitch + column, simplified over the variables' ranges."""
    pitch = body.plan.pitch(buffer)
    if pitch is None:
        return index
    width = buffer.shape[1]
    return (floordiv(index, width, ranges) * pitch + mod(index, width, ranges))


def _operand(body, buffer: ir.Buffer, index, work) -> str:
    """The element of a shared operand at the lowering's flat index, in the work dtype."""
    flat = _pitched(body, buffer, index).to_c(_NAMES)
    base = body.stage_base.get(buffer)
    if base is not None:
        flat = f"{base} + {flat}"
    return convert(C(f"{body.buffer(buffer)}[{flat}]"), buffer.dtype, work).text


def _step(a: str, b: str, work, c: ir.Buffer) -> str:
    """acc + a·b in the work dtype, then rounded into C's dtype and back (exact for a
    float32 or int32 C): the value of one step of interp.sim_gemm."""
    if work.is_int:          # wrap-around, not C's undefined signed overflow
        return (f"(int)((unsigned)gemm_acc + (unsigned)(({a}) * ({b})))")
    total = C(f"gemm_acc + ({a}) * ({b})", ADD)
    if work == c.dtype:
        return total.text
    return convert(convert(total, work, c.dtype), c.dtype, work).text
