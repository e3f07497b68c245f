"""The gemms of the thread program: which warps split a T.gemm's accumulator, which
element each (thread, register slot) holds, and which operand elements it reads.

Contract. `warp_partition(policy, m, n, warps)` is TileLang's split of the M×N
accumulator among the warps (src/cuda/op/gemm.cc, ComputeDefaultWarpPartition, the mma
path: each warp owns a multiple of 16 rows and 8 columns); `accumulator_layout(...)` the
fragment layout TileLang gives the accumulator on that path (src/layout/gemm_layouts.cc,
MakeGemmFragmentC: the m16n8k16 C tile, warps repeated on the thread axis, the warp's
tiles on the slot axis). codegen.layout places a gemm's accumulator with it.
`lower_gemm(plan, stmt)` returns a GemmLowering: per accumulator slot s of thread t,
the element (row(t, s), col(t, s)) it computes, as spec.indexexpr expressions over t
(relative to the participants) and s, and the operand elements it reads, A at
a_index(row, k) and B at b_index(k, col) for k = 0 .. K−1. interp.sim_gemm EXECUTES it
(each lane's slots from the operands it reads, every shared read race-checked, every
register access checked against the accumulator's layout), codegen.cuda_gemm PRINTS it
(a loop over the slots, a loop over k); neither computes a row, a column or a slot.

Arithmetic. Each slot is a chain of multiply-adds in k order in the `work` dtype,
rounded into the accumulator after every step: float32 and float16 accumulators work in
float32 (a product of float16/bfloat16/float8 operands is exact there; the add rounds to
float32, and into a float16 accumulator once more, as TileLang's half arithmetic does —
the interpreter's bound admits that second rounding), int32 in int32 with wrap-around.
Every such chain is one order of the sum the interpreter bounds (interp.gemm,
docs/semantics.md §9.1)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import IndexExpr, Var, floordiv, mod
from verify_reducer.spec.layout import Layout, index_names

from .atomics import plan_target
from .ldmatrix import ROW, Ldmatrix, plan_ldmatrix
from . import wgmma as hopper
from .wgmma import Wgmma, WgmmaRegisters, plan_wgmma, wgmma_refusal

WARP = 32
TILE_M, TILE_N = 16, 8            # the mma.m16n8k16 accumulator tile of one warp
THREAD, SLOT, K = "t", "s", "kk"  # the variables of the per-thread expressions
WORK = {"float32": "float32", "float16": "float32", "int32": "int32"}
TILE, STEP, REG = "tile", "ks", "r"  # the variables of an mma operand's load expressions
MI, NI = "mi", "ni"               # a warp's C tile: its A tile and its B tile
# operand dtypes an mma.sync takes (m16n8k16 for 16-bit, m16n8k32 for 8-bit elements),
# the accumulator dtypes it writes, and each dtype's PTX type name
MMA_OPERANDS = {"float16": ("float32", "float16"), "bfloat16": ("float32",),
                "int8": ("int32",), "float8_e4m3fn": ("float32",),
                "float8_e5m2": ("float32",)}
PTX_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "s32",
             "int8": "s8", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def mma_k(bits: int) -> int:
    """The k extent of one mma.sync: 16 for 16-bit elements (m16n8k16), 32 for 8-bit
    ones (m16n8k32): four 32-bit registers of A per lane either way."""
    return 8 * (32 // bits)


class Unlowerable(Exception):
    """A gemm this lowering has no thread program for (the message says why)."""


def warp_partition(policy: str, m: int, n: int, warps: int) -> tuple[int, int] | str:
    """(warps along M, warps along N), or why none fits (TileLang's fatal error)."""
    def valid(wm: int, wn: int) -> bool:
        return wm * wn == warps and m % (wm * TILE_M) == 0 and n % (wn * TILE_N) == 0
    found = None
    if m % TILE_M or n % TILE_N:
        found = None
    elif policy == "FullRow":
        found = next(((wm, warps // wm) for wm in range(warps, 0, -1)
                      if warps % wm == 0 and valid(wm, warps // wm)), None)
    elif policy == "FullCol":
        found = next(((warps // wn, wn) for wn in range(warps, 0, -1)
                      if warps % wn == 0 and valid(warps // wn, wn)), None)
    else:                          # Square: the split closest to C's aspect ratio
        best = None
        for wm in range(1, warps + 1):
            if warps % wm or not valid(wm, warps // wm):
                continue
            wn = warps // wm
            balance = abs((m / (wm * TILE_M)) / (n / (wn * TILE_N)) - m / n)
            if best is None or balance < best[0]:
                best = (balance, (wm, wn))
        found = None if best is None else best[1]
    if found is None:
        return (f"T.gemm's {m}×{n} accumulator cannot be split among {warps} warp(s) "
                f"(policy {policy}): each warp must own a multiple of {TILE_M} rows and "
                f"{TILE_N} columns, as TileLang's mma path requires")
    return found


def gemm_split(stmt: ir.Gemm, participants: tuple[int, int], target,
               wgmma: bool = True) -> tuple[int, int] | str:
    """The warps along M and N of a gemm's accumulator on target, or why none fits:
    every warp along M where the gemm runs as wgmma (a warpgroup's four warps own 16
    rows each of its 64-row instruction tiles, as TileLang's Hopper layout; `wgmma`
    False: another gemm into the same accumulator cannot, and one layout serves both),
    else TileLang's mma split (warp_partition). codegen.layout places the accumulator
    with it and lower_gemm reads it back from the layouts (LayoutMap.gemm_splits)."""
    offset, count = participants
    if count % WARP:
        return f"T.gemm runs on {count} threads, not a whole number of warps"
    if wgmma and target is not None and not wgmma_refusal(stmt, target, participants):
        return count // WARP, 1
    m, n, _ = stmt.mnk
    return warp_partition(stmt.policy, m, n, count // WARP)


def accumulator_layout(m: int, n: int, wm: int, wn: int, offset: int) -> Layout:
    """MakeGemmFragmentC(m, n, m / wm, n / wn): element (i, j) of the warp's 16×8 tile
    lives in lane 4·(i mod 8) + (j mod 8) / 2 at slot (j mod 2) + 2·((i mod 16) / 8);
    warps repeat over tiles of 16 rows (fastest) and 8 columns; the tiles a warp owns
    repeat on the slot axis, in steps of 4, rows first."""
    i, j = (Var(x) for x in index_names(2))
    ii, jj = mod(i, TILE_M * wm), mod(j, TILE_N * wn)
    lane = mod(i, 8) * 4 + floordiv(mod(j, 8), 2)
    warp = floordiv(ii, TILE_M) + floordiv(jj, TILE_N) * wm
    tiles_m = m // (TILE_M * wm)
    slot = mod(j, 2) + floordiv(mod(i, TILE_M), 8) * 2 \
        + (floordiv(i, TILE_M * wm) + floordiv(j, TILE_N * wn) * tiles_m) * 4
    return Layout((m, n), index_names(2), lane + warp * WARP, slot, WARP * wm * wn,
                  1, offset)


def _operand_indices(transposed: bool) -> tuple[Var, Var]:
    """The (row, column) variables of an operand's logical element — of the M×K A or
    the K×N B the mma reads — over the buffer's own index variables: a transposed
    operand is stored the other way round, so its layout names the same element by
    the swapped pair."""
    first, second = (Var(x) for x in index_names(2))
    return (second, first) if transposed else (first, second)


def operand_layout_a(m: int, k: int, wm: int, wn: int, offset: int,
                     transposed: bool = False) -> Layout:
    """MakeGemmFragmentA for 16-bit A in a fragment (TileLang's gemm_rs): in each 16×16
    tile of A a lane holds the elements the m16n8k16 A operand gives it — (i, j) in lane
    4·(i mod 8) + (j mod 8)/2 at slot (j mod 2) + 2·((i mod 16)/8) + 4·((j mod 16)/8) —
    warps over 16-row tiles as for C, replicated over the warps that split N (each needs
    the same rows), and the tiles a warp owns on the slot axis in steps of 8, rows
    first. transposed: A stored K×M (transpose_A), each element where the same
    logical A[i, j] is."""
    i, j = _operand_indices(transposed)
    rep = Var("rep")
    tiles_m = m // (TILE_M * wm)
    lane = mod(i, 8) * 4 + floordiv(mod(j, 8), 2)
    warp = floordiv(mod(i, TILE_M * wm), TILE_M) + rep * wm
    slot = mod(j, 2) + floordiv(mod(i, TILE_M), 8) * 2 + floordiv(mod(j, 16), 8) * 4 \
        + (floordiv(i, TILE_M * wm) + floordiv(j, 16) * tiles_m) * 8
    return Layout((k, m) if transposed else (m, k), index_names(2), lane + warp * WARP,
                  slot, WARP * wm * wn, wn, offset)


def operand_layout_b(k: int, n: int, wm: int, wn: int, offset: int,
                     transposed: bool = False) -> Layout:
    """16-bit B in a fragment (TileLang's gemm_sr / gemm_rr): in each
    16×8 tile of B (k rows, n columns) a lane holds the elements the m16n8k16 B operand
    gives it — (kk, j) in lane 4·(j mod 8) + (kk mod 8)/2 at slot (kk mod 2) +
    2·((kk mod 16)/8) — warps over 8-column tiles as for C, replicated over the warps
    that split M (each needs the same columns), and the tiles a warp owns on the slot
    axis in steps of 4, k first. The lane that computes C's column j at step kk reads its
    B element from its own warp and quad-column, so a warp shuffle reaches it.
    transposed: B stored N×K (transpose_B), each element where the same logical
    B[kk, j] is."""
    kk, j = _operand_indices(transposed)
    rep = Var("rep")
    lane = mod(j, 8) * 4 + floordiv(mod(kk, 8), 2)
    warp = rep + floordiv(mod(j, TILE_N * wn), TILE_N) * wm
    slot = mod(kk, 2) + floordiv(mod(kk, 16), 8) * 2 \
        + (floordiv(kk, 16) + floordiv(j, TILE_N * wn) * (k // 16)) * 4
    return Layout((n, k) if transposed else (k, n), index_names(2), lane + warp * WARP,
                  slot, WARP * wm * wn, wm, offset)


def mma_a_position(lane: IndexExpr, reg: IndexExpr,
                   packed: int = 2) -> tuple[IndexExpr, IndexExpr]:
    """(row, k) in the 16×K A tile of element `reg` of lane `lane` of an mma.sync, its
    elements `packed` to a 32-bit register (PTX ISA, "Matrix Fragments for mma.m16n8k16"
    with .f16/.bf16: a0..a7, packed 2; "for mma.m16n8k32" with .s8/.e4m3/.e5m2:
    a0..a15, packed 4). The hardware's fixed map, not a choice: the lowering addresses
    loads by it and the simulator places the loaded values by it."""
    return floordiv(lane, 4) + mod(floordiv(reg, packed), 2) * 8, \
        mod(lane, 4) * packed + mod(reg, packed) + floordiv(reg, 2 * packed) * (4 * packed)


def mma_b_position(lane: IndexExpr, reg: IndexExpr,
                   packed: int = 2) -> tuple[IndexExpr, IndexExpr]:
    """(k, column) in the K×8 B tile of element `reg` of lane `lane` (b0..b3 packed 2,
    b0..b7 packed 4)."""
    return mod(lane, 4) * packed + mod(reg, packed) + floordiv(reg, packed) * (4 * packed), \
        floordiv(lane, 4)


def mma_c_position(lane: IndexExpr, reg: IndexExpr) -> tuple[IndexExpr, IndexExpr]:
    """(row, column) in the 16×8 C/D tile of register `reg` (0..3) of lane `lane`."""
    return floordiv(lane, 4) + floordiv(reg, 2) * 8, mod(lane, 4) * 2 + mod(reg, 2)


@dataclass(frozen=True)
class MmaOperand:
    """How each lane fills one operand's registers for one mma: element r (REG) of
    thread t (THREAD) for warp tile TILE at k step STEP is element `index` (flat, in the
    buffer as stored); from a fragment, the thread's own register `slot`, which the
    operand's layout must place there. Elements go `packed` to a 32-bit register
    (mma_a_position, mma_b_position); `whole`: a register's elements are adjacent, the
    first at a multiple of `packed` — one 32-bit load fills the register."""
    buffer: ir.Buffer
    registers: int                  # elements per lane per mma: 4 (A) or 2 (B) words
    tiles: int                      # the warp's tiles of this operand (along M or N)
    index: IndexExpr                # over THREAD, TILE, STEP, REG
    slot: IndexExpr | None          # over TILE, STEP, REG; None for a shared operand
    whole: bool
    packed: int                     # elements per 32-bit register: 2 or 4
    # a shared 16-bit operand whose registers one ldmatrix per tile fills (its rows
    # 16-byte aligned): the lanes' row addresses (codegen.lower.ldmatrix)
    ldmatrix: Ldmatrix | None = None


@dataclass(frozen=True)
class Mma:
    """The tensor-core form of a gemm: per k step (`k` deep), every warp loads its A
    tiles and B tiles into registers (MmaOperand) and issues one
    mma.sync.m16n8k{k}.row.col per (A tile, B tile): C tile (mi, ni) of the warp is in
    slots 4·(mi + ni·tiles_m) + r of its lanes (r = 0..3, mma_c_position), exactly the
    accumulator layout's slots (accumulator_layout)."""
    a: MmaOperand
    b: MmaOperand
    steps: int                      # K / k, in order
    instruction: str                # the PTX type suffix, e.g. "f32.f16.f16.f32"
    k: int                          # the instruction's k: 16 or 32
    c_index: IndexExpr              # C's flat element in register REG of tile (MI, NI)
                                    # of thread THREAD

    def c_slot(self, mi, ni, reg):
        """The accumulator slot the mma's register `reg` of tile (mi, ni) is."""
        return reg + (mi + ni * self.a.tiles) * 4


@dataclass(frozen=True)
class GemmLowering:
    stmt: ir.Gemm
    m: int
    n: int
    k: int
    warps: tuple[int, int]          # along M, along N
    participants: tuple[int, int]   # offset, count
    slots: int                      # accumulator slots per thread
    row: IndexExpr                  # over THREAD, SLOT
    col: IndexExpr                  # over THREAD, SLOT
    a_index: IndexExpr              # flat position in A, over "row" and K
    b_index: IndexExpr              # flat position in B, over K and "col"
    work: str                       # the dtype each multiply-add is computed in
    # the tensor-core form (the scalar fields above still name each slot's element);
    # None where the m16n8k16 instruction does not take the operands (docs/limits.md)
    mma: Mma | None = None
    # Hopper's warpgroup form (codegen.lower.wgmma), where the plan swizzled both
    # operands for it; mma is then None
    wgmma: Wgmma | None = None

    def describe(self) -> str:
        wm, wn = self.warps
        if self.wgmma is not None:
            return (f"{self.wgmma.describe()}; {wm} warps along M, {self.slots} slot(s) "
                    f"per thread, slot s of thread t holds {self.stmt.c.name}[{self.row}, "
                    f"{self.col}]")
        if self.mma is not None:
            a, b = self.mma.a, self.mma.b
            return (f"mma.sync m16n8k{self.mma.k} ({self.mma.instruction}): {wm}×{wn} warps, each "
                    f"{a.tiles}×{b.tiles} tiles of 16×8, {self.slots} slot(s) per thread, "
                    f"slot s of thread t holds {self.stmt.c.name}[{self.row}, {self.col}]; "
                    f"{self.mma.steps} k step(s) of {self.mma.k} in order; element r of "
                    f"thread t's A (its warp's tile `{TILE}`, step `{STEP}`): {_source(a)}; "
                    f"B: {_source(b)}")
        return (f"mma m16n8k16 accumulator: {wm}×{wn} warps, {self.slots} slot(s) per "
                f"thread, slot s of thread t holds {self.stmt.c.name}[{self.row}, "
                f"{self.col}]; k = 0..{self.k - 1} in order: acc += "
                f"{self.stmt.a.name}[{self.a_index}] * {self.stmt.b.name}[{self.b_index}] "
                f"in {self.work}")


def lower_gemm(plan, stmt: ir.Gemm, target=None) -> GemmLowering:
    """The thread program of one gemm, under the plan's layouts (plan.layouts), for the
    plan's target (`target` while the plan's resources are being measured)."""
    layouts = plan.layouts
    offset, count = layouts.participants[stmt]
    if count % WARP:
        raise Unlowerable(f"T.gemm runs on {count} threads, not a whole number of warps")
    m, n, k = stmt.mnk
    split = layouts.gemm_splits.get(stmt) or warp_partition(stmt.policy, m, n,
                                                             count // WARP)
    if isinstance(split, str):
        raise Unlowerable(split)
    wm, wn = split
    target = target or plan_target(plan)
    # The mma's own lane map (the hardware's, whatever the plan placed): the simulator
    # checks every lane's register against the layout codegen.layout gave C, so a plan
    # whose layout differs from it is caught there (R300), not trusted here.
    t, s = Var(THREAD), Var(SLOT)
    lane, warp, tile, group = mod(t, WARP), floordiv(t, WARP), mod(s, 4), floordiv(s, 4)
    tiles_m = m // (TILE_M * wm)
    row = mod(group, tiles_m) * (TILE_M * wm) + mod(warp, wm) * TILE_M \
        + floordiv(tile, 2) * 8 + floordiv(lane, 4)
    col = floordiv(group, tiles_m) * (TILE_N * wn) + floordiv(warp, wm) * TILE_N \
        + mod(lane, 4) * 2 + mod(tile, 2)
    r, c, kk = Var("row"), Var("col"), Var(K)
    a_index = kk * m + r if stmt.transpose_a else r * k + kk
    b_index = c * k + kk if stmt.transpose_b else kk * n + c
    slots = m * n // count
    if plan.swizzle(stmt.b) is not None:
        # the plan chose wgmma (codegen.plan_swizzle): it swizzles B only for gemms that
        # fit, whose warps lie along M, and every gemm reading B is one of them
        registers = _wgmma_registers(stmt, m, k, wm) if stmt.a.scope == "fragment" \
            else None
        return GemmLowering(stmt, m, n, k, (wm, wn), (offset, count), slots, row, col,
                            a_index, b_index, WORK[stmt.c.dtype.name],
                            wgmma=plan_wgmma(stmt, m, n, k, wm, plan.swizzle, registers))
    return GemmLowering(stmt, m, n, k, (wm, wn), (offset, count), slots,
                        row, col, a_index, b_index, WORK[stmt.c.dtype.name],
                        _mma(stmt, m, n, k, wm, wn, count, target))


def _wgmma_registers(stmt: ir.Gemm, m: int, k: int, wm: int) -> WgmmaRegisters:
    """A fragment A of a wgmma: each warp's 16 rows of an instruction tile in the mma's
    A fragment map, in operand_layout_a's slots (the layout codegen.layout gave A)."""
    t, tile, step, reg = (Var(x) for x in (hopper.THREAD, hopper.TILE, hopper.STEP,
                                           hopper.REG))
    r_in, k_in = mma_a_position(mod(t, WARP), reg, 2)
    row = tile * (TILE_M * wm) + floordiv(t, WARP) * TILE_M + r_in
    tiles_m = m // (TILE_M * wm)
    return WgmmaRegisters(stmt.a, row, step * 16 + k_in, reg + (tile + step * tiles_m) * 8)


def _source(op: MmaOperand) -> str:
    where = f"{op.buffer.name}[{op.index}]"
    if op.slot is not None:
        return f"{where}, the thread's own slot {op.slot}"
    if op.ldmatrix is not None:
        return f"{where} by {op.ldmatrix.describe()}"
    return where + (f" ({op.packed} per 32-bit load)" if op.whole else "")


def _mma(stmt: ir.Gemm, m: int, n: int, k: int, wm: int, wn: int, count: int,
         target) -> Mma | None:
    """The tensor-core form, where an mma.sync takes the dtypes on the target and K is
    whole steps (an 8-bit operand in a fragment has no layout yet: R101 before here)."""
    operand, acc = stmt.a.dtype.name, stmt.c.dtype.name
    bits = stmt.a.dtype.bits
    packed = 32 // bits
    step_k = mma_k(bits)
    if stmt.b.dtype.name != operand or acc not in MMA_OPERANDS.get(operand, ()) \
            or k % step_k or (stmt.a.dtype.is_float8 and not target.fp8_mma) \
            or (bits == 8 and "fragment" in (stmt.a.scope, stmt.b.scope)):
        return None
    t, tile, step, reg = (Var(x) for x in (THREAD, TILE, STEP, REG))
    lane, warp = mod(t, WARP), floordiv(t, WARP)
    steps = k // step_k
    # A: row of the warp's tile `tile` (along M), k of step `step`
    r_in, k_in = mma_a_position(lane, reg, packed)
    row = tile * (TILE_M * wm) + mod(warp, wm) * TILE_M + r_in
    kk = step * step_k + k_in
    tiles_m, tiles_n = m // (TILE_M * wm), n // (TILE_N * wn)
    a_slot = reg + (tile + step * tiles_m) * 8         # operand_layout_a's slot
    a = _operand(stmt.a, 4 * packed, tiles_m,
                 row * k + kk if not stmt.transpose_a else kk * m + row,
                 a_slot, count, steps, packed)
    k_in, c_in = mma_b_position(lane, reg, packed)
    col = tile * (TILE_N * wn) + floordiv(warp, wm) * TILE_N + c_in
    kk = step * step_k + k_in
    b_slot = reg + (step + tile * steps) * 4            # operand_layout_b's slot
    b = _operand(stmt.b, 2 * packed, tiles_n,
                 kk * n + col if not stmt.transpose_b else col * k + kk,
                 b_slot, count, steps, packed)
    r_in, c_in = mma_c_position(lane, reg)
    c_index = (Var(MI) * (TILE_M * wm) + mod(warp, wm) * TILE_M + r_in) * n \
        + Var(NI) * (TILE_N * wn) + floordiv(warp, wm) * TILE_N + c_in
    instruction = ".".join(PTX_TYPES[x] for x in (acc, operand, operand, acc))
    return Mma(a, b, steps, instruction, step_k, c_index)


def _operand(buffer: ir.Buffer, registers: int, tiles: int, index: IndexExpr,
             slot: IndexExpr, count: int, steps: int, packed: int) -> MmaOperand:
    """The operand's loads; `whole` decided over every lane, tile, step and element
    (a few thousand points), since a transposed or odd-strided operand breaks it."""
    if buffer.scope == "fragment":
        return MmaOperand(buffer, registers, tiles, index, slot, False, packed)
    env = {THREAD: np.arange(count)[:, None, None, None],
           TILE: np.arange(tiles)[None, :, None, None],
           STEP: np.arange(steps)[None, None, :, None],
           REG: np.arange(registers)[None, None, None, :]}
    at = np.broadcast_to(index.evaluate(env), (count, tiles, steps, registers))
    words = at.reshape(count, tiles, steps, registers // packed, packed)
    first = words[..., :1]
    whole = bool(np.all(words == first + np.arange(packed)) and np.all(first % packed == 0)
                 and buffer.size % packed == 0)  # a pipeline's stages stay 32-bit aligned
    matrix = None
    if packed == 2 and len(buffer.shape) == 2 and buffer.size % ROW == 0:
        matrix = plan_ldmatrix(index, (THREAD, TILE, STEP, REG), count, tiles, steps,
                               registers, buffer.shape[1])
    return MmaOperand(buffer, registers, tiles, index, None, whole, packed, matrix)
