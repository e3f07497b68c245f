"""The split-K family (issue 27): a grid of output tiles × K slices, each block reducing
its slice of the K extent into a reducer, finalizing it into a fragment and adding the
fragment into the global output with `T.atomic_add` (or `T.atomic_max`/`T.atomic_min`),
so that Out = its initial value combined with every slice's partial, whatever order the
blocks run in. Three contributions: A's rows (a row sum, Out of shape (M,)), A[r, k] ·
x[k] (a split-K GEMV) and A[r, k] · B[k, n] (TileLang's split-K GEMM: a 3-D grid of
column tiles × row tiles × slices, Out of shape (M, N)).

A description (`SplitK`, plain data) fixes the program: its source text (`render`), its
inputs and its expected result (`inputs`, `expected`: numpy over the description, never
our interpreter) and its smaller variants (`variants`, for the minimizer) are functions of
it alone.

Valid by construction, and exact where the semantics is: every input is a small integer;
a float32 reducer's partials and an int32 one's are exact. A float16 output is the one
place where rounding happens, and the model follows docs/semantics.md §12 to the letter:
each partial is converted to float16 as the atomic's operand, and the element's value is
the exact sum of its initial value and those operands, rounded once (the GPU's chain,
rounded at every step, lies within the bound the interpreter reports for it). Initial
values up to 6144, where float16's spacing is 2 and 4, make that rounding visible."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from verify_reducer.spec.dtypes import lookup

from verify_reducer.verify.fuzzing.expr import wrap

ATOMICS = {"sum": "T.atomic_add", "max": "T.atomic_max", "min": "T.atomic_min"}
IDENTITY = {"sum": 0, "max": -2 ** 31, "min": 2 ** 31 - 1}      # int32's, and 0 for sums
FOLD = {"sum": np.add, "max": np.maximum, "min": np.minimum}
# the (accumulator, input, output) dtypes of each op: max/min are drawn on int32 only
# (float max/min render as compare-and-swap loops since issue 27; the model's
# identities here are int32's)
DTYPES = {"sum": (("float32", "float32", "float32"), ("float32", "float32", "float32"),
                  ("float32", "float16", "float32"), ("float32", "float16", "float16"),
                  ("float32", "float32", "float16"), ("int32", "int32", "int32"),
                  ("int32", "int8", "int32")),
          "max": (("int32", "int32", "int32"), ("int32", "int8", "int32")),
          "min": (("int32", "int32", "int32"), ("int32", "int8", "int32"))}
TILES = (1, 2, 4, 4, 8, 16)
SLICES = (4, 8, 16, 32, 64)
THREADS = (32, 64, 128, 128, 256)
# a GEMM block's (rows, columns, slice) loop: R · C · KS iterations, kept small
GEMM_TILES, GEMM_COLUMNS, GEMM_SLICES = (1, 2, 4, 8), (2, 4, 8), (4, 8, 16, 32)
# float16 holds every integer up to 2048; from 2048 (4096) its spacing is 2 (4)
FLOAT16_EXACT = 2 ** 11
# the region form T.atomic_add(Out[r0:r0 + R], res) is drawn for tiles of this many
# elements and more (one element: a T.Parallel(1), as TileLang lowers it;
# tests/programs/valid/atomic_region_one_element.py)
REGION_ATOMIC_MIN_ELEMENTS = 1


@dataclass(frozen=True)
class SplitK:
    rows: int              # M: rows of A and of Out
    cols: int              # K: the reduced extent, split into slices of `slice` columns
    tile: int              # rows per block (R)
    slice: int             # K columns per block (KS); the split is ceil(K / KS)
    threads: int
    split_axis: int        # a row kernel's grid axis numbering the slices: 0 (bx) or 1
                           # (by); a GEMM's grid is (column tiles, row tiles, slices)
    op: str                # "sum" | "max" | "min": the reducer's op and the atomic's
    dtype: str             # the reducer's
    in_dtype: str          # A's (and x's, B's)
    out_dtype: str         # Out's
    value: str             # "plain" A[r, k] | "gemv" A[r, k] * x[k] |
                           # "gemm" A[r, k] * B[k, n]
    width: int             # N: Out's columns (a GEMM; 0 otherwise: Out is (M,))
    ctile: int             # Out columns per block (C; 1 unless a GEMM)
    staged: bool           # the block's A (and B) tile copied into fragments first
                           # (no tails)
    tile_atomic: bool      # the region form T.atomic_add(Out[r0:r0 + R], res) (no row
                           # or column tail)
    seed: int | None       # T.reducer_init's seed: every block's partial starts there
    magnitude: int         # A (and x, B) in [-magnitude, magnitude]
    base: int              # Out's initial values in [-base, base]
    input_seed: int = 0

    @property
    def gemm(self) -> bool:
        return self.value == "gemm"

    @property
    def split(self) -> int:
        return -(-self.cols // self.slice)

    @property
    def row_tiles(self) -> int:
        return -(-self.rows // self.tile)

    @property
    def col_tiles(self) -> int:
        return -(-self.width // self.ctile) if self.gemm else 1

    @property
    def grid(self) -> tuple[int, ...]:
        if self.gemm:
            return (self.col_tiles, self.row_tiles, self.split)
        return (self.split, self.row_tiles) if self.split_axis == 0 else \
            (self.row_tiles, self.split)

    @property
    def blocks(self) -> int:
        return self.split * self.row_tiles * self.col_tiles

    @property
    def out_shape(self) -> tuple[int, ...]:
        return (self.rows, self.width) if self.gemm else (self.rows,)

    @property
    def row_tail(self) -> bool:
        return self.rows % self.tile != 0

    @property
    def col_tail(self) -> bool:
        return self.cols % self.slice != 0

    @property
    def width_tail(self) -> bool:
        return self.gemm and self.width % self.ctile != 0


def draw(rng: np.random.Generator) -> SplitK:
    """One random split-K kernel."""
    op = _pick(rng, ("sum", "sum", "sum", "max", "min"))
    dtype, in_dtype, out_dtype = _pick(rng, DTYPES[op])
    value = _pick(rng, ("plain", "gemv", "gemm")) if op == "sum" else "plain"
    if value == "gemm":
        tile, piece, ctile = _pick(rng, GEMM_TILES), _pick(rng, GEMM_SLICES), \
            _pick(rng, GEMM_COLUMNS)
        split, row_tiles = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        width = int(rng.integers(1, 4)) * ctile - _tail(rng, ctile)
    else:
        tile, piece, ctile, width = _pick(rng, TILES), _pick(rng, SLICES), 1, 0
        split, row_tiles = int(rng.integers(2, 7)), int(rng.integers(1, 5))
    rows = row_tiles * tile - _tail(rng, tile)
    cols = split * piece - _tail(rng, piece)
    seed = None if rng.random() >= 0.25 else {"sum": 2, "max": 3, "min": -3}[op]
    base = 8
    if out_dtype == "float16" and rng.random() < 0.5:
        base = 3 * FLOAT16_EXACT       # spacing 2 and 4 there: the sum rounds
    s = SplitK(rows, cols, tile, piece, _pick(rng, THREADS), int(rng.integers(2)), op,
               dtype, in_dtype, out_dtype, value, width, ctile, staged=rng.random() < 0.4,
               tile_atomic=rng.random() < 0.3, seed=seed, magnitude=8, base=base,
               input_seed=int(rng.integers(2 ** 31)))
    return _fitted(s)


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _tail(rng: np.random.Generator, tile: int) -> int:
    """How many of the last tile's elements are missing (mostly none)."""
    return int(rng.integers(1, tile)) if tile > 1 and rng.random() < 0.35 else 0


