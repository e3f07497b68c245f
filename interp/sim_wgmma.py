"""T.gemm as Hopper's wgmma in the simulator: codegen.lower.wgmma's Wgmma executed per
warpgroup, each operand element read where its descriptor says the hardware reads it.

For every instruction (warpgroup, accumulator tile, N block, k step) the A tile (64 ×
16) and the B tile (N × 16) are assembled element by element: the byte the descriptor's
canonical layout gives (WgmmaOperand.byte: the tile's start, LBO, SBO, the major
order), swizzled as the mode swizzles it, and the element the stage holds at that byte
(Swizzle.logical) is read through the race-tracked shared accessor (R504 against the
plan's barriers, R502 for a never-written word). A descriptor that names a wrong
element therefore computes a wrong value, which the comparison with the interpreter
catches. The reads are the warpgroup's: each element is charged to one of its threads,
spread over all 128 (a wgmma has no per-lane reads), which is what the race tracking
needs (a write by another thread of the block without a barrier between is a race).
The accumulator registers are handed back by the hardware's D fragment (c_element) into
the slots the lowering names, which must be C's layout's (R300). Each k step's exact
products (16) are summed and added to C, rounded once into C's dtype: one of the orders
interp.gemm's bound admits, as for mma.sync (docs/semantics.md §9.1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower import wgmma as lowered
from verify_reducer.codegen.lower.gemm import GemmLowering
from verify_reducer.spec import ir

from .evaluate import stored


@dataclass(frozen=True)
class WgmmaLanes:
    low: GemmLowering
    threads: np.ndarray      # (count, tiles, nblocks, registers): the absolute thread
    flat: np.ndarray         # C's element of each register
    slots: np.ndarray        # the slot the CUDA names for it
    tile_rows: np.ndarray    # its row and column inside the instruction's tile
    tile_cols: np.ndarray
    a_threads: np.ndarray    # (groups, tiles, steps, 64, 16): who reads A's element
    a_elements: np.ndarray   # the logical element of A each reads
    b_threads: np.ndarray    # (groups, nblocks, steps, N, 16)
    b_elements: np.ndarray
    # A in registers (the rs form): per (thread, tile, step, element) its A element,
    # the slot the CUDA reads it from, and its (x, y) in the instruction's A tile
    a_slots: np.ndarray | None = None
    a_x: np.ndarray | None = None
    a_y: np.ndarray | None = None


def prepare_wgmma(low: GemmLowering) -> WgmmaLanes:
    w = low.wgmma
    offset, count = low.participants
    groups, warps = count // lowered.WARPGROUP, count // 32
    t, tile, nblock, reg = np.ix_(np.arange(count), np.arange(w.tiles),
                                  np.arange(w.nblocks), np.arange(w.registers))
    shape = (count, w.tiles, w.nblocks, w.registers)
    row, col = w.c_element(t, tile, nblock, reg, warps)
    flat = np.broadcast_to(row * low.n + col, shape)
    slots = np.broadcast_to(w.c_slot(tile, nblock, reg), shape)
    lane, warp = t % 32, t // 32
    tile_rows = np.broadcast_to((warp % 4) * 16 + lane // 4 + (reg // 2) % 2 * 8, shape)
    tile_cols = np.broadcast_to(reg // 4 * 8 + lane % 4 * 2 + reg % 2, shape)
    if w.registers_a:
        return _with_registers(low, np.broadcast_to(t + offset, shape), flat, slots,
                               tile_rows, tile_cols, *_operand(w.b, w.instr_n, offset, {
                                   lowered.GROUP: np.arange(groups),
                                   lowered.NBLOCK: np.arange(w.nblocks),
                                   lowered.STEP: np.arange(w.steps)}))
    a_threads, a_elements = _operand(w.a, lowered.INSTR_M, offset, {
        lowered.GROUP: np.arange(groups), lowered.TILE: np.arange(w.tiles),
        lowered.STEP: np.arange(w.steps)})
    b_threads, b_elements = _operand(w.b, w.instr_n, offset, {
        lowered.GROUP: np.arange(groups), lowered.NBLOCK: np.arange(w.nblocks),
        lowered.STEP: np.arange(w.steps)})
    return WgmmaLanes(low, np.broadcast_to(t + offset, shape), flat, slots, tile_rows,
                      tile_cols, a_threads, a_elements, b_threads, b_elements)


def _with_registers(low, threads, flat, slots, tile_rows, tile_cols, b_threads,
                    b_elements) -> WgmmaLanes:
    """The rs form's lanes: A's elements per (thread, tile, step, element) from the
    lowering's register map, and where each sits in its instruction's 64 × 16 tile."""
    w, (offset, count) = low.wgmma, low.participants
    a = w.a
    t, tile, step, reg = np.ix_(np.arange(count), np.arange(w.tiles), np.arange(w.steps),
                                np.arange(a.elements))
    shape = (count, w.tiles, w.steps, a.elements)
    env = {lowered.THREAD: t, lowered.TILE: tile, lowered.STEP: step, lowered.REG: reg}
    row = np.broadcast_to(a.row.evaluate(env), shape)
    kk = np.broadcast_to(a.kk.evaluate(env), shape)
    elements = kk * low.m + row if low.stmt.transpose_a else row * low.k + kk
    row0 = tile * (16 * (count // 32)) + (t // lowered.WARPGROUP) * lowered.INSTR_M
    return WgmmaLanes(low, threads, flat, slots, tile_rows, tile_cols,
                      np.broadcast_to(t + offset, shape), elements, b_threads, b_elements,
                      np.broadcast_to(a.slot.evaluate(env), shape),
                      np.broadcast_to(row - row0, shape),
                      np.broadcast_to(kk - step * lowered.INSTR_K, shape))


def _operand(op: lowered.WgmmaOperand, extent: int, offset: int, axes: dict):
    """(threads, elements) of every instruction's tile of one operand: axes (group and
    the two the operand's start depends on, in order) × extent (x) × 16 (y)."""
    names = list(axes)
    grids = np.meshgrid(*axes.values(), indexing="ij")
    env = {name: grid[..., None, None] for name, grid in zip(names, grids)}
    env.setdefault(lowered.TILE, 0)
    env.setdefault(lowered.NBLOCK, 0)
    x = np.arange(extent)[:, None]
    y = np.arange(lowered.INSTR_K)[None, :]
    start = op.start(env)
    byte = op.byte(start, x, y)
    elements = op.swizzle.logical(op.swizzle.swizzle(byte))
    group = env[lowered.GROUP]
    threads = offset + group * lowered.WARPGROUP + (x * lowered.INSTR_K + y) % \
        lowered.WARPGROUP
    shape = grids[0].shape + (extent, lowered.INSTR_K)
    return np.broadcast_to(threads, shape), np.broadcast_to(elements, shape)


