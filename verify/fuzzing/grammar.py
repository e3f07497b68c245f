"""The fuzzer's program space: a kernel description (plain data) and its random draw.

A description fixes everything a program is: the launch (1–3-D grid, threads, an optional
`T.ws` group), how inputs reach the updates (`mode`), the tile every block reduces, the
reducers' shape (1-D, or 2-D with one cell per row and column group), the T.Parallel
loops that feed them in one epoch (one, or the columns split over several), and its
reducers (surface, dtype, op, contribution, predicate, finalize form). The source text
(verify.fuzzing.program) and the expected result (verify.fuzzing.model) are both functions
of the description alone, and the minimizer edits descriptions, not text.

Valid by construction: every choice here is one the tool must accept, and input ranges
are chosen so that every value in the computation is a small integer exact in its dtype
(floats included), so the expected result is exact and any disagreement is a finding."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

OPS = {
    "float32": ("sum", "sum", "max", "min", "product"),
    "float16": ("sum", "max", "min"),
    "bfloat16": ("sum", "max", "min"),
    "float8_e4m3fn": ("sum", "max", "min"),
    "int32": ("sum", "sum", "max", "min", "bitand", "bitor", "bitxor", "product"),
    "uint32": ("sum", "max", "min", "bitand", "bitor", "bitxor"),
}
# the dtypes an accumulator's input may have (a cast converts it)
INPUTS = {"float32": ("float32", "float32", "float16", "bfloat16", "int8", "float8_e4m3fn",
                      "float8_e5m2"),
          "float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"),
          "float8_e4m3fn": ("float8_e4m3fn", "float32"),
          "int32": ("int32", "int8", "int8"), "uint32": ("uint32", "int8")}
# a float accumulator holds every integer up to this magnitude exactly
EXACT = {"float32": 2 ** 24, "float16": 2 ** 11, "bfloat16": 2 ** 8, "float8_e4m3fn": 2 ** 4}
# what an input dtype holds exactly (small integers)
INPUT_MAX = {"float32": 64, "float16": 64, "bfloat16": 64, "int8": 100, "int32": 64,
             "uint32": 64, "float8_e4m3fn": 16, "float8_e5m2": 8}
MODES = ("direct", "direct", "staged", "pipelined", "pipelined", "serial")
THREADS = (32, 64, 96, 128, 128, 160, 256)
EXTENTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96)
ROWS = (1, 1, 2, 3, 4, 6, 8, 12, 16)
GEMV_TILES = ((64, 256), (128, 128), (32, 512), (16, 1024))   # TileLang's GEMV tilings
GRIDS = ((1,), (2,), (3,), (2, 1), (1, 2), (2, 2), (2, 1, 2), (1, 2, 2))


@dataclass(frozen=True)
class Reducer:
    surface: str              # "v2" | "rfc" | "legacy"
    dtype: str                # the accumulator's
    op: str
    in_dtype: str             # its input tensor's
    value: str                # "plain" | "abs" | "plus1" | "gemv" | "consume"
    predicate: str | None     # tail guard: None | "if" | "select"
    seed: int | None          # v2 reducer_init seed
    in_place: bool            # finalize into the reducer itself
    batch: int | None
    output: str               # "copy" (T.copy with block offset) | "loop" (element stores)
    magnitude: int            # inputs lie in [-magnitude, magnitude] ([0, m] unsigned)
    consumes: int | None = None   # index of the reducer whose result the value reads
    user_op: str | None = None    # the built-in op a declared op stands in for
                                  # (verify.fuzzing.user_ops): op=<its name>


@dataclass(frozen=True)
class Kernel:
    grid: tuple[int, ...]
    threads: int
    ws: bool
    mode: str                 # "direct" | "staged" | "pipelined" | "serial"
    rows: int                 # R: each reducer has shape (R,)
    cols: int                 # E: the reduced extent of one tile / epoch
    valid: int                # columns that exist (< cols: a predicated tail)
    tiles: int                # pipelined: K tiles; serial: epochs; otherwise 1
    fused: bool               # every reducer's update in one T.Parallel
    tail: int = 0             # pipelined: columns missing from the last tile (guarded loads)
    interleave: bool = False  # one flat T.Parallel(R * E): cell k % R, column k // R
    kept: int = 0             # C > 0: reducers of shape (R, C), cell (i, c) reducing its
                              # own E columns (direct and staged modes); 0: shape (R,)
    splits: tuple[int, ...] = ()  # columns where the epoch's update loop is cut: one
                                  # T.Parallel per part, all feeding the same reducers
    reducers: tuple[Reducer, ...] = field(default_factory=tuple)
    input_seed: int = 0

    @property
    def blocks(self) -> int:
        return int(np.prod(self.grid))

    @property
    def reducer_shape(self) -> tuple[int, ...]:
        return (self.rows, self.kept) if self.kept else (self.rows,)

    def contributions(self) -> int:
        """Contributions one reducer cell receives in one epoch."""
        return self.valid * (self.tiles if self.mode == "pipelined" else 1)


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def draw(rng: np.random.Generator) -> Kernel:
    """One random kernel of the program space."""
    mode = _pick(rng, MODES)
    ws = rng.random() < 0.12
    threads = 256 if ws else _pick(rng, THREADS)
    grid = _pick(rng, GRIDS)
    tiles = 1
    if mode == "pipelined":
        if rng.random() < 0.3:
            rows, cols = _pick(rng, GEMV_TILES)
            grid, tiles = _pick(rng, ((1,), (2,))), int(rng.integers(1, 3))
        else:
            rows, cols = _pick(rng, (1, 2, 4, 8)), _pick(rng, (8, 16, 24, 32, 64))
            tiles = int(rng.integers(2, 5))
    elif mode == "serial":
        rows, cols, tiles = _pick(rng, (1, 2, 4)), _pick(rng, (4, 8, 16, 24)), \
            int(rng.integers(2, 5))
    else:
        rows, cols = _pick(rng, ROWS), _pick(rng, EXTENTS)
    valid, tail = cols, 0
    if mode == "direct" and cols > 1 and rng.random() < 0.3:
        valid = int(rng.integers(1, cols))
    if mode == "pipelined" and rng.random() < 0.3:
        tail = int(rng.integers(1, cols))       # K = tiles * cols - tail, as in #2408
    kept = _kept(rng, mode, rows, cols)
    k = Kernel(grid, threads, ws, mode, rows, cols, valid, tiles,
               fused=rng.random() < 0.4, tail=tail,
               interleave=rows > 1 and not kept and rng.random() < 0.25,
               kept=kept, splits=_splits(rng, cols), input_seed=int(rng.integers(2 ** 31)))
    # a GEMV tiling stages 32-64 KB per reducer: one of them keeps the block under
    # sm_90's 227 KB of shared memory, as TileLang's GEMV does
    count = 1 if (rows, cols) in GEMV_TILES else int(_pick(rng, (1, 1, 2, 3)))
    reducers: list[Reducer] = []
    for n in range(count):
        reducers.append(_reducer(rng, k, reducers))
    return replace(k, reducers=tuple(reducers))


def _kept(rng, mode: str, rows: int, cols: int) -> int:
    """A 2-D reducer's second dimension (0: 1-D), where its (R, C * E) tile stays small."""
    if mode not in ("direct", "staged") or rows * cols > 512 or rng.random() >= 0.25:
        return 0
    return _pick(rng, (1, 2, 3, 4))