def magnitude(s: SplitK) -> int:
    """The largest input range (8 down to 1) that keeps every value exact where it must
    be: a float32 partial below 2²⁴, a float16 element below its largest finite 65504
    (rounded there, never overflowing)."""
    for m in (8, 4, 2, 1):
        each = m if s.value == "plain" else m * m
        partial = s.cols * each + abs(s.seed or 0) * s.split
        if s.out_dtype == "float16" and partial + s.base > 60000:
            continue
        if partial <= 2 ** 24:
            return m
    return 1


# ----------------------------------------------------------------------------- source

def _vars(s: SplitK) -> tuple[str, str, str]:
    """(the row tile's block variable, the column tile's (none but a GEMM's), the
    slice's)."""
    if s.gemm:
        return "by", "bx", "bz"
    return ("by", "", "bx") if s.split_axis == 0 else ("bx", "", "by")


def _times(var: str, factor: int) -> str:
    return var if factor == 1 else f"{var} * {factor}"


def render(s: SplitK) -> str:
    """The kernel as a TileLang program (its `# expect:` header is the caller's)."""
    rb, cb, sb = _vars(s)
    row0, k0, n0 = _times(rb, s.tile), _times(sb, s.slice), _times(cb, s.ctile)
    row, k, n = f"{row0} + i", f"{k0} + k", f"{n0} + j"
    t = f"T.{s.in_dtype}"
    params = [f"    A: T.Tensor(({s.rows}, {s.cols}), {t}),"]
    if s.value == "gemv":
        params.append(f"    x: T.Tensor(({s.cols},), {t}),")
    if s.gemm:
        params.append(f"    B: T.Tensor(({s.cols}, {s.width}), {t}),")
    params.append(f"    Out: T.Tensor({_shape(s.out_shape)}, T.{s.out_dtype}),")
    body = []
    a, b = f"A[{row}, {k}]", f"B[{k}, {n}]"
    if s.staged:
        body += [f"a_frag = T.alloc_fragment(({s.tile}, {s.slice}), {t})",
                 f"T.copy(A[{row0}, {k0}], a_frag)"]
        a = "a_frag[i, k]"
        if s.gemm:
            body += [f"b_frag = T.alloc_fragment(({s.slice}, {s.ctile}), {t})",
                     f"T.copy(B[{k0}, {n0}], b_frag)"]
            b = "b_frag[k, j]"
    contribution = _cast(a, s.in_dtype, s.dtype)
    if s.value == "gemv":
        contribution += f" * {_cast(f'x[{k}]', s.in_dtype, s.dtype)}"
    elif s.gemm:
        contribution += f" * {_cast(b, s.in_dtype, s.dtype)}"
    tile = (s.tile, s.ctile) if s.gemm else (s.tile,)
    cell = "i, j" if s.gemm else "i"
    out_guards = ([f"{row} < {s.rows}"] if s.row_tail else []) + \
        ([f"{n} < {s.width}"] if s.width_tail else [])
    seed = "" if s.seed is None else f", {s.seed}"
    body += [f'acc = T.alloc_reducer({_shape(tile)}, T.{s.dtype}, op="{s.op}")',
             f"T.reducer_init(acc{seed})",
             f"for {cell}, k in T.Parallel({', '.join(map(str, tile))}, {s.slice}):",
             *_guarded(out_guards + ([f"{k} < {s.cols}"] if s.col_tail else []),
                       f"T.reducer_update(acc[{cell}], {contribution})"),
             f"res = T.alloc_fragment({_shape(tile)}, T.{s.dtype})",
             "T.finalize_reducer(acc, res)"]
    atomic = ATOMICS[s.op]
    if s.tile_atomic:
        region = f"{row0}:{row0} + {s.tile}" + \
            (f", {n0}:{n0} + {s.ctile}" if s.gemm else "")
        body.append(f"{atomic}(Out[{region}], res)")
    else:
        body += [f"for {cell} in T.Parallel({', '.join(map(str, tile))}):",
                 *_guarded(out_guards,
                           f"{atomic}(Out[{row}{f', {n}' if s.gemm else ''}], res[{cell}])")]
    names = ("bx", "by", "bz")[:len(s.grid)]
    launch = f"T.Kernel({', '.join(map(str, s.grid))}, threads={s.threads})"
    return "\n".join(["import tilelang.language as T", "", "", "@T.prim_func", "def main(",
                      *params, "):", f"    with {launch} as ({', '.join(names)}):",
                      *("        " + line for line in body)]) + "\n"


