"""Blocks as the unit of dynamic checking.

Every block of a grid runs the same program on its own indices. When the blocks are
*independent* — their global writes are disjoint and no block reads what another
writes — a block computes the same values alone, against the initial tensors, as it
does inside the whole run. Then `check` runs a bounded set of blocks instead of the
grid, and each against a *window* of every tensor (the box its accesses can reach), so
time and memory follow the sample, not the problem size.

- `prove_independent`: Z3 over two distinct symbolic blocks, for every global write and
  every access of the same tensor, the index expressions encoded by verify.epochs.bounds (its
  loop ranges, and the enclosing `if` conditions as assumptions). `unknown` is not a
  proof.
- `block_classes`: blocks grouped by what can make one behave unlike another: which
  global accesses are clipped at a tensor border (tails that do not divide), and how
  the integer conditions that depend on the block index come out (always, never or
  partly true over the block's own iterations). Evaluated for every block at once with
  numpy.
- `select`: the classes' first members, the grid's first and last block, and a seeded
  random sample; or every block.
- `windows`: the footprint box of one block on every tensor, from interval analysis
  with the block index fixed (unboundable: the whole dimension).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import z3
from z3.z3util import get_vars

from verify_reducer.spec import ir
from verify_reducer.spec.printer import format_expr
from verify_reducer.spec.source import Span
from verify_reducer.interp.memory import Window

from verify_reducer.spec.intrinsics import INTRINSICS
from verify_reducer.spec.operators import OPERATORS, UNARY_OPERATORS, ExprVisitor
from verify_reducer.verify.epochs.bounds import (Z3_TIMEOUT_MS, _dtype_range, _Encoder,
                                                 integer_conversion, interval)
from verify_reducer.verify.epochs.scopes import Context, statements

DEFAULT_SAMPLE = 2            # random blocks on top of the classes
FULL_GRID_LIMIT = 1 << 18     # classify every block up to this many; per dimension above
DIM_LIMIT = 1 << 20           # a dimension longer than this is classified from a sample:
DIM_ENDS = 1 << 12            #   every block this close to either end,
DIM_STRIDED = 1 << 16         #   this many evenly spaced blocks,
DIM_REFINED = 256             #   and the first block of at most this many changes between them


# ============================================================================ accesses

@dataclass(frozen=True, eq=False)
class Access:
    """One global-memory access of the kernel body: a point (indices), a box (region:
    T.copy, T.fill) or, with neither, the whole tensor (T.reduce_*, a finalize into a
    global tensor)."""
    buffer: ir.Buffer
    write: bool
    span: Span
    ctx: Context
    indices: tuple[ir.Expr, ...] | None = None
    region: ir.Region | None = None
    atomic: str | None = None        # a T.atomic_* read-modify-write: its monoid ("sum")

    def commutes_with(self, other: "Access") -> bool:
        """Two atomic updates of one monoid: the element ends the same in either order
        (a float sum within the reassociation bound every backend is judged by)."""
        return self.atomic is not None and self.atomic == other.atomic

    def describe(self) -> str:
        verb = "atomic update" if self.atomic else "write" if self.write else "read"
        return f"the {verb} of {self.buffer.name} at line {self.span.line}"


def global_accesses(func: ir.PrimFunc) -> list[Access]:
    out: list[Access] = []
    for stmt, ctx in statements(func.kernel):
        for expr in ir.stmt_exprs(stmt):
            _loads(expr, ctx, out)
        _stmt_accesses(stmt, ctx, out)
    return out


def _loads(expr: ir.Expr, ctx: Context, out: list[Access]) -> None:
    for sub in ir.subexprs(expr):
        if isinstance(sub, ir.Load) and sub.buffer.scope == "global":
            out.append(Access(sub.buffer, False, sub.span, ctx, indices=sub.indices))


def _stmt_accesses(stmt: ir.Stmt, ctx: Context, out: list[Access]) -> None:
    def glob(b):
        return b is not None and b.scope == "global"
    if isinstance(stmt, ir.Store) and glob(stmt.buffer):
        out.append(Access(stmt.buffer, True, stmt.span, ctx, indices=stmt.indices))
    elif isinstance(stmt, ir.AtomicUpdate) and glob(stmt.buffer):
        # a read-modify-write: blocks that meet in one element through updates of one
        # monoid are independent up to their order; with anything else, not
        # (docs/design.md §25)
        out.append(Access(stmt.buffer, True, stmt.span, ctx, indices=stmt.indices,
                          atomic=stmt.op))
        out.append(Access(stmt.buffer, False, stmt.span, ctx, indices=stmt.indices,
                          atomic=stmt.op))
    elif isinstance(stmt, ir.Copy):
        for region, write in ((stmt.src, False), (stmt.dst, True)):
            if glob(region.buffer):
                out.append(Access(region.buffer, write, stmt.span, ctx, region=region))
    elif isinstance(stmt, ir.Fill) and glob(stmt.region.buffer):
        out.append(Access(stmt.region.buffer, True, stmt.span, ctx, region=stmt.region))
    elif isinstance(stmt, ir.Reduce):
        for buffer, write in ((stmt.src, False), (stmt.dst, True)):
            if glob(buffer):
                out.append(Access(buffer, write, stmt.span, ctx))
        if glob(stmt.dst) and not stmt.clear:
            out.append(Access(stmt.dst, False, stmt.span, ctx))
    elif isinstance(stmt, ir.ReducerFinalize) and glob(stmt.dst):
        out.append(Access(stmt.dst, True, stmt.span, ctx))


# ============================================================================ independence

@dataclass(frozen=True)
class Independence:
    proved: bool
    queries: int
    ms: float
    reason: str | None = None         # why not: the two accesses, and what Z3 said
    # proved up to the order of atomic updates: the tensors blocks meet in only through
    # atomics of one monoid (each block's contributions are then its own to compare)
    commuting: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"proved": self.proved, "queries": self.queries, "ms": round(self.ms, 1),
                "reason": self.reason, "up_to_atomic_order": list(self.commuting)}


def prove_independent(func: ir.PrimFunc, accesses: list[Access]) -> Independence:
    """Whether no two distinct blocks touch one element where either writes it, except
    through atomic updates of one monoid (their order changes nothing: each block's
    contributions are checked on their own)."""
    start = time.perf_counter()
    kernel = func.kernel
    if math.prod(kernel.grid) == 1:
        return Independence(True, 0, 0.0)
    queries = 0
    commuting: dict[str, None] = {}
    for w in (a for a in accesses if a.write):
        for other in (a for a in accesses if a.buffer is w.buffer):
            if w.commutes_with(other):
                commuting[w.buffer.name] = None
                continue
            queries += 1
            meeting = collision(kernel, w, other)
            if meeting is not None:
                return Independence(False, queries, _ms(start), meeting.text)
    return Independence(True, queries, _ms(start), commuting=tuple(commuting))


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _instance(kernel: ir.Kernel, access: Access):
    """(constraints, element index terms, block index terms, exact) of one access in one
    symbolic block: its loop variables in range, its guards assumed, the element inside
    the tensor (a copy's clipped elements are not accessed); exact when no value was
    stood in for and no guard left out (bounds._Encoder.exact)."""
    enc = _Encoder(access.ctx)
    block = [enc.term(v) for v in kernel.block_vars]
    shape = access.buffer.shape
    if access.indices is not None:
        index = [enc.term(i) for i in access.indices]
    else:
        index = [z3.FreshInt("elem") for _ in shape]
        if access.region is not None:
            for d, (start, extent) in enumerate(zip(access.region.starts,
                                                    access.region.extents)):
                offset = index[d]
                enc.facts += [offset >= 0, offset < extent]
                index[d] = enc.term(start) + offset
    guards = enc.guards()          # before the facts: it may add variables' ranges
    facts = list(enc.facts) + guards
    facts += [z3.And(t >= 0, t < n) for t, n in zip(index, shape)]
    return facts, index, block, enc.exact


def _renamed(parts: list, suffix: str) -> list:
    """The same terms over fresh copies of every constant: the other block's view."""
    consts = {}
    for term in parts:
        for c in get_vars(term):
            consts[c.get_id()] = c
    pairs = [(c, z3.Const(c.decl().name() + suffix, c.sort())) for c in consts.values()]
    return [z3.substitute(t, *pairs) if pairs else t for t in parts]


@dataclass(frozen=True)
class Meeting:
    """Two accesses that may reach one element from two distinct blocks. `text` names
    them, the element and the blocks (or says Z3 could not decide); `witness`: the
    model is a real execution of both (decided, and both encodings exact), not only a
    possibility the encoding's stand-ins allow."""
    text: str
    witness: bool


def collision(kernel: ir.Kernel, w: Access, other: Access) -> Meeting | None:
    """Whether w and other can reach one element from two distinct blocks (None: Z3
    proved they cannot)."""
    f1, i1, b1, exact1 = _instance(kernel, w)
    f2, i2, b2, exact2 = _instance(kernel, other)
    n_f, n_i = len(f2), len(i2)
    renamed = _renamed(f2 + i2 + b2, "'")
    f2, i2, b2 = renamed[:n_f], renamed[n_f:n_f + n_i], renamed[n_f + n_i:]
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*f1, *f2, *(a == b for a, b in zip(i1, i2)),
               z3.Or(*(a != b for a, b in zip(b1, b2))))
    result = solver.check()
    if result == z3.unsat:
        return None
    pair = f"{w.describe()} and {other.describe()}"
    if result == z3.unknown:
        return Meeting(f"Z3 could not decide whether {pair} stay apart across blocks",
                       False)
    model = solver.model()

    def val(t):
        return model.eval(t, model_completion=True).as_long()
    first, second = tuple(val(t) for t in b1), tuple(val(t) for t in b2)
    if w is other or within(other.span, w.span) or within(w.span, other.span):
        # one access against itself, or one statement's read and write of one element
        # (a read-modify-write, which both blocks make): the pair is symmetric, and
        # which way round the model comes depends on Z3's history; name the lower
        # block first
        first, second = min(first, second), max(first, second)
    blocks = f"block {first} and block {second}"
    element = ", ".join(str(val(t)) for t in i1)
    return Meeting(f"{pair} both reach {w.buffer.name}[{element}] in {blocks}",
                   exact1 and exact2)