def _splits(rng, cols: int) -> tuple[int, ...]:
    """Where the update loop is cut into several T.Parallel loops (none mostly): one
    cut, sometimes two, anywhere inside the columns."""
    if cols < 2 or rng.random() >= 0.25:
        return ()
    cuts = 2 if cols >= 3 and rng.random() < 0.3 else 1
    return tuple(sorted(int(c) for c in rng.choice(np.arange(1, cols), cuts, replace=False)))


def _reducer(rng, k: Kernel, earlier: list[Reducer]) -> Reducer:
    surface = _pick(rng, ("v2", "v2", "rfc", "legacy"))
    if k.mode == "serial" and surface == "rfc":
        surface = "v2"        # the RFC surface opens its one epoch at the allocation
    producers = [i for i, r in enumerate(earlier) if r.consumes is None
                 and r.dtype in ("float32", "int32") and r.op in ("sum", "max", "min")]
    if producers and k.mode in ("direct", "staged") and rng.random() < 0.4:
        return _consumer(rng, k, surface, _pick(rng, producers), earlier)
    dtype = _pick(rng, ("float32", "float32", "int32", "uint32", "float16", "bfloat16",
                        "float8_e4m3fn"))
    op = _pick(rng, OPS[dtype])
    in_dtype = _pick(rng, INPUTS[dtype])
    value = _pick(rng, ("plain", "plain", "abs", "plus1", "gemv")
                  if dtype in EXACT else ("plain", "plain", "plus1", "gemv"))
    if value == "gemv" and (op != "sum" or k.mode == "serial"):
        value = "plain"
    predicate = None
    if k.valid < k.cols:
        predicate = "select" if op in ("sum", "bitor", "bitxor") and rng.random() < 0.5 \
            else "if"
    elif k.tail and (op not in ("sum", "bitor", "bitxor") or value == "plus1"):
        predicate = "if"      # the zero padding of guarded loads is not op's identity
    magnitude = _magnitude(k, dtype, op, in_dtype, value)
    if magnitude is None:     # no input range keeps this accumulator exact: widen it
        dtype, in_dtype = "float32", "float32"
        magnitude = _magnitude(k, dtype, op, in_dtype, value) or 1
    return _finish(rng, surface, dtype, op, in_dtype, value, predicate, magnitude, k)