def _shape(dims: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def _cast(text: str, src: str, dst: str) -> str:
    return text if src == dst else f"T.cast({text}, T.{dst})"


def _guarded(conditions: list[str], statement: str) -> list[str]:
    """The loop body's lines: the statement, under `if` when there are conditions."""
    if not conditions:
        return [f"    {statement}"]
    return [f"    if {' and '.join(conditions)}:", f"        {statement}"]


# ----------------------------------------------------------------------------- model

def inputs(s: SplitK) -> dict[str, np.ndarray]:
    """A (and x or B): small integers in [-magnitude, magnitude]; Out's initial values
    in [-base, base], stored in each tensor's dtype."""
    rng = np.random.default_rng(s.input_seed)
    m = s.magnitude

    def draw_values(shape, dtype, bound):
        return rng.integers(-bound, bound + 1, size=shape).astype(lookup(dtype).np)
    given = {"A": draw_values((s.rows, s.cols), s.in_dtype, m)}
    if s.value == "gemv":
        given["x"] = draw_values((s.cols,), s.in_dtype, m)
    if s.gemm:
        given["B"] = draw_values((s.cols, s.width), s.in_dtype, m)
    given["Out"] = draw_values(s.out_shape, s.out_dtype, s.base)
    return given


def partials(s: SplitK, given: dict[str, np.ndarray]) -> np.ndarray:
    """partial[row, column, slice] (one column unless a GEMM): the finalized reducer of
    the block that holds the element and the slice, before the atomic converts it
    (exact: float64 or int64 over small integers)."""
    exact = np.float64 if s.dtype == "float32" else np.int64
    a = np.asarray(given["A"]).astype(exact)
    if s.value == "gemv":
        values = (a * np.asarray(given["x"]).astype(exact)[None, :])[:, None, :]
    elif s.gemm:
        values = a[:, None, :] * np.asarray(given["B"]).astype(exact).T[None, :, :]
    else:
        values = a[:, None, :]
    start = IDENTITY[s.op] if s.seed is None else s.seed
    out = np.full(values.shape[:2] + (s.split,), start, dtype=exact)
    for j in range(s.split):
        piece = values[:, :, j * s.slice:(j + 1) * s.slice]
        out[:, :, j] = FOLD[s.op].reduce(np.concatenate([out[:, :, j:j + 1], piece],
                                                        axis=2), axis=2)
    return wrap(out, s.dtype) if s.dtype == "int32" else out


def expected(s: SplitK, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Out: its initial value combined with every slice's partial, each converted to
    Out's dtype as the atomic's operand; a float sum exact and rounded once."""
    parts = partials(s, given)
    init = np.asarray(given["Out"]).reshape(parts.shape[:2])
    if s.out_dtype == "int32":
        terms = np.concatenate([init.astype(np.int64)[..., None], parts.astype(np.int64)],
                               axis=2)
        total = wrap(FOLD[s.op].reduce(terms, axis=2), "int32")
    else:
        operands = parts.astype(lookup(s.out_dtype).np).astype(np.float64)
        total = init.astype(np.float64) + operands.sum(axis=2)  # integers: float64 exact
    return {"Out": total.reshape(s.out_shape).astype(lookup(s.out_dtype).np)}


# ----------------------------------------------------------------------------- minimizer

def variants(s: SplitK) -> Iterator[SplitK]:
    """Smaller kernels than s, the biggest cuts first; each one valid by construction."""
    if s.row_tiles > 1:
        yield _fitted(s, rows=min(s.rows, s.tile))
    if s.col_tiles > 1:
        yield _fitted(s, width=min(s.width, s.ctile))
    if s.split > 2:
        yield _fitted(s, cols=min(s.cols, 2 * s.slice))
    if s.threads > 32:
        yield replace(s, threads=32)
    if s.value != "plain":
        yield _fitted(s, value="plain", width=0, ctile=1)
    if s.staged:
        yield replace(s, staged=False)
    if s.tile_atomic:
        yield replace(s, tile_atomic=False)
    if s.seed is not None:
        yield _fitted(s, seed=None)
    if s.row_tail:
        yield _fitted(s, rows=s.row_tiles * s.tile)
    if s.width_tail:
        yield _fitted(s, width=s.col_tiles * s.ctile)
    if s.col_tail:
        yield _fitted(s, cols=s.split * s.slice)
    if s.tile > 1:
        yield _fitted(s, tile=s.tile // 2, rows=min(s.rows, s.row_tiles * (s.tile // 2)))
    if s.ctile > 1:
        yield _fitted(s, ctile=s.ctile // 2,
                      width=min(s.width, s.col_tiles * (s.ctile // 2)))
    if s.slice > 4:
        yield _fitted(s, slice=s.slice // 2, cols=min(s.cols, s.split * (s.slice // 2)))
    if s.in_dtype != s.dtype:
        yield _fitted(s, in_dtype=s.dtype)
    if s.out_dtype != s.dtype:
        yield _fitted(s, out_dtype=s.dtype, base=8)


def _fitted(s: SplitK, **changes) -> SplitK:
    """s with changes, kept valid: a fragment copy and a region atomic only where no
    tile is cut short (and the region has REGION_ATOMIC_MIN_ELEMENTS), the input range
    refitted (fewer contributions never need a smaller one)."""
    s = replace(s, **changes)
    tails = s.row_tail or s.width_tail
    s = replace(s, staged=s.staged and not (tails or s.col_tail),
                tile_atomic=s.tile_atomic and not tails
                and s.tile * s.ctile >= REGION_ATOMIC_MIN_ELEMENTS)
    return replace(s, magnitude=min(s.magnitude, magnitude(s)))
