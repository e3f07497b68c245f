"""Padded rows for the shared operands of tensor-core gemms, and for the shared tiles
their accumulators are copied into: plan data.

    plan_pitches(func, swizzled) -> ((buffer, pitch), ...)

An mma's lanes load a 16-row tile eight rows at a time (codegen.lower.gemm: lane l reads
row l/4, 4-byte word l mod 4 of the tile's k, or its B column l/4 at rows 2·(l mod 4)).
When a shared operand's row is a multiple of 32 bytes, those eight rows start on at most
four distinct banks and the loads conflict up to four ways (a 128 × 32 fp16 A tile: rows
64 bytes apart, rows r and r + 2 on the same banks). Padding every row by 16 bytes puts
the eight rows' words on distinct banks: a row of w words becomes w + 4 words, and w ≡ 0
(mod 8) makes w + 4 an odd multiple of 4, so 8 consecutive rows cover all 32 banks once
(B's pairs of rows 2 apart likewise step 8 banks). TileLang swizzles instead; padding
keeps every address an affine function of the element, costs 16 bytes a row, and keeps
16-byte vector copies and cp.async aligned (the pitch is a multiple of 16 bytes).

An accumulator fragment (mma's and wgmma's alike: lane l holds rows l/4 (+ 8) and
columns 2·(l mod 4), +1 of each 8-column block) copied into a shared tile writes the same
pattern: eight rows at once, each row's four lanes side by side. A 256-column fp16 tile
(512-byte rows) puts those eight rows on the same banks, an 8-way conflict on every
store of a GEMM's epilogue (measured on the H200: the epilogue of a 128 × 256 tile is
not overlapped with anything at one block per SM). The same 16 bytes a row spread them.

The pitch is the plan's (spec.physical.PhysicalPlan.pitches): the renderer addresses
every element of the buffer through it (codegen.cuda_stmts.KernelBody.place, the gemm's
loads, a pipeline's stage size) and the resources allocate rows × pitch per stage. The
simulator tracks shared memory by element; the map element → row·pitch + column is
injective (pitch ≥ the row) and inside the allocation, so its accounting is the
hardware's."""
from __future__ import annotations

from verify_reducer.spec import ir

from .resources import element_bytes

BANK_ROW = 32          # bytes: a row this multiple of, 8 rows fall on at most 4 banks
PAD = 16               # bytes added to every such row (a 16-byte vector stays aligned)


def plan_pitches(func: ir.PrimFunc, swizzled: tuple[ir.Buffer, ...] = ()
                 ) -> tuple[tuple[ir.Buffer, int], ...]:
    """The pitches of the mma.sync operands and of the shared tiles an accumulator is
    copied into; a buffer swizzled for wgmma (codegen.plan_swizzle) has its own layout
    instead."""
    body = func.kernel.body
    accumulators = {s.c for s in ir.walk(body) if isinstance(s, ir.Gemm)}
    found: dict[ir.Buffer, int] = {}
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Gemm):
            candidates = (stmt.a, stmt.b)
        elif isinstance(stmt, ir.Copy) and stmt.src.buffer in accumulators:
            # an epilogue's C_local -> C_shared: the accumulator's lanes write rows
            # l / 4 and pairs of columns 2 (l mod 4), the mma operand's load pattern
            candidates = (stmt.dst.buffer,)
        else:
            continue
        for buffer in candidates:
            if buffer.scope != "shared" or len(buffer.shape) != 2 or buffer in swizzled:
                continue
            width = element_bytes(buffer.dtype)
            if (buffer.shape[1] * width) % BANK_ROW == 0:
                found[buffer] = buffer.shape[1] + PAD // width
    return tuple(found.items())
