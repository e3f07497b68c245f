"""T.gemm in the simulator: the thread program's GemmLowering (codegen.lower.gemm) executed
per lane.

The tensor-core form (low.mma: 16-bit operands, and 8-bit ones from shared memory): per
k step, every lane loads the registers the lowering names — from shared memory through
the race-tracked accessor (R504 against the plan's barriers, R502 for never-written
words), from a fragment as its own registers through the checked register accessor (R300
where the thread does not hold the element or keeps it in another slot than the one the
CUDA names) — and each warp's mma.sync is executed as the hardware defines it: the A and
B tiles are assembled from the lanes' registers by the instruction's fixed fragment maps
(mma_a_position, mma_b_position), multiplied, and the 16×8 C tile is handed back to the
lanes by mma_c_position into the accumulator slots the lowering names, which must be the
slots C's layout keeps those elements in (R300). A load the lowering addresses wrongly
therefore puts a wrong value into C, which the comparison with the interpreter catches.
The sum of one step's exact products (16 or 32) is added to C and rounded once into C's
dtype: one of the orders interp.gemm's bound admits (the hardware's own internal
rounding is inside it, docs/semantics.md §9.1); int8 products are summed exactly and
wrap into int32.

The scalar form (float8 on a target without its mma, K not whole steps): one lane per
(thread, accumulator slot) computes its element from the operand elements it reads, in k
order, as the CUDA does. A mixin of interp.simulate's block."""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower import gemm as lowered
from verify_reducer.codegen.lower import ldmatrix
from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.dtypes import BOOL
from verify_reducer.spec.indexexpr import Var

from .evaluate import operand, stored
from .sim_wgmma import WgmmaExecution, WgmmaLanes, prepare_wgmma
from .values import ITER, THREAD, Lanes

# per plan's statics: each gemm's lowering and its lanes, derived once
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class _Loads:
    """One mma operand's loads: per (thread, tile, step, register) the absolute thread,
    the flat element, and for a fragment the register slot the CUDA reads."""
    threads: np.ndarray
    elements: np.ndarray
    slots: np.ndarray | None
    rows: np.ndarray | None = None    # ldmatrix: the row each thread supplies, 8 elements


@dataclass(frozen=True)
class _Prepared:
    low: lowered.GemmLowering
    threads: np.ndarray               # scalar form: per lane; mma form: per C register
    flat: np.ndarray                  # C's element per lane / per C register
    a: "np.ndarray | _Loads"          # scalar form: positions, lanes × K
    b: "np.ndarray | _Loads"
    c_slots: np.ndarray | None = None  # mma form: the slot of each C register


