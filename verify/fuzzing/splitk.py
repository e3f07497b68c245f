"""The split-K family (issue 27): a grid of row tiles × K slices, each block reducing its
slice of A's rows into a reducer, finalizing it into a fragment and adding the fragment
into the global output with `T.atomic_add` (or `T.atomic_max`/`T.atomic_min`), so that
Out = its initial value combined with every slice's partial, whatever order the blocks
run in. A description (`SplitK`, plain data) fixes the program: its source text
(`render`), its inputs and its expected result (`inputs`, `expected`, numpy over the
description, never our interpreter) and its smaller variants (`variants`, for the
minimizer) are functions of it alone.

Valid by construction, and exact where the semantics is: every input is a small integer;
a float32 reducer's partials and an int32 one's are exact. A float16 output is the one
place where rounding happens, and the model follows docs/semantics.md §12 to the letter:
each partial is converted to float16 as the atomic's operand, and the element's value is
the exact sum of its initial value and those operands, rounded once (the GPU's chain,
rounded at every step, lies within the bound the interpreter reports for it). An initial
value large enough that float16's spacing there is 2 or 4 makes that rounding visible."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from verify_reducer.spec.dtypes import lookup

from verify_reducer.verify.fuzzing.expr import wrap

ATOMICS = {"sum": "T.atomic_add", "max": "T.atomic_max", "min": "T.atomic_min"}
IDENTITY = {"sum": 0, "max": -2 ** 31, "min": 2 ** 31 - 1}      # int32's, and 0 for sums
FOLD = {"sum": np.add, "max": np.maximum, "min": np.minimum}
# the (accumulator, input, output) dtypes of each op: float max/min have no native
# atomic on sm_90 (the renderer refuses them), so those are int32 only
DTYPES = {"sum": (("float32", "float32", "float32"), ("float32", "float32", "float32"),
                  ("float32", "float16", "float32"), ("float32", "float16", "float16"),
                  ("float32", "float32", "float16"), ("int32", "int32", "int32"),
                  ("int32", "int8", "int32")),
          "max": (("int32", "int32", "int32"), ("int32", "int8", "int32")),
          "min": (("int32", "int32", "int32"), ("int32", "int8", "int32"))}
TILES = (1, 2, 4, 4, 8, 16)
SLICES = (4, 8, 16, 32, 64)
THREADS = (32, 64, 128, 128, 256)
# float16 holds every integer up to 2048; from 2048 (4096) its spacing is 2 (4)
FLOAT16_EXACT = 2 ** 11
# the region form T.atomic_add(Out[r0:r0 + R], res) is drawn from this tile up: over one
# element the tool crashes today (tests/test_fuzz_splitk.py pins it as a strict xfail;
# when the frontend's fix lands it passes, and this becomes 1)
REGION_ATOMIC_MIN_TILE = 2


@dataclass(frozen=True)
class SplitK:
    rows: int              # M: rows of A and elements of Out
    cols: int              # K: the reduced extent, split into slices of `slice` columns
    tile: int              # rows per block (R)
    slice: int             # columns per block (KS); the split is ceil(K / KS)
    threads: int
    split_axis: int        # the grid axis that numbers the slices: 0 (bx) or 1 (by)
    op: str                # "sum" | "max" | "min": the reducer's op and the atomic's
    dtype: str             # the reducer's
    in_dtype: str          # A's (and x's)
    out_dtype: str         # Out's
    gemv: bool             # contribution A[r, k] * x[k] (else A[r, k])
    staged: bool           # the block's A tile copied into a fragment first (no tails)
    tile_atomic: bool      # the region form T.atomic_add(Out[r0:r0 + R], res) (no row tail)
    seed: int | None       # T.reducer_init's seed: every block's partial starts there
    magnitude: int         # A (and x) in [-magnitude, magnitude]
    base: int              # Out's initial values in [-base, base]
    input_seed: int = 0

    @property
    def split(self) -> int:
        return -(-self.cols // self.slice)

    @property
    def row_tiles(self) -> int:
        return -(-self.rows // self.tile)

    @property
    def grid(self) -> tuple[int, int]:
        return (self.split, self.row_tiles) if self.split_axis == 0 else \
            (self.row_tiles, self.split)

    @property
    def blocks(self) -> int:
        return self.split * self.row_tiles

    @property
    def row_tail(self) -> bool:
        return self.rows % self.tile != 0

    @property
    def col_tail(self) -> bool:
        return self.cols % self.slice != 0


def draw(rng: np.random.Generator) -> SplitK:
    """One random split-K kernel."""
    op = _pick(rng, ("sum", "sum", "sum", "max", "min"))
    dtype, in_dtype, out_dtype = _pick(rng, DTYPES[op])
    tile, piece = _pick(rng, TILES), _pick(rng, SLICES)
    split = int(rng.integers(2, 7))
    row_tiles = int(rng.integers(1, 5))
    rows = row_tiles * tile - (int(rng.integers(1, tile)) if tile > 1 and
                               rng.random() < 0.35 else 0)
    cols = split * piece - (int(rng.integers(1, piece)) if rng.random() < 0.35 else 0)
    gemv = op == "sum" and rng.random() < 0.4
    tails = rows % tile != 0 or cols % piece != 0
    seed = None if rng.random() >= 0.25 else {"sum": 2, "max": 3, "min": -3}[op]
    base = 8
    if out_dtype == "float16" and rng.random() < 0.5:
        base = 3 * FLOAT16_EXACT       # spacing 2 and 4 there: the sum rounds
    s = SplitK(rows, cols, tile, piece, _pick(rng, THREADS), int(rng.integers(2)), op,
               dtype, in_dtype, out_dtype, gemv, staged=not tails and rng.random() < 0.4,
               tile_atomic=rows % tile == 0 and tile >= REGION_ATOMIC_MIN_TILE
               and rng.random() < 0.3, seed=seed,
               magnitude=8, base=base, input_seed=int(rng.integers(2 ** 31)))
    return replace(s, magnitude=magnitude(s))


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def magnitude(s: SplitK) -> int:
    """The largest input range (8 down to 1) that keeps every value exact where it must
    be: a float32 partial below 2²⁴, a float16 element below its largest finite 65504
    (rounded there, never overflowing)."""
    for m in (8, 4, 2, 1):
        each = m * m if s.gemv else m
        partial = s.cols * each + abs(s.seed or 0) * s.split
        if s.out_dtype == "float16" and partial + s.base > 60000:
            continue
        if partial <= 2 ** 24:
            return m
    return 1


# ----------------------------------------------------------------------------- source

def _vars(s: SplitK) -> tuple[str, str]:
    """(the row tile's block variable, the slice's)."""
    return ("by", "bx") if s.split_axis == 0 else ("bx", "by")


def _times(var: str, factor: int) -> str:
    return var if factor == 1 else f"{var} * {factor}"


def render(s: SplitK) -> str:
    """The kernel as a TileLang program (its `# expect:` header is the caller's)."""
    rb, sb = _vars(s)
    row0, col0 = _times(rb, s.tile), _times(sb, s.slice)
    row, col = f"{row0} + i", f"{col0} + k"
    params = [f"    A: T.Tensor(({s.rows}, {s.cols}), T.{s.in_dtype}),"]
    if s.gemv:
        params.append(f"    x: T.Tensor(({s.cols},), T.{s.in_dtype}),")
    params.append(f"    Out: T.Tensor(({s.rows},), T.{s.out_dtype}),")
    body = []
    read = f"A[{row}, {col}]"
    if s.staged:
        body += [f"a_frag = T.alloc_fragment(({s.tile}, {s.slice}), T.{s.in_dtype})",
                 f"T.copy(A[{row0}, {col0}], a_frag)"]
        read = "a_frag[i, k]"
    value = _cast(read, s.in_dtype, s.dtype)
    if s.gemv:
        value = f"{value} * {_cast(f'x[{col}]', s.in_dtype, s.dtype)}"
    update = f"T.reducer_update(acc[i], {value})"
    guards = ([f"{row} < {s.rows}"] if s.row_tail else []) + \
        ([f"{col} < {s.cols}"] if s.col_tail else [])
    seed = "" if s.seed is None else f", {s.seed}"
    body += [f'acc = T.alloc_reducer(({s.tile},), T.{s.dtype}, op="{s.op}")',
             f"T.reducer_init(acc{seed})",
             f"for i, k in T.Parallel({s.tile}, {s.slice}):",
             *_guarded(guards, update),
             f"res = T.alloc_fragment(({s.tile},), T.{s.dtype})",
             "T.finalize_reducer(acc, res)"]
    atomic = ATOMICS[s.op]
    if s.tile_atomic:
        body.append(f"{atomic}(Out[{row0}:{row0} + {s.tile}], res)")
    else:
        body += [f"for i in T.Parallel({s.tile}):",
                 *_guarded([f"{row} < {s.rows}"] if s.row_tail else [],
                           f"{atomic}(Out[{row}], res[i])")]
    g0, g1 = s.grid
    return "\n".join(["import tilelang.language as T", "", "", "@T.prim_func", "def main(",
                      *params, "):",
                      f"    with T.Kernel({g0}, {g1}, threads={s.threads}) as (bx, by):",
                      *("        " + line for line in body)]) + "\n"


def _cast(text: str, src: str, dst: str) -> str:
    return text if src == dst else f"T.cast({text}, T.{dst})"


def _guarded(conditions: list[str], statement: str) -> list[str]:
    """The loop body's lines: the statement, under `if` when there are conditions."""
    if not conditions:
        return [f"    {statement}"]
    return [f"    if {' and '.join(conditions)}:", f"        {statement}"]


# ----------------------------------------------------------------------------- model

def inputs(s: SplitK) -> dict[str, np.ndarray]:
    """A (and x): small integers in [-magnitude, magnitude]; Out's initial values in
    [-base, base], stored in each tensor's dtype."""
    rng = np.random.default_rng(s.input_seed)
    m = s.magnitude
    given = {"A": rng.integers(-m, m + 1, size=(s.rows, s.cols)).astype(_np(s.in_dtype))}
    if s.gemv:
        given["x"] = rng.integers(-m, m + 1, size=(s.cols,)).astype(_np(s.in_dtype))
    given["Out"] = rng.integers(-s.base, s.base + 1, size=(s.rows,)).astype(
        _np(s.out_dtype))
    return given


def _np(dtype: str):
    return lookup(dtype).np


def partials(s: SplitK, given: dict[str, np.ndarray]) -> np.ndarray:
    """partial[row, slice]: the finalized reducer of the block that holds (row, slice),
    before the atomic converts it (exact: float64 or int64 over small integers)."""
    exact = np.float64 if s.dtype == "float32" else np.int64
    values = np.asarray(given["A"]).astype(exact)
    if s.gemv:
        values = values * np.asarray(given["x"]).astype(exact)[None, :]
    start = IDENTITY[s.op] if s.seed is None else s.seed
    out = np.full((s.rows, s.split), start, dtype=exact)
    for j in range(s.split):
        piece = values[:, j * s.slice:(j + 1) * s.slice]
        out[:, j] = FOLD[s.op].reduce(np.concatenate(
            [out[:, j:j + 1], piece], axis=1), axis=1)
    return wrap(out, s.dtype) if s.dtype == "int32" else out


def expected(s: SplitK, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Out: its initial value combined with every slice's partial, each converted to
    Out's dtype as the atomic's operand; a float sum exact and rounded once."""
    parts = partials(s, given)
    init = np.asarray(given["Out"])
    if s.out_dtype == "int32":
        terms = np.concatenate([init.astype(np.int64)[:, None], parts.astype(np.int64)],
                               axis=1)
        return {"Out": wrap(FOLD[s.op].reduce(terms, axis=1), "int32").astype(np.int32)}
    operands = parts.astype(_np(s.out_dtype)).astype(np.float64)
    total = init.astype(np.float64) + operands.sum(axis=1)   # integers: float64 exact
    return {"Out": total.astype(_np(s.out_dtype))}


# ----------------------------------------------------------------------------- minimizer

def variants(s: SplitK) -> Iterator[SplitK]:
    """Smaller kernels than s, the biggest cuts first; each one valid by construction."""
    if s.row_tiles > 1:
        yield _fitted(s, rows=min(s.rows, s.tile))
    if s.split > 2:
        yield _fitted(s, cols=min(s.cols, 2 * s.slice))
    if s.threads > 32:
        yield replace(s, threads=32)
    if s.gemv:
        yield _fitted(s, gemv=False)
    if s.staged:
        yield replace(s, staged=False)
    if s.tile_atomic:
        yield replace(s, tile_atomic=False)
    if s.seed is not None:
        yield _fitted(s, seed=None)
    if s.row_tail:
        yield _fitted(s, rows=s.row_tiles * s.tile)
    if s.col_tail:
        yield _fitted(s, cols=s.split * s.slice)
    if s.tile > 1:
        yield _fitted(s, tile=s.tile // 2, rows=min(s.rows, s.row_tiles * (s.tile // 2)))
    if s.slice > 4:
        yield _fitted(s, slice=s.slice // 2, cols=min(s.cols, s.split * (s.slice // 2)))
    if s.in_dtype != s.dtype:
        yield _fitted(s, in_dtype=s.dtype)
    if s.out_dtype != s.dtype:
        yield _fitted(s, out_dtype=s.dtype, base=8)


def _fitted(s: SplitK, **changes) -> SplitK:
    """s with changes, kept valid: a fragment copy and a region atomic only where nothing
    is cut short, the input range refitted (fewer contributions never need a smaller)."""
    s = replace(s, **changes)
    s = replace(s, staged=s.staged and not (s.row_tail or s.col_tail),
                tile_atomic=s.tile_atomic and not s.row_tail
                and s.tile >= REGION_ATOMIC_MIN_TILE)
    return replace(s, magnitude=min(s.magnitude, magnitude(s)))
