"""ldmatrix: a warp loads 8×8 tiles of 16-bit elements from shared memory, each lane
supplying one 16-byte row's address and receiving its mma fragment registers.

Contract. `plan_ldmatrix(...) -> Ldmatrix | None` decides, for a shared 16-bit mma
operand (codegen.lower.gemm.MmaOperand), whether its registers are exactly what
`ldmatrix.sync.aligned.m8n8.x{2,4}[.trans].shared.b16` delivers, and if so which row
address each lane supplies: checked by brute force, every lane, tile, step and
register, against the operand's own per-lane elements. `distribute(rows, trans,
matrices)` is the instruction's fixed map (PTX ISA, "ldmatrix"): register j of lane l
holds, of matrix j (whose row r lane 8j + r supplied), row l/4's elements 2·(l mod 4)
and 2·(l mod 4) + 1 — or, `.trans`, column l/4's elements in rows 2·(l mod 4) and
2·(l mod 4) + 1. The decision verifies by it, interp.sim_gemm executes by it (each
supplying lane reads its row through the race-tracked accessor), codegen.cuda_gemm
prints the instruction."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec.indexexpr import IndexExpr, floordiv, mod, Var

WARP = 32
ROW = 8                    # 16-bit elements of one 16-byte row of an 8×8 matrix


@dataclass(frozen=True)
class Ldmatrix:
    trans: bool
    matrices: int          # per instruction: one per 32-bit register of the operand
    address: IndexExpr     # over thread, tile, step: the flat first element of the row
                           # the thread supplies (lanes ≥ 8·matrices supply none)

    def describe(self) -> str:
        return (f"ldmatrix.x{self.matrices}{'.trans' if self.trans else ''}, thread t "
                f"supplies the row at {self.address}")


def distribute(rows: np.ndarray, trans: bool, matrices: int) -> np.ndarray:
    """rows: [..., 32 lanes, 8] the elements of the row each lane supplied → [..., 32
    lanes, matrices, 2] what each lane receives, register by register."""
    lane = np.arange(WARP)
    out = []
    for j in range(matrices):
        if trans:
            got = [rows[..., ROW * j + 2 * (lane % 4) + h, lane // 4] for h in (0, 1)]
        else:
            got = [rows[..., ROW * j + lane // 4, 2 * (lane % 4) + h] for h in (0, 1)]
        out.append(np.stack(got, axis=-1))
    return np.stack(out, axis=-2)


def plan_ldmatrix(index: IndexExpr, names: tuple[str, str, str, str], count: int,
                  tiles: int, steps: int, registers: int, width: int) -> Ldmatrix | None:
    """The ldmatrix that fills exactly the registers `index` names (over the thread,
    tile, step and register variables `names`) of a buffer of rows of `width` elements,
    or None. Each warp's lane 8j + r supplies row r of matrix j: the row whose first
    element is lane 0's register-2j element plus r rows."""
    thread, tile, step, reg = names
    matrices = registers // 2
    t = Var(thread)
    lane = mod(t, WARP)
    address = index.substitute({thread: floordiv(t, WARP) * WARP,
                                reg: floordiv(mod(lane, ROW * matrices), ROW) * 2}) \
        + mod(lane, ROW) * width
    env = {thread: np.arange(count)[:, None, None, None],
           tile: np.arange(tiles)[None, :, None, None],
           step: np.arange(steps)[None, None, :, None],
           reg: np.arange(registers)[None, None, None, :]}
    starts = np.broadcast_to(address.evaluate(env), (count, tiles, steps, 1))
    if (starts % ROW).any() or (starts % width + ROW > width).any():
        return None                        # a row not 16-byte aligned within one row
    rows = starts + np.arange(ROW)                             # count, tiles, steps, 8
    per_warp = rows.reshape(count // WARP, WARP, tiles, steps, ROW).transpose(0, 2, 3, 1, 4)
    want = np.broadcast_to(index.evaluate(env), (count, tiles, steps, registers))
    want = want.reshape(count // WARP, WARP, tiles, steps, registers).transpose(0, 2, 3, 1, 4)
    for trans in (False, True):
        got = distribute(per_warp, trans, matrices).reshape(want.shape)
        if np.array_equal(got, want):
            return Ldmatrix(trans, matrices, address)
    return None