class GemmExecution(WgmmaExecution):
    """T.gemm for interp.simulate._Block."""

    def lowered_gemm(self, stmt: ir.Gemm) -> "_Prepared | WgmmaLanes":
        """The gemm's lowering and its lanes' arrays, once per plan."""
        cache = _CACHE.setdefault(self.s, {})
        found = cache.get(stmt)
        if found is None:
            try:
                low = lowered.lower_gemm(self.s.plan, stmt)
            except lowered.Unlowerable as e:
                raise DiagnosticError(error("R100", str(e), stmt.span)) from None
            found = cache[stmt] = (prepare_wgmma if low.wgmma is not None else
                                   _prepare_mma if low.mma is not None else
                                   _prepare_scalar)(low)
        return found

    def _gemm(self, stmt: ir.Gemm, lanes: Lanes):
        if ITER in lanes.env:
            raise DiagnosticError(error(
                "R100", "a T.gemm inside a T.Parallel is not supported", stmt.span))
        prep = self.lowered_gemm(stmt)
        low = prep.low
        threads = prep.threads
        if not self.all_arrive(stmt, low.participants, lanes, "T.gemm is computed by") \
                and (low.mma is not None or low.wgmma is not None):
            return                  # mma.sync needs every lane of each warp, wgmma each
                                    # warpgroup's
        clear = operand(stmt.clear_accum, BOOL, lanes, self).v
        if clear.any() != clear.all():
            raise DiagnosticError(error(
                "R100", "T.gemm's clear_accum differs between the threads", stmt.span))
        if low.wgmma is not None:
            self.gemm_wgmma(stmt, prep, bool(clear.all()))
        elif low.mma is not None:
            self._gemm_mma(stmt, prep, bool(clear.all()))
        else:
            keep = np.isin(threads, lanes.env[THREAD].v)
            self._gemm_scalar(stmt, low, threads[keep], prep.flat[keep], prep.a[keep],
                              prep.b[keep], bool(clear.all()))

    # ------------------------------------------------------------------ tensor cores

    def _gemm_mma(self, stmt: ir.Gemm, prep: _Prepared, clear: bool) -> None:
        mma, c = prep.low.mma, stmt.c
        warps = prep.low.participants[1] // lowered.WARP
        # integers exactly (int64, wrapped into int32 at every step), floats in float64
        wide = np.int64 if c.dtype.is_int else np.float64
        self.gemm_slots(c, prep.threads, prep.flat, prep.c_slots, stmt, "writes")
        a = _tiles(self.mma_registers(mma.a, prep.a, stmt).astype(wide), warps,
                   fragment_map(lowered.mma_a_position, mma.a), (16, mma.k))
        b = _tiles(self.mma_registers(mma.b, prep.b, stmt).astype(wide), warps,
                   fragment_map(lowered.mma_b_position, mma.b), (mma.k, 8))
        shape = prep.threads.shape                        # count, tiles_m, tiles_n, 4
        if clear:
            acc = np.zeros((warps, shape[1], shape[2], 16, 8), dtype=wide)
        else:
            old = self.read_registers(c, prep.threads.reshape(-1), prep.flat.reshape(-1),
                                      stmt.span)
            acc = _tiles(old.reshape(shape).astype(wide), warps, C_MAP, (16, 8))
        with np.errstate(all="ignore"):
            for step in range(mma.steps):      # one mma per (A tile, B tile) per step
                acc = stored(c.dtype, acc + np.einsum(
                    "wmik,wnkj->wmnij", a[:, :, step], b[:, :, step])).astype(wide)
        rows, cols = C_MAP
        per_lane = acc[:, :, :, rows, cols]               # warps, mi, ni, lane, register
        values = per_lane.transpose(0, 3, 1, 2, 4).reshape(-1)
        self.write_registers(c, prep.threads.reshape(-1), prep.flat.reshape(-1), values,
                             stmt.span)

    def mma_registers(self, op: lowered.MmaOperand, loads: _Loads,
                      stmt: ir.Gemm) -> np.ndarray:
        """Each lane's elements of one operand (thread, tile, step, element): loaded
        from shared memory, or its own fragment registers."""
        if op.ldmatrix is not None:
            values = self.ldmatrix(op, loads, stmt)
        elif op.slot is None:
            values = self.gemm_operand(op.buffer, loads.threads, loads.elements, stmt)
        else:
            self.gemm_slots(op.buffer, loads.threads, loads.elements, loads.slots, stmt,
                            "reads")
            values = self.read_registers(op.buffer, loads.threads.reshape(-1),
                                         loads.elements.reshape(-1), stmt.span
                                         ).reshape(loads.elements.shape)
        return values

    def ldmatrix(self, op: lowered.MmaOperand, loads: _Loads, stmt: ir.Gemm) -> np.ndarray:
        """An ldmatrix per tile and step: each supplying lane (8 per matrix) reads its
        16-byte row through the race-tracked accessor, and every lane receives its
        registers by the instruction's map (codegen.lower.ldmatrix.distribute) — so a
        wrong row address is a wrong value, not a silent one."""
        count, tiles, steps, _ = loads.rows.shape
        plan = op.ldmatrix
        supplies = np.arange(count) % lowered.WARP < ldmatrix.ROW * plan.matrices
        threads = np.broadcast_to(loads.threads[:, :, :, :1], loads.rows.shape)
        read = self.gemm_operand(op.buffer, threads[supplies], loads.rows[supplies], stmt)
        rows = np.zeros(loads.rows.shape, dtype=read.dtype)
        rows[supplies] = read
        per_warp = rows.reshape(count // lowered.WARP, lowered.WARP, tiles, steps,
                                ldmatrix.ROW).transpose(0, 2, 3, 1, 4)
        got = ldmatrix.distribute(per_warp, plan.trans, plan.matrices)
        return got.reshape(count // lowered.WARP, tiles, steps, lowered.WARP, -1) \
            .transpose(0, 3, 1, 2, 4).reshape(loads.elements.shape)

    def gemm_slots(self, buffer: ir.Buffer, threads: np.ndarray, elements: np.ndarray,
                   slots: np.ndarray, stmt: ir.Gemm, verb: str) -> None:
        """The CUDA names a register by its slot: each must be the slot the buffer's
        layout keeps the element in, or the mma works on another element's value."""
        layout = self.s.layouts.fragments[buffer]
        flat = elements.reshape(-1)
        want = layout.slots_of(np.unravel_index(flat, buffer.shape))
        wrong = want != slots.reshape(-1)
        if wrong.any():
            i = int(np.argmax(wrong))
            self.report.add("R300", f"T.gemm's mma {verb} slot {int(slots.reshape(-1)[i])} "
                            f"of thread {int(threads.reshape(-1)[i])} as "
                            f"{self.element(buffer, flat[i])}, which {buffer.name}'s layout "
                            f"keeps in slot {int(want[i])} ({layout.describe()})",
                            stmt.span, key=("gemm-slot", stmt))

    # ------------------------------------------------------------------ scalar form

    def _gemm_scalar(self, stmt: ir.Gemm, low: lowered.GemmLowering, threads, flat,
                     a_at, b_at, clear: bool) -> None:
        c = stmt.c
        work = np.dtype(low.work)
        if clear:
            acc = np.zeros(len(threads), dtype=work)
        else:
            acc = self.read_registers(c, threads, flat, stmt.span).astype(work)
        rows = np.broadcast_to(threads[:, None], a_at.shape)
        a = self.gemm_operand(stmt.a, rows, a_at, stmt).astype(work)
        b = self.gemm_operand(stmt.b, rows, b_at, stmt).astype(work)
        with np.errstate(all="ignore"):
            for k in range(low.k):        # k order, rounded into C at every step
                acc = stored(c.dtype, acc + a[:, k] * b[:, k]).astype(work)
        self.write_registers(c, threads, flat, acc, stmt.span)

    def gemm_operand(self, buffer: ir.Buffer, threads: np.ndarray, at: np.ndarray,
                     stmt: ir.Gemm) -> np.ndarray:
        """The shared operand elements `at` that `threads` (same shape) read, each
        (thread, element) pair read once through the race-tracked shared accessor."""
        key = threads.reshape(-1) * buffer.size + at.reshape(-1)
        pairs, inverse = np.unique(key, return_inverse=True)
        values = self.read_shared(buffer, pairs % buffer.size, stmt.span,
                                  pairs // buffer.size)
        return values[inverse].reshape(at.shape)


@functools.cache
def _fragment_map(position, elements: int, *packed: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) in the tile of each (lane, element) under an mma fragment map."""
    env = {"lane": np.arange(lowered.WARP)[:, None], "reg": np.arange(elements)[None, :]}
    return tuple(np.broadcast_to(e.evaluate(env), (lowered.WARP, elements))
                 for e in position(Var("lane"), Var("reg"), *packed))


def fragment_map(position, op: lowered.MmaOperand) -> tuple[np.ndarray, np.ndarray]:
    """An operand's map, for its element width."""
    return _fragment_map(position, op.registers, op.packed)


C_MAP = _fragment_map(lowered.mma_c_position, 4)


def _tiles(registers: np.ndarray, warps: int, fragment_map, tile: tuple[int, int]):
    """The tiles each warp's mma sees: registers (threads, i, j, register) placed by the
    fragment map, per (warp, i, j)."""
    _, i, j, regs = registers.shape
    per_warp = registers.reshape(warps, lowered.WARP, i, j, regs).transpose(0, 2, 3, 1, 4)
    out = np.zeros((warps, i, j) + tile)
    rows, cols = fragment_map
    out[:, :, :, rows, cols] = per_warp
    return out


def _prepare_scalar(low: lowered.GemmLowering) -> _Prepared:
    """Per lane (thread, slot): its absolute thread, its element of C, and the flat
    positions in A and B it reads, lanes × K."""
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
    return _Prepared(low, t + offset, row * low.n + col, np.ascontiguousarray(a),
                     np.ascontiguousarray(b))


def _prepare_mma(low: lowered.GemmLowering) -> _Prepared:
    offset, count = low.participants
    mma = low.mma

    def grid(shape, names):
        axes = [np.arange(n, dtype=np.int64) for n in shape]
        return {name: axis.reshape([-1 if i == d else 1 for i in range(len(shape))])
                for d, (name, axis) in enumerate(zip(names, axes))}

    def loads(op: lowered.MmaOperand) -> _Loads:
        shape = (count, op.tiles, mma.steps, op.registers)
        env = grid(shape, (lowered.THREAD, lowered.TILE, lowered.STEP, lowered.REG))
        threads = np.broadcast_to(env[lowered.THREAD] + offset, shape)
        elements = np.broadcast_to(op.index.evaluate(env), shape)
        slots = None if op.slot is None else np.broadcast_to(op.slot.evaluate(env), shape)
        rows = None
        if op.ldmatrix is not None:
            starts = np.broadcast_to(op.ldmatrix.address.evaluate(env), shape[:3] + (1,))
            rows = starts + np.arange(ldmatrix.ROW)
        return _Loads(threads, elements, slots, rows)

    shape = (count, mma.a.tiles, mma.b.tiles, 4)
    env = grid(shape, (lowered.THREAD, lowered.MI, lowered.NI, lowered.REG))
    flat = np.broadcast_to(mma.c_index.evaluate(env), shape)
    slots = np.broadcast_to(mma.c_slot(env[lowered.MI], env[lowered.NI], env[lowered.REG]),
                            shape)
    return _Prepared(low, np.broadcast_to(env[lowered.THREAD] + offset, shape), flat,
                     loads(mma.a), loads(mma.b), slots)
