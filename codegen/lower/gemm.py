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

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import IndexExpr, Var, floordiv, mod
from verify_reducer.spec.layout import Layout, index_names

WARP = 32
TILE_M, TILE_N = 16, 8            # the mma.m16n8k16 accumulator tile of one warp
THREAD, SLOT, K = "t", "s", "kk"  # the variables of the per-thread expressions
WORK = {"float32": "float32", "float16": "float32", "int32": "int32"}


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
    # A in a fragment: the thread (over THREAD, K) whose register holds A[row, k] for
    # slot s of thread t — in t's own warp and quad, so a warp shuffle reaches it — and
    # that register's slot (over SLOT, K), the same for every lane of the warp
    a_from: tuple[IndexExpr, IndexExpr] | None = None
    # B in a fragment: likewise, the thread and slot holding B[k, col]
    b_from: tuple[IndexExpr, IndexExpr] | None = None

    def describe(self) -> str:
        wm, wn = self.warps
        shuffle = "".join(
            f"; {name} from thread {src[0]}'s slot {src[1]} (a warp shuffle)"
            for name, src in (("A", self.a_from), ("B", self.b_from)) if src is not None)
        return (f"mma m16n8k16 accumulator: {wm}×{wn} warps, {self.slots} slot(s) per "
                f"thread, slot s of thread t holds {self.stmt.c.name}[{self.row}, "
                f"{self.col}]; k = 0..{self.k - 1} in order: acc += "
                f"{self.stmt.a.name}[{self.a_index}] * {self.stmt.b.name}[{self.b_index}] "
                f"in {self.work}{shuffle}")


def lower_gemm(plan, stmt: ir.Gemm) -> GemmLowering:
    """The thread program of one gemm, under the plan's layouts (plan.layouts)."""
    layouts = plan.layouts
    offset, count = layouts.participants[stmt]
    if count % WARP:
        raise Unlowerable(f"T.gemm runs on {count} threads, not a whole number of warps")
    m, n, k = stmt.mnk
    split = warp_partition(stmt.policy, m, n, count // WARP)
    if isinstance(split, str):
        raise Unlowerable(split)
    wm, wn = split
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
    a_from = None
    if stmt.a.scope == "fragment":
        source = warp * WARP + floordiv(lane, 4) * 4 + floordiv(mod(kk, 8), 2)
        slot = mod(kk, 2) + floordiv(tile, 2) * 2 + floordiv(mod(kk, 16), 8) * 4 \
            + (mod(group, tiles_m) + floordiv(kk, 16) * tiles_m) * 8
        a_from = (source, slot)
    b_from = None
    if stmt.b.scope == "fragment":
        # column col mod 8 of the warp's tile is 2·(lane mod 4) + (slot mod 2)
        source = warp * WARP + (mod(lane, 4) * 2 + mod(tile, 2)) * 4 \
            + floordiv(mod(kk, 8), 2)
        slot = mod(kk, 2) + floordiv(mod(kk, 16), 8) * 2 \
            + (floordiv(kk, 16) + floordiv(group, tiles_m) * (k // 16)) * 4
        b_from = (source, slot)
    slots = m * n // count
    return GemmLowering(stmt, m, n, k, (wm, wn), (offset, count), slots,
                        row, col, a_index, b_index, WORK[stmt.c.dtype.name], a_from,
                        b_from)
