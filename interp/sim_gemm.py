"""T.gemm in the simulator: the thread program's GemmLowering (codegen.lower.gemm)
executed per lane, one lane per (thread, accumulator slot).

Each lane computes the element the lowering names for its slot from the operand
elements it reads, in k order, as the CUDA does (codegen.cuda_gemm prints the same
data): its accumulator register is read (unless clear_accum) and written through the
checked register accessors — a lane whose element its thread does not hold under the
accumulator's layout is an R300 with the holders drawn, a register never written is
R502 — and its reads of shared operands go through the race-tracked accessor (R504
against the plan's barriers, R502 for never-written words). A mixin of
interp.simulate's block."""
from __future__ import annotations

import weakref

import numpy as np

from verify_reducer.codegen.lower import gemm as lowered
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL

from .evaluate import operand, stored
from .values import ITER, THREAD, Lanes
from .violations import threads_text

# per plan's statics: each gemm's lowering and its lanes, derived once
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class GemmExecution:
    """T.gemm for interp.simulate._Block."""

    def lowered_gemm(self, stmt: ir.Gemm):
        """(the gemm's lowering, each lane's absolute thread, its element of C, and the
        flat positions in A and B it reads, lanes × K), once per plan."""
        cache = _CACHE.setdefault(self.s, {})
        found = cache.get(stmt)
        if found is not None:
            return found
        try:
            low = lowered.lower_gemm(self.s.plan, stmt)
        except lowered.Unlowerable as e:
            raise DiagnosticError(error("R100", str(e), stmt.span)) from None
        offset, count = low.participants
        t = np.repeat(np.arange(count, dtype=np.int64), low.slots)
        s = np.tile(np.arange(low.slots, dtype=np.int64), count)
        env = {lowered.THREAD: t, lowered.SLOT: s}
        row = np.broadcast_to(low.row.evaluate(env), t.shape)
        col = np.broadcast_to(low.col.evaluate(env), t.shape)
        k = np.arange(low.k, dtype=np.int64)[None, :]
        a = np.broadcast_to(low.a_index.evaluate({"row": row[:, None], lowered.K: k}),
                            (len(t), low.k))
        b = np.broadcast_to(low.b_index.evaluate({"col": col[:, None], lowered.K: k}),
                            (len(t), low.k))
        at = {lowered.THREAD: t[:, None], lowered.SLOT: s[:, None], lowered.K: k}
        # an operand in a fragment: the (thread, slot) each lane's element is shuffled from
        sources = tuple(None if src is None else
                        _lanes_of(src, at, (len(t), low.k), offset)
                        for src in (low.a_from, low.b_from))
        found = (low, t + offset, row * low.n + col, np.ascontiguousarray(a),
                 np.ascontiguousarray(b), sources)
        cache[stmt] = found
        return found

    def _gemm(self, stmt: ir.Gemm, lanes: Lanes):
        if ITER in lanes.env:
            raise DiagnosticError(error(
                "R100", "a T.gemm inside a T.Parallel is not supported", stmt.span))
        low, threads, flat, a_at, b_at, (a_src, b_src) = self.lowered_gemm(stmt)
        arrived = lanes.env[THREAD].v
        offset, count = low.participants
        if len(arrived) != count:
            missing = np.setdiff1d(np.arange(offset, offset + count), arrived)
            self.report.add("R500", f"T.gemm is computed by threads {offset}.."
                            f"{offset + count - 1} together, but "
                            f"{threads_text(missing)} never arrive", stmt.span,
                            key=("gemm", stmt))
            keep = np.isin(threads, arrived)
            threads, flat, a_at, b_at = threads[keep], flat[keep], a_at[keep], b_at[keep]
            a_src, b_src = (None if src is None else (src[0][keep], src[1][keep])
                            for src in (a_src, b_src))
        c = stmt.c
        clear = operand(stmt.clear_accum, BOOL, lanes, self).v
        if clear.any() != clear.all():
            raise DiagnosticError(error(
                "R100", "T.gemm's clear_accum differs between the threads", stmt.span))
        work = np.dtype(low.work)
        if clear.all():
            acc = np.zeros(len(threads), dtype=work)
        else:
            acc = self.read_registers(c, threads, flat, stmt.span).astype(work)
        a = (self.gemm_operand(stmt.a, threads, a_at, stmt) if a_src is None else
             self.gemm_shuffled(stmt.a, a_src, a_at, stmt)).astype(work)
        b = (self.gemm_operand(stmt.b, threads, b_at, stmt) if b_src is None else
             self.gemm_shuffled(stmt.b, b_src, b_at, stmt)).astype(work)
        with np.errstate(all="ignore"):
            for k in range(low.k):        # k order, rounded into C at every step
                acc = stored(c.dtype, acc + a[:, k] * b[:, k]).astype(work)
        self.write_registers(c, threads, flat, acc, stmt.span)

    def gemm_operand(self, buffer: ir.Buffer, threads: np.ndarray, at: np.ndarray,
                     stmt: ir.Gemm) -> np.ndarray:
        """The operand elements each lane reads (lanes × K), each (thread, element)
        pair read once through the race-tracked shared accessor."""
        key = threads[:, None] * buffer.size + at
        pairs, inverse = np.unique(key.reshape(-1), return_inverse=True)
        values = self.read_shared(buffer, pairs % buffer.size, stmt.span,
                                  pairs // buffer.size)
        return values[inverse].reshape(at.shape)

    def gemm_shuffled(self, buffer: ir.Buffer, source, at: np.ndarray,
                      stmt: ir.Gemm) -> np.ndarray:
        """An operand in a fragment: each lane's element k comes from the register the lowering
        names — source thread and slot — read through the checked register accessor (the
        source must hold the element: R300 otherwise); the slot must be the one the
        fragment's layout keeps the element in, or the shuffle reads another value."""
        threads, slots = source
        values = self.read_registers(buffer, threads.reshape(-1), at.reshape(-1),
                                     stmt.span)
        layout = self.s.layouts.fragments[buffer]
        want = layout.slots_of(np.unravel_index(at.reshape(-1), buffer.shape))
        wrong = want != slots.reshape(-1)
        if wrong.any():
            i = int(np.argmax(wrong))
            self.report.add("R300", f"the warp shuffle of T.gemm reads slot "
                            f"{int(slots.reshape(-1)[i])} of thread "
                            f"{int(threads.reshape(-1)[i])} for "
                            f"{self.element(buffer, at.reshape(-1)[i])}, which "
                            f"{buffer.name}'s layout keeps in slot {int(want[i])} "
                            f"({layout.describe()})", stmt.span, key=("gemm-slot", stmt))
        return values.reshape(at.shape)


def _lanes_of(source, at: dict, shape: tuple[int, int], offset: int):
    """(absolute thread, slot) per lane and k of a shuffled operand's source."""
    thread, slot = (np.ascontiguousarray(np.broadcast_to(e.evaluate(at), shape))
                    for e in source)
    return thread + offset, slot
