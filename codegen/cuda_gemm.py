"""T.gemm as CUDA: the thread program's GemmLowering (codegen.lower.gemm) printed.

Each thread loops over its accumulator slots; slot s holds element (row, col) of C as
the lowering names it, and is computed by multiply-adds in k order in the lowering's
work dtype, rounded into C's dtype after each step — the arithmetic interp.sim_gemm
executes, one of the orders interp.gemm's bound admits. Shared operands are read at the
lowering's flat positions (a pipelined buffer at its stage's offset). This is the
correct-first form: plain multiply-adds, no mma.sync or ldmatrix yet (docs/limits.md)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import BOOL, DTYPES

from verify_reducer.spec.indexexpr import mod

from .cuda_access import Frame
from .cuda_exprs import ADD, C, convert
from .lower import gemm as lowered

# the C names of the lowering's variables, inside the gemm's own block
_NAMES = {lowered.THREAD: "gemm_t", lowered.SLOT: "gemm_s", lowered.K: "gemm_k",
          "row": "gemm_row", "col": "gemm_col"}


def render_gemm(body, stmt: ir.Gemm, low: lowered.GemmLowering, frame: Frame) -> None:
    out = body.out
    c = stmt.c
    acc = body.buffer(c)
    body.register_slots[acc] = body.layouts.fragment(c).slots_per_thread
    work = DTYPES[low.work]
    offset, _ = low.participants
    out.comment(f"line {stmt.span.line}: T.gemm: {low.describe()}")
    body.fence(stmt, "before")
    with body.maybe_block(""):
        clear = body.exprs(frame).operand(stmt.clear_accum, BOOL).text
        out.line(f"const bool gemm_clear = {clear};")
        out.line(f"const int gemm_t = tid - {offset};" if offset else
                 "const int gemm_t = tid;")
        out.line("#pragma unroll")
        with body.maybe_block(f"for (int gemm_s = 0; gemm_s < {low.slots}; ++gemm_s)"):
            # a shuffled operand names its row or column by lane
            if low.a_from is None:
                out.line(f"const int gemm_row = {low.row.to_c(_NAMES)};")
            if low.b_from is None:
                out.line(f"const int gemm_col = {low.col.to_c(_NAMES)};")
            old = convert(C(f"{acc}[gemm_s]"), c.dtype, work).text
            out.line(f"{work.c_name} gemm_acc = gemm_clear ? {work.c_name}(0) : {old};")
            # a shuffled operand's register slot depends on k: unrolled, it is a constant
            shuffled = low.a_from is not None or low.b_from is not None
            out.line("#pragma unroll" if shuffled else "#pragma unroll 1")
            with body.maybe_block(f"for (int gemm_k = 0; gemm_k < {low.k}; ++gemm_k)"):
                a = _operand(body, stmt.a, low.a_index, work) if low.a_from is None \
                    else _shuffled(body, stmt.a, low.a_from, work)
                b = _operand(body, stmt.b, low.b_index, work) if low.b_from is None \
                    else _shuffled(body, stmt.b, low.b_from, work)
                out.line(f"gemm_acc = {_step(a, b, work, c)};")
            out.line(f"{acc}[gemm_s] = {convert(C('gemm_acc'), work, c.dtype).text};")
    body.fence(stmt, "after")


def _operand(body, buffer: ir.Buffer, index, work) -> str:
    """The element of a shared operand at the lowering's flat index, in the work dtype."""
    flat = index.to_c(_NAMES)
    base = body.stage_base.get(buffer)
    if base is not None:
        flat = f"{base} + {flat}"
    return convert(C(f"{body.buffer(buffer)}[{flat}]"), buffer.dtype, work).text


def _shuffled(body, buffer: ir.Buffer, source_slot, work) -> str:
    """An operand in a fragment: the register the lowering names, from the lane of the
    warp that holds it (every lane passes the same slot, so one __shfl_sync serves
    them all)."""
    array = body.buffer(buffer)
    body.register_slots[array] = body.layouts.fragment(buffer).slots_per_thread
    source, slot = source_slot
    value = (f"__shfl_sync(0xffffffffu, {array}[{slot.to_c(_NAMES)}], "
             f"{mod(source, lowered.WARP).to_c(_NAMES)})")
    return convert(C(value), buffer.dtype, work).text


def _step(a: str, b: str, work, c: ir.Buffer) -> str:
    """acc + a·b in the work dtype, then rounded into C's dtype and back (exact for a
    float32 or int32 C): the value of one step of interp.sim_gemm."""
    if work.is_int:          # wrap-around, not C's undefined signed overflow
        return (f"(int)((unsigned)gemm_acc + (unsigned)(({a}) * ({b})))")
    total = C(f"gemm_acc + ({a}) * ({b})", ADD)
    if work == c.dtype:
        return total.text
    return convert(convert(total, work, c.dtype), c.dtype, work).text