def within(inner: Span, outer: Span) -> bool:
    """Whether span inner lies inside span outer (a load of the statement that stores)."""
    return (outer.line, outer.col) <= (inner.line, inner.col) and \
        (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)


# ============================================================================ footprints

Span2 = tuple[np.ndarray, np.ndarray]      # per block: lowest and highest value


def _depends(e: ir.Expr, ctx: Context, depth: int = 0) -> bool:
    """Whether e's value can depend on the block index."""
    if depth > 32:
        return True
    for sub in ir.subexprs(e):
        if not isinstance(sub, ir.Var):
            continue
        b = ctx.lookup(sub)
        if b is None:
            continue
        if b.kind == "block":
            return True
        if b.kind == "let" and _depends(b.let.value, ctx, depth + 1):
            return True
        if b.kind == "serial" and (_depends(b.loop.start, ctx, depth + 1)
                                   or _depends(b.loop.stop, ctx, depth + 1)):
            return True
    return False


def _span(e: ir.Expr, ctx: Context, blocks: dict[str, np.ndarray], depth: int = 0) -> Span2:
    """Per block (blocks: each block variable's values), a range of e's values over the
    block's own iterations. What does not depend on the block is verify.epochs.bounds' interval;
    this adds the block index as a point and otherwise follows the same rules (the rows'
    interval rules of spec.operators, on arrays)."""
    n = len(next(iter(blocks.values()))) if blocks else 1
    if depth > 32 or not _depends(e, ctx):
        return _whole(e, ctx, n)
    return _SPANS.visit(e, ctx, blocks, depth, n)