class WgmmaExecution:
    """The wgmma form of T.gemm for interp.simulate._Block (through sim_gemm)."""

    def gemm_wgmma(self, stmt: ir.Gemm, lanes: WgmmaLanes, clear: bool) -> None:
        w, c = lanes.low.wgmma, stmt.c
        wide = np.float64
        self.gemm_slots(c, lanes.threads, lanes.flat, lanes.slots, stmt, "writes")
        a = self._wgmma_a(stmt, lanes).astype(wide)
        b = self.gemm_operand(stmt.b, lanes.b_threads, lanes.b_elements, stmt).astype(wide)
        count = lanes.threads.shape[0]
        groups = count // lowered.WARPGROUP
        n = w.instr_n
        acc = np.zeros((groups, w.tiles, w.nblocks, lowered.INSTR_M, n), dtype=wide)
        if not clear:
            old = self.read_registers(c, lanes.threads.reshape(-1), lanes.flat.reshape(-1),
                                      stmt.span).astype(wide)
            g, ti, nb = self._register_tiles(lanes)
            acc[g, ti, nb, lanes.tile_rows.reshape(-1), lanes.tile_cols.reshape(-1)] = old
        with np.errstate(all="ignore"):
            for step in range(w.steps):        # one wgmma per (tile, N block) per step
                acc = stored(c.dtype, acc + np.einsum(
                    "gtxy,gnzy->gtnxz", a[:, :, step], b[:, :, step])).astype(wide)
        g, ti, nb = self._register_tiles(lanes)
        values = acc[g, ti, nb, lanes.tile_rows.reshape(-1), lanes.tile_cols.reshape(-1)]
        self.write_registers(c, lanes.threads.reshape(-1), lanes.flat.reshape(-1), values,
                             stmt.span)

    def _wgmma_a(self, stmt: ir.Gemm, lanes: WgmmaLanes) -> np.ndarray:
        """A's instruction tiles (groups, tiles, steps, 64, 16): read from shared memory
        at the descriptors' elements, or assembled from the threads' registers, each
        read from the slot the CUDA names (R300 where the layout keeps it elsewhere)."""
        if lanes.a_slots is None:
            return self.gemm_operand(stmt.a, lanes.a_threads, lanes.a_elements, stmt)
        self.gemm_slots(stmt.a, lanes.a_threads, lanes.a_elements, lanes.a_slots, stmt,
                        "reads")
        values = self.read_registers(stmt.a, lanes.a_threads.reshape(-1),
                                     lanes.a_elements.reshape(-1), stmt.span)
        count, tiles, steps, _ = lanes.a_threads.shape
        groups = count // lowered.WARPGROUP
        out = np.zeros((groups, tiles, steps, lowered.INSTR_M, lowered.INSTR_K))
        t, ti, st, _ = np.indices(lanes.a_threads.shape)
        out[(t // lowered.WARPGROUP).reshape(-1), ti.reshape(-1), st.reshape(-1),
            lanes.a_x.reshape(-1), lanes.a_y.reshape(-1)] = values
        return out

    @staticmethod
    def _register_tiles(lanes: WgmmaLanes):
        """(group, tile, N block) of every accumulator register, flattened."""
        count, tiles, nblocks, regs = lanes.threads.shape
        t, ti, nb, _ = np.indices((count, tiles, nblocks, regs))
        return (t // lowered.WARPGROUP).reshape(-1), ti.reshape(-1), nb.reshape(-1)
