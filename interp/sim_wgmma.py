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

import dataclasses
from dataclasses import dataclass

import numpy as np

from verify_reducer.codegen.lower import wgmma as lowered
from verify_reducer.codegen.lower.gemm import GemmLowering
from verify_reducer.spec import ir

from .evaluate import stored


@dataclass(frozen=True)
class WgmmaLanes:
    """Everything an execution reads, derived once per plan: per accumulator register
    (flattened over thread, tile, N block, register) its thread, element, slot and
    place in its instruction's tile; per operand element its reader and element."""
    low: GemmLowering
    threads: np.ndarray      # the absolute thread of each accumulator register
    flat: np.ndarray         # C's element it holds
    slots: np.ndarray        # the slot the CUDA names for it
    at: tuple                # (group, tile, N block, row, column) in the tiles' array
    a_threads: np.ndarray    # (groups, tiles, steps, 64, 16): who reads A's element
    a_elements: np.ndarray   # the logical element of A each reads
    b_threads: np.ndarray    # (groups, nblocks, steps, N, 16)
    b_elements: np.ndarray
    # A in registers (the rs form): per (thread, tile, step, element), flattened, its A
    # element and the slot the CUDA reads it from (a_threads, a_elements), and where it
    # sits: (group, tile, step, x, y) in the A tiles' array
    a_slots: np.ndarray | None = None
    a_at: tuple | None = None


def prepare_wgmma(low: GemmLowering) -> WgmmaLanes:
    w = low.wgmma
    offset, count = low.participants
    groups, warps = count // lowered.WARPGROUP, count // 32
    t, tile, nblock, reg = (a.reshape(-1) for a in np.indices(
        (count, w.tiles, w.nblocks, w.registers)))
    row, col = w.c_element(t, tile, nblock, reg, warps)
    row0 = tile * (16 * warps) + (t // lowered.WARPGROUP) * lowered.INSTR_M
    at = (t // lowered.WARPGROUP, tile, nblock, row - row0, col - nblock * w.instr_n)
    b_threads, b_elements = _operand(w.b, w.instr_n, offset, {
        lowered.GROUP: np.arange(groups), lowered.NBLOCK: np.arange(w.nblocks),
        lowered.STEP: np.arange(w.steps)})
    lanes = WgmmaLanes(low, t + offset, row * low.n + col, w.c_slot(tile, nblock, reg),
                       at, None, None, b_threads, b_elements)
    if w.registers_a:
        return _with_registers(lanes)
    a_threads, a_elements = _operand(w.a, lowered.INSTR_M, offset, {
        lowered.GROUP: np.arange(groups), lowered.TILE: np.arange(w.tiles),
        lowered.STEP: np.arange(w.steps)})
    return dataclasses.replace(lanes, a_threads=a_threads, a_elements=a_elements)


def _with_registers(lanes: WgmmaLanes) -> WgmmaLanes:
    """The rs form's lanes: A's elements per (thread, tile, step, element) from the
    lowering's register map, and where each sits in its instruction's 64 × 16 tile."""
    low = lanes.low
    w, (offset, count) = low.wgmma, low.participants
    a = w.a
    t, tile, step, reg = (x.reshape(-1) for x in np.indices(
        (count, w.tiles, w.steps, a.elements)))
    env = {lowered.THREAD: t, lowered.TILE: tile, lowered.STEP: step, lowered.REG: reg}
    row = np.broadcast_to(a.row.evaluate(env), t.shape)
    kk = np.broadcast_to(a.kk.evaluate(env), t.shape)
    elements = kk * low.m + row if low.stmt.transpose_a else row * low.k + kk
    row0 = tile * (16 * (count // 32)) + (t // lowered.WARPGROUP) * lowered.INSTR_M
    return dataclasses.replace(
        lanes, a_threads=t + offset, a_elements=elements,
        a_slots=np.broadcast_to(a.slot.evaluate(env), t.shape),
        a_at=(t // lowered.WARPGROUP, tile, step, row - row0, kk - step * lowered.INSTR_K))


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
        groups = lanes.low.participants[1] // lowered.WARPGROUP
        acc = np.zeros((groups, w.tiles, w.nblocks, lowered.INSTR_M, w.instr_n), dtype=wide)
        if not clear:
            acc[lanes.at] = self.read_registers(c, lanes.threads, lanes.flat, stmt.span)
        with np.errstate(all="ignore"):
            for step in range(w.steps):        # one wgmma per (tile, N block) per step
                acc = stored(c.dtype, acc + np.einsum(
                    "gtxy,gnzy->gtnxz", a[:, :, step], b[:, :, step])).astype(wide)
        self.write_registers(c, lanes.threads, lanes.flat, acc[lanes.at], stmt.span)

    def _wgmma_a(self, stmt: ir.Gemm, lanes: WgmmaLanes) -> np.ndarray:
        """A's instruction tiles (groups, tiles, steps, 64, 16): read from shared memory
        at the descriptors' elements, or assembled from the threads' registers, each
        read from the slot the CUDA names (R300 where the layout keeps it elsewhere)."""
        if lanes.a_slots is None:
            return self.gemm_operand(stmt.a, lanes.a_threads, lanes.a_elements, stmt)
        self.gemm_slots(stmt.a, lanes.a_threads, lanes.a_elements, lanes.a_slots, stmt,
                        "reads")
        w = lanes.low.wgmma
        groups = lanes.low.participants[1] // lowered.WARPGROUP
        out = np.zeros((groups, w.tiles, w.steps, lowered.INSTR_M, lowered.INSTR_K))
        out[lanes.a_at] = self.read_registers(stmt.a, lanes.a_threads, lanes.a_elements,
                                              stmt.span)
        return out