def _whole(e: ir.Expr, ctx: Context, n: int) -> Span2:
    """e's interval over every block: sound for any one of them."""
    iv = interval(e, ctx)
    return np.full(n, float(iv.lo)), np.full(n, float(iv.hi))


def _by_row(row, a: Span2, b: Span2 | None, c: int | None, n: int) -> Span2 | None:
    found = row.interval(a, b, c) if row.interval is not None else None
    if found is None:
        return None
    return tuple(np.broadcast_to(np.asarray(x, dtype=np.float64), (n,)) for x in found)


class _Spans(ExprVisitor):
    """_span's face of the visitor protocol: (e, ctx, blocks, depth, n) -> Span2 for an
    e that depends on the block index."""

    @staticmethod
    def _rec(x, ctx, blocks, depth):
        return _span(x, ctx, blocks, depth + 1)

    def visit_var(self, e, ctx, blocks, depth, n):
        b = ctx.lookup(e)
        if b.kind == "block":
            v = blocks[e.name].astype(np.float64)
            return v, v
        if b.kind == "let":
            return self._rec(b.let.value, ctx, blocks, depth)
        (s_lo, s_hi), (t_lo, t_hi) = (self._rec(x, ctx, blocks, depth)
                                      for x in (b.loop.start, b.loop.stop))
        if b.loop.step > 0:
            return s_lo, np.maximum(s_lo, t_hi - 1)
        return np.minimum(s_hi, t_lo + 1), s_hi

    def _converted(self, source, e, ctx, blocks, depth, n):
        lo, hi = self._rec(source, ctx, blocks, depth)
        rng = _dtype_range(e.dtype)
        fits = (lo >= rng.lo) & (hi <= rng.hi)
        return np.where(fits, lo, rng.lo), np.where(fits, hi, rng.hi)

    def visit_cast(self, e, ctx, blocks, depth, n):
        source = integer_conversion(e)         # T.cast between integers
        if source is None:
            return _whole(e, ctx, n)
        return self._converted(source, e, ctx, blocks, depth, n)

    def visit_call(self, e, ctx, blocks, depth, n):
        source = integer_conversion(e)         # T.reinterpret between integers
        if source is not None:
            return self._converted(source, e, ctx, blocks, depth, n)
        row = INTRINSICS.get(e.func)
        if row is not None and row.interval is not None and len(e.args) == 2:
            return row.interval(*(self._rec(x, ctx, blocks, depth) for x in e.args))
        return _whole(e, ctx, n)

    def visit_select(self, e, ctx, blocks, depth, n):
        (a_lo, a_hi), (b_lo, b_hi) = (self._rec(x, ctx, blocks, depth) for x in (e.a, e.b))
        return np.minimum(a_lo, b_lo), np.maximum(a_hi, b_hi)

    def visit_unary(self, e, ctx, blocks, depth, n):
        found = _by_row(UNARY_OPERATORS[e.op], self._rec(e.a, ctx, blocks, depth), None,
                        None, n)
        return found if found is not None else _whole(e, ctx, n)

    def visit_binary(self, e, ctx, blocks, depth, n):
        if e.dtype.is_int:
            a, b = (self._rec(x, ctx, blocks, depth) for x in (e.a, e.b))
            c = interval(e.b, ctx)
            const = int(c.lo) if c.lo == c.hi and not math.isinf(c.lo) else None
            found = _by_row(OPERATORS[e.op], a, b, const, n)
            if found is not None:
                return found
        return _whole(e, ctx, n)            # the block index over its whole range: sound

    def visit_const(self, e, ctx, blocks, depth, n):
        return _whole(e, ctx, n)

    visit_threadbinding = visit_load = visit_compare = visit_logical = visit_const