def _consumer(rng, k, surface, producer: int, earlier) -> Reducer:
    src = earlier[producer]
    op = _pick(rng, ("sum", "max", "min"))
    r = _finish(rng, surface, src.dtype, op, src.dtype, "consume",
                "if" if k.valid < k.cols else None, min(src.magnitude, 8), k)
    return replace(r, consumes=producer)


def _finish(rng, surface, dtype, op, in_dtype, value, predicate, magnitude, k) -> Reducer:
    seed = None
    if surface == "v2" and rng.random() < 0.3:
        seed = {"sum": 2, "product": -1, "max": 3, "min": -3}.get(op, 5)
        if dtype == "uint32" and seed < 0:
            seed = 5
    in_place = surface == "legacy" and rng.random() < 0.7
    batch = None
    if rng.random() < 0.3:
        batch = _pick(rng, tuple(b for b in (1, 2, 4, 8) if k.rows % b == 0))
    output = _pick(rng, ("copy", "loop"))
    return Reducer(surface, dtype, op, in_dtype, value, predicate, seed, in_place, batch,
                   output, magnitude)


def value_bound(value: str, magnitude: int) -> int:
    return {"plus1": magnitude + 1, "gemv": magnitude * magnitude}.get(value, magnitude)


def result_bound(k: Kernel, r: Reducer, source_bound: int = 0) -> int:
    """The largest magnitude a reducer's result (or any partial of it) can reach."""
    each = value_bound(r.value, r.magnitude) + source_bound
    seed = abs(r.seed or 0)
    if r.op == "sum":
        return k.contributions() * each + seed
    if r.op == "product":
        return max(1, seed)
    return max(each, seed)


def _magnitude(k: Kernel, dtype, op, in_dtype, value) -> int | None:
    """The largest input range (from 8 down) whose every partial result is exact."""
    if op == "product":
        return 1              # contributions ±1: any number of them stays exact
    limit = EXACT.get(dtype)
    for m in (8, 4, 2, 1):
        if m > INPUT_MAX[in_dtype]:
            continue
        if limit is None or op != "sum" or \
                k.contributions() * (value_bound(value, m)) + 8 <= limit:
            return m
    return None