_SPANS = _Spans()


def footprint(access: Access, blocks: dict[str, np.ndarray]) -> list[Span2]:
    """Per dimension of the tensor, per block: the lowest and highest index the access
    can reach (before clipping at the tensor's border)."""
    shape = access.buffer.shape
    n = len(next(iter(blocks.values()))) if blocks else 1
    if access.indices is not None:
        spans = [_span(i, access.ctx, blocks) for i in access.indices]
    elif access.region is not None:
        spans = []
        for start, extent in zip(access.region.starts, access.region.extents):
            lo, hi = _span(start, access.ctx, blocks)
            spans.append((lo, hi + extent - 1))
    else:
        return [(np.zeros(n), np.full(n, float(extent - 1))) for extent in shape]
    # inf - inf on the way is NaN: no bound on that side
    return [(np.where(np.isnan(lo), -np.inf, lo), np.where(np.isnan(hi), np.inf, hi))
            for lo, hi in spans]


def windows(func: ir.PrimFunc, accesses: list[Access],
            block: tuple[int, ...]) -> dict[str, Window]:
    """Every tensor's window for one block: the box of all its accesses' footprints,
    clamped to the tensor (a clipped copy reads nothing outside it). An unused tensor
    gets an empty window."""
    blocks = {v.name: np.array([b]) for v, b in zip(func.kernel.block_vars, block)}
    boxes: dict[str, list[list[float]]] = {}
    for access in accesses:
        box = boxes.setdefault(access.buffer.name, [[math.inf, -math.inf]
                                                    for _ in access.buffer.shape])
        for (lo, hi), dim, extent in zip(footprint(access, blocks), box, access.buffer.shape):
            dim[0] = min(dim[0], min(max(float(lo[0]), 0), extent - 1))
            dim[1] = max(dim[1], max(min(float(hi[0]), extent - 1), 0))
    out = {}
    for p in func.params:
        box = boxes.get(p.name)
        limits = tuple((int(lo), int(hi) + 1) for lo, hi in box) if box else \
            tuple((0, 0) for _ in p.shape)
        out[p.name] = Window(p, limits)
    return out


# ============================================================================ classes

@dataclass(frozen=True)
class BlockClass:
    """Blocks that no clipping or block-dependent condition tells apart."""
    first: tuple[int, ...]            # its first block in row-major order
    size: int
    traits: tuple[str, ...]           # what sets it apart from other classes
    note: str | None = None           # how the classes were found, where not exhaustively

    def to_json(self) -> dict:
        return {"first": list(self.first), "blocks": self.size, "traits": list(self.traits),
                "note": self.note}


@dataclass(frozen=True)
class _Feature:
    describe: tuple[str, ...]         # text per value
    compute: object                   # blocks dict -> int8 array


def _features(func: ir.PrimFunc, accesses: list[Access]) -> list[_Feature]:
    out = []
    for access in accesses:
        for d, extent in enumerate(access.buffer.shape):
            def clip(blocks, access=access, d=d, extent=extent):
                lo, hi = footprint(access, blocks)[d]
                return (lo < 0).astype(np.int8) + 2 * (hi > extent - 1).astype(np.int8)
            what = f"{access.describe()} clipped in dimension {d}"
            out.append(_Feature(("", f"{what} (low border)", f"{what} (high border)",
                                 f"{what} (both borders)"), clip))
    for cond, ctx in _conditions(func):
        def truth(blocks, cond=cond, ctx=ctx):
            return _truth(cond, ctx, blocks)
        text = f"`{format_expr(cond)}` (line {cond.span.line})"
        out.append(_Feature((f"{text} never holds", f"{text} always holds",
                             f"{text} holds for some iterations"), truth))
    return out


def _conditions(func: ir.PrimFunc) -> list[tuple[ir.Compare, Context]]:
    """Integer comparisons of `if` conditions and selects that depend on the block."""
    found = []
    for stmt, ctx in statements(func.kernel):
        for expr in ir.stmt_exprs(stmt):
            for sub in ir.subexprs(expr):
                if isinstance(sub, ir.Select):
                    found.extend(_compares(sub.cond, ctx))
        if isinstance(stmt, ir.If):
            found.extend(_compares(stmt.cond, ctx))
    return found


def _compares(cond: ir.Expr, ctx: Context) -> list[tuple[ir.Compare, Context]]:
    return [(c, ctx) for c in ir.subexprs(cond)
            if isinstance(c, ir.Compare) and c.a.dtype.is_int and c.b.dtype.is_int
            and _depends(c, ctx)]


def _truth(cond: ir.Compare, ctx: Context, blocks) -> np.ndarray:
    """0 never, 1 always, 2 for some of the block's iterations (per block)."""
    (a_lo, a_hi), (b_lo, b_hi) = _span(cond.a, ctx, blocks), _span(cond.b, ctx, blocks)
    # the comparison runs in its operand dtype (C's usual conversions): a side that may
    # leave that dtype's range would be wrapped first, so its truth is not read here
    rng = _dtype_range(cond.operand_dtype)
    wraps = (a_lo < rng.lo) | (a_hi > rng.hi) | (b_lo < rng.lo) | (b_hi > rng.hi)
    lo, hi = a_lo - b_hi, a_hi - b_lo                 # the range of a - b
    always, never = OPERATORS[cond.op].truth(lo, hi)
    return np.where(wraps, 2, np.where(always, 1, np.where(never, 0, 2))).astype(np.int8)


def block_classes(func: ir.PrimFunc, accesses: list[Access]) -> list[BlockClass]:
    grid = func.kernel.grid
    names = [v.name for v in func.kernel.block_vars]
    features = _features(func, accesses)
    total = math.prod(grid)
    if total <= FULL_GRID_LIMIT:
        coords = np.indices(grid).reshape(len(grid), -1)
        signature = _signature(features, dict(zip(names, coords)), total)
        return _group(features, signature, coords, grid)
    # a grid too large to enumerate: classes per dimension (the others at their
    # first and last value), combined
    per_dim, notes = [], []
    for d, extent in enumerate(grid):
        reps: set[int] = {0, extent - 1}
        for fixed in (0, -1):
            found, note = _changes_along(features, names, grid, d, fixed)
            reps.update(found)
            if note and note not in notes:
                notes.append(note)
        per_dim.append(sorted(reps))
    firsts = np.array(np.meshgrid(*per_dim, indexing="ij")).reshape(len(grid), -1)
    signature = _signature(features, dict(zip(names, firsts)), firsts.shape[1])
    classes = _group(features, signature, firsts, grid, sized=False)
    return [replace(c, note="; ".join(notes)) for c in classes] if notes else classes


def _changes_along(features, names, grid, d: int, fixed: int) -> tuple[list[int], str | None]:
    """The first index of each signature along dimension d (the other dimensions at
    their first or last value). Up to DIM_LIMIT blocks every index is evaluated; past it,
    memory and time would grow with the grid, so the blocks near both ends, an evenly
    spaced sample and the first block after each change between sampled neighbours
    (bisected) stand in, and the note says so."""
    extent = grid[d]

    def keys(index: np.ndarray) -> np.ndarray:
        coords = np.array([index if k == d else np.full(len(index), (g - 1) if fixed else 0)
                           for k, g in enumerate(grid)])
        return _row_keys(_signature(features, dict(zip(names, coords)), len(index)))

    if extent <= DIM_LIMIT:
        _, first = np.unique(keys(np.arange(extent)), return_index=True)
        return [int(i) for i in first], None
    index = np.unique(np.concatenate([np.arange(DIM_ENDS), np.arange(extent - DIM_ENDS, extent),
                                      np.linspace(0, extent - 1, DIM_STRIDED).astype(np.int64)]))
    k = keys(index)
    _, first = np.unique(k, return_index=True)
    found = {int(index[i]) for i in first}
    changes = np.nonzero(k[1:] != k[:-1])[0]
    for c in changes[:DIM_REFINED]:
        lo, hi = int(index[c]), int(index[c + 1])     # keys(lo) != keys(hi): bisect
        left = k[c]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if keys(np.array([mid]))[0] == left:
                lo = mid
            else:
                hi = mid
        found.add(hi)
    note = (f"grid dimension {d} has {extent} blocks: classified from both ends "
            f"({DIM_ENDS} blocks each), {DIM_STRIDED} evenly spaced blocks and the first "
            f"block of {min(len(changes), DIM_REFINED)} change(s) between them"
            + (f" (of {len(changes)})" if len(changes) > DIM_REFINED else "")
            + "; a class narrower than the spacing can be missed")
    return sorted(found), note


def _signature(features, blocks, n) -> np.ndarray:
    out = np.zeros((n, max(1, len(features))), dtype=np.int8)
    for k, f in enumerate(features):
        out[:, k] = f.compute(blocks)
    return out


def _row_keys(signature: np.ndarray) -> np.ndarray:
    """One sortable key per row (every value is 0..3: two bits each when they fit in
    an int64, which makes np.unique over millions of blocks fast)."""
    if signature.shape[1] <= 31:
        key = np.zeros(signature.shape[0], dtype=np.int64)
        for k in range(signature.shape[1]):
            key |= signature[:, k].astype(np.int64) << (2 * k)
        return key
    return np.unique(signature, axis=0, return_inverse=True)[1].reshape(-1)


def _group(features, signature, coords, grid, sized=True) -> list[BlockClass]:
    _, first, counts = np.unique(_row_keys(signature), return_index=True,
                                 return_counts=True)
    rows = signature[first]
    varying = [k for k in range(signature.shape[1])
               if features and not (signature[:, k] == signature[0, k]).all()]
    out = []
    for r, i, c in sorted(zip(rows, first, counts), key=lambda t: t[1]):
        traits = tuple(t for k in varying if (t := features[k].describe[int(r[k])]))
        block = tuple(int(x) for x in coords[:, i])
        out.append(BlockClass(block, int(c) if sized else 0, traits or ("interior",)))
    return out


# ============================================================================ selection

@dataclass
class Selection:
    """Which blocks a check runs. blocks None: the whole grid in one run."""
    total: int
    independence: Independence
    classes: list[BlockClass]
    accesses: list[Access] = field(repr=False, default_factory=list)
    blocks: list[tuple[int, ...]] | None = None
    sampled: list[tuple[int, ...]] = field(default_factory=list)
    why_all: str | None = None

    def to_json(self) -> dict:
        return {"total": self.total, "independence": self.independence.to_json(),
                "classes": [c.to_json() for c in self.classes],
                "ran": None if self.blocks is None else [list(b) for b in self.blocks],
                "sampled": [list(b) for b in self.sampled], "all": self.blocks is None,
                "why_all": self.why_all}


def select(func: ir.PrimFunc, mode: str | int | None = None, seed: int = 0) -> Selection:
    """mode "all": every block; an integer N: the classes plus N random blocks;
    None: the classes plus DEFAULT_SAMPLE random blocks. Blocks not proved
    independent are all run, whatever the mode."""
    grid = func.kernel.grid
    total = math.prod(grid)
    accesses = global_accesses(func)
    independence = prove_independent(func, accesses)
    if total <= 1:
        return Selection(total, independence, [], accesses, why_all="one block")
    if not independence.proved:
        return Selection(total, independence, [], accesses,
                         why_all="independence not proved")
    classes = block_classes(func, accesses)
    if mode == "all":
        return Selection(total, independence, classes, accesses, why_all="--blocks all")
    extra = DEFAULT_SAMPLE if mode is None else int(mode)
    chosen = [c.first for c in classes] + [(0,) * len(grid), tuple(g - 1 for g in grid)]
    chosen = list(dict.fromkeys(chosen))
    rng = np.random.default_rng([seed, 0xB10C])
    if len(chosen) + extra >= total:
        return Selection(total, independence, classes, accesses,
                         why_all="the sample covers the grid")
    sampled: list[tuple[int, ...]] = []
    while len(sampled) < extra:       # rejection: the sample is far smaller than the grid
        flat = int(rng.integers(total))
        block = tuple(int(x) for x in np.unravel_index(flat, grid))
        if block not in chosen and block not in sampled:
            sampled.append(block)
    return Selection(total, independence, classes, accesses,
                     sorted(chosen + sampled), sampled)
