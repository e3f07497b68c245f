"""The rules that relate layouts, as pure functions on spec.layout.Layout:

- follow:  the layout of a loop that indexes an already placed fragment (TileLang's
           ParallelOp: the loop runs iteration x where the fragment holds element e(x));
- compose: the layout of a fragment a loop reaches through an index it can invert
           (codegen.layout_inverse): each element lives where the loop runs the
           iterations that touch it, replicated over the loop variables the index does
           not use; `project` is the case of bare loop variables (a T.reduce_*
           destination, a reducer's storage);
- check:   whether a loop layout and a fragment layout agree on one access — a read needs
           every thread that runs x to hold e(x), a write needs exactly the holders; a
           Mismatch carries the iteration, element and thread an R300 draws.

Every rule is decided numerically on all points (index spaces are compile-time and
small), so it holds exactly, not up to what a symbolic simplifier can prove. A rule that
does not apply returns a sentence saying why; the caller turns it into an R300. "Small"
is enforced, never assumed: a layout (or a comparison of two) past MAX_LAYOUT_CELLS
cells raises TooManyCells before it is built (R102), and an access whose context
variables take more than MAX_LAYOUT_CONTEXTS values is not decided (R300 saying so)."""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from verify_reducer.spec.indexexpr import Const, IndexExpr, Var
from verify_reducer.spec.limits import MAX_LAYOUT_CELLS, MAX_LAYOUT_CONTEXTS, power_of_two
from verify_reducer.spec.source import Span
from verify_reducer.spec.layout import Layout, flat_index, fresh_rep, index_names
from .layout_access import Access
from .layout_inverse import IndexInverse, kept_inverse

Why = str


class TooManyCells(Exception):
    """A layout, or the comparison of two, that would evaluate more than
    MAX_LAYOUT_CELLS (thread, slot) cells: every rule here is decided on all points
    with numpy, so past the limit the program is refused (R102 at span), never
    allocated."""

    def __init__(self, what: str, cells: int, span: Span | None):
        super().__init__(what)
        self.message = (f"{what} would hold {cells} cells (elements × replicas); layout "
                        f"inference evaluates at most {power_of_two(MAX_LAYOUT_CELLS)} "
                        f"(docs/limits.md)")
        self.span = span


def bound_cells(cells: int, what: str, span: Span | None) -> None:
    """TooManyCells when cells pass MAX_LAYOUT_CELLS (checked before anything of that
    size is built)."""
    if cells > MAX_LAYOUT_CELLS:
        raise TooManyCells(what, cells, span)


def _contexts(access: Access) -> Iterator[dict[str, int]]:
    """Every assignment of the access's context variables (one empty one if none)."""
    names = list(access.domains)
    for values in itertools.product(*(access.domains[n] for n in names)):
        yield dict(zip(names, (int(v) for v in values)))


def _too_many_contexts(access: Access) -> Why | None:
    """Why the rules will not decide this access: its context variables (block indices,
    serial loop variables) take more assignments together than they enumerate. Each
    assignment evaluates the whole loop, so the count is what the decision costs; past
    MAX_LAYOUT_CONTEXTS it is refused, never sampled (a sample would not be exact)."""
    count = math.prod(len(access.domains[n]) for n in access.domains)
    if count <= MAX_LAYOUT_CONTEXTS:
        return None
    names = ", ".join(access.domains)
    return (f"{access.text} depends on {names} ({count} values in all); the layout "
            f"rules decide an access on every value and enumerate at most "
            f"{power_of_two(MAX_LAYOUT_CONTEXTS)} (docs/limits.md)")


def _point_text(names, values) -> str:
    return ", ".join(f"{n}={int(v)}" for n, v in zip(names, values))


def _element_indices(access: Access, loop: Layout | tuple, ctx: dict[str, int]):
    """The fragment index touched by every point of the loop's index space, or a reason
    when one leaves the fragment's shape."""
    shape, names = (loop.shape, loop.index_vars) if isinstance(loop, Layout) else loop
    points = np.unravel_index(np.arange(math.prod(shape)), shape)
    env = dict(zip(names, points), **ctx)
    n = len(points[0])
    index = [np.broadcast_to(e.evaluate(env), (n,)) for e in access.index]
    for ix, extent in zip(index, access.buffer.shape):
        bad = np.nonzero((ix < 0) | (ix >= extent))[0]
        if len(bad):
            p = bad[0]
            at = _point_text(names, [pt[p] for pt in points])
            return None, (f"{access.text} leaves the shape {access.buffer.shape} of "
                          f"{access.buffer.name} at iteration ({at})")
    return tuple(index), None


# ----------------------------------------------------------------------------- follow

def follow(frag: Layout, access: Access, shape: tuple[int, ...], loop_vars: tuple[str, ...],
           participants: tuple[int, int]) -> Layout | Why:
    """The loop layout under which every iteration x runs where frag holds e(x):
    thread(x, rep) = frag.thread(e(x), rep). Context variables in e may not move the
    holders (checked on every value). The loop's slot numbers each thread's iterations:
    frag's slot of e(x) when that is injective, else extended by the loop variables e
    does not use, else the flat iteration index."""
    if access.index is None:
        return f"{access.text} is not an affine function of the loop variables"
    if frag.participants != participants:
        return (f"{access.buffer.name} lives on threads {_range(frag.participants)}, "
                f"the loop runs on threads {_range(participants)}")
    too_many = _too_many_contexts(access)
    if too_many:
        return too_many
    bound_cells(math.prod(shape) * frag.replicate,
                f"a loop following {access.buffer.name} (replicated {frag.replicate}×)",
                access.span)
    rep = fresh_rep(loop_vars)
    by_var = dict(zip(frag.index_vars, access.index))
    first = None
    reference = None
    for ctx in _contexts(access):
        index, why = _element_indices(access, (shape, loop_vars), ctx)
        if why:
            return why
        holders = np.sort(frag.threads_of(index), axis=0)
        if reference is None:
            first, reference = ctx, holders
        elif not np.array_equal(holders, reference):
            n = int(np.nonzero((holders != reference).any(axis=0))[0][0])
            moved = ", ".join(f"{k}={v}" for k, v in ctx.items())
            at = _point_text(loop_vars, np.unravel_index(n, shape))
            return (f"the threads holding {access.text} at iteration ({at}) change "
                    f"with {moved}: the loop cannot follow them")
    if reference is None:                   # a context variable with no values
        first = {name: 0 for name in access.domains}
    with_ctx = {k: e.substitute(first) for k, e in by_var.items()}
    ranges = {v: (0, e - 1) for v, e in zip(loop_vars, shape)}
    ranges[rep] = (0, frag.replicate - 1)
    thread = frag.thread.substitute(dict(with_ctx, **{frag.rep_var: Var(rep)})).simplify(ranges)
    slot = frag.slot.substitute(with_ctx).simplify(ranges)
    used = {v for e in access.index for v in e.free_vars()}
    unused = tuple(d for d, v in enumerate(loop_vars) if v not in used and shape[d] > 1)
    candidates = [slot]
    if unused:
        sub_shape = tuple(shape[d] for d in unused)
        sub_vars = tuple(loop_vars[d] for d in unused)
        candidates.append(slot * math.prod(sub_shape) + flat_index(sub_shape, sub_vars))
    candidates.append(flat_index(shape, loop_vars).simplify(ranges))
    return _first_injective(shape, loop_vars, thread, candidates, frag.count,
                            frag.replicate, frag.offset, rep)


def _range(participants: tuple[int, int]) -> str:
    offset, count = participants
    return f"{offset}..{offset + count - 1}"


def _first_injective(shape, index_vars, thread, slots, count, replicate, offset, rep) -> Layout:
    """The layout with the first slot expression that makes it injective; the last
    candidate must always be (a flat index gives every element its own slot)."""
    for slot in slots:
        layout = Layout(shape, index_vars, thread, slot, count, replicate, offset, rep)
        if layout.is_injective():
            return layout
    raise AssertionError(f"no injective slot among {slots} for thread = {thread}")


# ----------------------------------------------------------------------------- project

def project(source: Layout, kept: tuple[int | None, ...], shape: tuple[int, ...],
            single_holder_fallback: bool = False) -> Layout | Why:
    """The layout of a buffer of `shape` whose dimension d is source dimension kept[d],
    replicated over the source dimensions it drops; a dimension with kept[d] None (a
    unit dimension, one indexed by serial variables or constants) is kept whole by every
    holder. compose() with the projection as the inverse."""
    return compose(source, kept_inverse(kept), shape, single_holder_fallback)


def compose(source: Layout, inverse: IndexInverse, shape: tuple[int, ...],
            single_holder_fallback: bool = False) -> Layout | Why:
    """The layout of a buffer of `shape` whose element y lives wherever source holds the
    iterations x that inverse maps y to: source dimension k is inverse.loop_of[k](y)
    plus the digits of it the index leaves out, and each holder keeps the dimensions
    inverse.whole in consecutive slots. The source dimensions and digits the inverse
    drops replicate y; the replica variable enumerates (source replica, dropped digits)
    and is condensed when the holders repeat. When the holders of different elements
    cannot share one replica numbering, the result is refused — or, with
    single_holder_fallback (sound for a reduction's destination, whose every holder
    receives the full result), placed on one holder only."""
    names = index_names(len(shape))
    rep = fresh_rep(names)
    fixed: dict[str, IndexExpr] = {v: inverse.loop_of.get(d, Const(0))
                                   for d, v in enumerate(source.index_vars)}
    digits = _replica_digits(source.shape, inverse)
    spread = math.prod(extent for _, _, extent in digits)
    mapping = dict(fixed)
    stride = spread
    for dim, weight, extent in digits:
        stride //= extent
        name = source.index_vars[dim]
        mapping[name] = mapping[name] + ((Var(rep) // stride) % extent) * weight
    mapping[source.rep_var] = Var(rep) // spread
    thread = source.thread.substitute(mapping)
    slot = source.slot.substitute(fixed)   # the slot of replica digits 0 (a numbering)
    ranges = {v: (0, e - 1) for v, e in zip(names, shape)}
    bound_cells(math.prod(shape) * spread * source.replicate,
                f"a fragment of shape {shape} placed by a loop", None)
    condensed = _condensed_replicate(thread, shape, names, rep, spread * source.replicate)
    if condensed is None:
        if not single_holder_fallback:
            return ("its elements are held by different numbers of threads (or repeatedly "
                    "by one thread), so no replica numbering covers them all")
        thread, replicate = thread.substitute({rep: 0}), 1
    else:
        replicate, stride = condensed
        if stride > 1:
            thread = thread.substitute({rep: Var(rep) * stride})
    ranges[rep] = (0, replicate - 1)
    thread, slot = thread.simplify(ranges), slot.simplify(ranges)
    return _first_injective(shape, names, thread, _slot_candidates(slot, inverse, shape, names),
                            source.count, replicate, source.offset, rep)


def _replica_digits(shape: tuple[int, ...], inverse: IndexInverse):
    """The (loop dimension, weight, extent) the replica variable enumerates after the
    source replica, most significant first: every dimension the inverse drops, whole,
    and the digits of used dimensions it leaves out."""
    dropped = [(d, 1, n) for d, n in enumerate(shape) if d not in inverse.loop_of]
    return sorted(dropped + list(inverse.spread), key=lambda g: (g[0], -g[1]))


def _slot_candidates(slot: IndexExpr, inverse: IndexInverse, shape, names) -> list[IndexExpr]:
    """The source's slot; then each holder of a source slot keeping the whole dimensions
    in consecutive slots; then also the elements the loop does not touch beside the one
    it does; finally the flat index (always injective)."""
    ranges = {v: (0, e - 1) for v, e in zip(names, shape)}
    whole = [(Var(names[d]), shape[d]) for d in inverse.whole if shape[d] > 1]
    layers = [whole, whole + list(inverse.apart)] if inverse.apart else [whole]
    candidates = [slot]
    for parts in layers:
        if parts:
            extents = math.prod(extent for _, extent in parts)
            candidates.append((slot * extents + _mixed_radix(parts)).simplify(ranges))
    candidates.append(flat_index(shape, names))
    return candidates


def _mixed_radix(parts) -> IndexExpr:
    """sum(value_d * stride_d), row-major over the parts' extents (flat_index of values)."""
    flat: IndexExpr = Const(0)
    stride = 1
    for value, extent in reversed(parts):
        flat = value * stride + flat
        stride *= extent
    return flat


def _condensed_replicate(thread: IndexExpr, shape, names, rep: str,
                         replicate: int) -> tuple[int, int] | None:
    """(H, s): the number H of holders of every element, and the smallest stride s such
    that replicas 0, s, ..., (H-1)*s reach each of them once — s > 1 when consecutive
    replicas stay on one thread (a dropped dimension whose consecutive values one thread
    runs, as under a vectorized partition); None when the elements have different
    holder counts or no stride reaches them all."""
    points = np.unravel_index(np.arange(math.prod(shape)), shape)
    env = {v: p.reshape(1, -1) for v, p in zip(names, points)}
    env[rep] = np.arange(replicate).reshape(-1, 1)
    threads = np.broadcast_to(thread.evaluate(env), (replicate, len(points[0])))
    ordered = np.sort(threads, axis=0)
    distinct = 1 + (np.diff(ordered, axis=0) != 0).sum(axis=0)
    if not (distinct == distinct[0]).all():
        return None
    h = int(distinct[0])
    if h == 1:
        return 1, 1
    for stride in range(1, (replicate - 1) // (h - 1) + 1):
        head = np.sort(threads[:h * stride:stride], axis=0)
        if not (np.diff(head, axis=0) == 0).any():
            return h, stride
    return None


def reduce_kept(src_shape: tuple[int, ...], dim: int, dst_shape: tuple[int, ...]):
    """Which src dimension each dst dimension is, for T.reduce_*(src, dst, dim): dst is
    src without dim, or src with dim kept at extent 1, or (1,) for a 1-D src."""
    rest = tuple(d for d in range(len(src_shape)) if d != dim)
    if tuple(src_shape[d] for d in rest) == tuple(dst_shape):
        return rest
    if len(dst_shape) == len(src_shape) and dst_shape[dim] == 1 and \
            all(dst_shape[d] == src_shape[d] for d in rest):
        return tuple(None if d == dim else d for d in range(len(src_shape)))
    if not rest and tuple(dst_shape) == (1,):
        return (None,)
    return None


def holders_contain(outer: Layout, kept: tuple[int | None, ...], inner: Layout) -> Why | None:
    """Whether every thread holding an element in `inner` (the placed destination) also
    holds it by projecting `outer` (the source) — the reduction delivers it there."""
    names = inner.index_vars
    dropped = [d for d in range(len(outer.shape)) if d not in kept]
    spread = math.prod(outer.shape[d] for d in dropped)
    points = inner.all_indices()
    n = len(points[0])
    src_index = [None] * len(outer.shape)
    for d, src_dim in enumerate(kept):
        if src_dim is not None:
            src_index[src_dim] = points[d]
    full = []
    for combo in itertools.product(*(range(outer.shape[d]) for d in dropped)):
        for d, v in zip(dropped, combo):
            src_index[d] = np.full(n, v)
        full.append(outer.threads_of(tuple(src_index), absolute=True))
    held = np.concatenate(full, axis=0) if spread else np.empty((0, n), np.int64)
    placed = inner.threads_of(absolute=True)
    ok = _in_columns(placed, held)
    if ok.all():
        return None
    r, p = (int(a[0]) for a in np.nonzero(~ok))
    at = _point_text(names, [pt[p] for pt in points])
    return f"thread {int(placed[r, p])} holds element ({at}) but does not take part in its reduction"


# ----------------------------------------------------------------------------- check

@dataclass(frozen=True)
class Mismatch:
    """Why a loop layout and a fragment layout disagree on one access (`why`, the
    sentence an R300 quotes), with its evidence when the access names one element:
    the loop's iteration, the fragment element it touches and the thread that runs
    the iteration without holding the element (a read) or holds the element without
    running the iteration that writes it (a write: that replica would go stale). An
    index that is not affine, or leaves the fragment's shape, has no such evidence."""
    why: str
    iteration: tuple[int, ...] | None = None
    element: tuple[int, ...] | None = None
    thread: int | None = None
    write: bool = False
    context: tuple[tuple[str, int], ...] = ()   # the serial loop variables' values


def check(loop: Layout, frag: Layout, access: Access) -> Mismatch | None:
    """Whether the loop may make this access in registers: for a read, every thread that
    runs iteration x holds element e(x); for a write, the threads that run x are exactly
    those that hold e(x) (a holder left out would keep a stale replica)."""
    if access.index is None:
        return Mismatch(f"{access.text} is not an affine function of the loop variables")
    too_many = _too_many_contexts(access)
    if too_many:
        return Mismatch(too_many)
    bound_cells(loop.size * max(loop.replicate, frag.replicate),
                f"checking {access.text} against its loop", access.span)
    runs = loop.threads_of(absolute=True)
    for ctx in _contexts(access):
        index, why = _element_indices(access, loop, ctx)
        if why:
            return Mismatch(why)
        holds = frag.threads_of(index, absolute=True)
        held = _in_columns(runs, holds)
        if not held.all():
            r, n = (int(a[0]) for a in np.nonzero(~held))
            return Mismatch(
                f"iteration ({_iteration(loop, n, ctx)}) runs on thread "
                f"{int(runs[r, n])}, which does not hold {_element(access, index, n)} "
                f"(held by threads {_threads(holds[:, n])})",
                _point(loop, n), tuple(int(ix[n]) for ix in index), int(runs[r, n]),
                context=tuple(ctx.items()))
        if access.write:
            ran = _in_columns(holds, runs)
            if not ran.all():
                r, n = (int(a[0]) for a in np.nonzero(~ran))
                return Mismatch(
                    f"{_element(access, index, n)} is held by thread "
                    f"{int(holds[r, n])}, which does not run iteration "
                    f"({_iteration(loop, n, ctx)}) that writes it: that replica "
                    f"would go stale (written by threads {_threads(runs[:, n])})",
                    _point(loop, n), tuple(int(ix[n]) for ix in index),
                    int(holds[r, n]), write=True, context=tuple(ctx.items()))
    return None


def _in_columns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[Ra, N]: whether a[r, n] is among b[:, n] — by sorted keys (column, thread), so
    the cost follows the two arrays, not their product (a loop replicated 128 times
    against a fragment replicated 128 times is 16 384 comparisons per iteration)."""
    n = a.shape[1]
    if n == 0 or b.shape[0] == 0:
        return np.zeros(a.shape, dtype=bool)
    width = int(max(a.max(), b.max())) + 1
    column = np.arange(n, dtype=np.int64)
    return np.isin(column * width + a, column * width + b)


def _point(loop: Layout, n: int) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(n, loop.shape))


def _iteration(loop: Layout, n: int, ctx: dict[str, int]) -> str:
    text = _point_text(loop.index_vars, np.unravel_index(n, loop.shape))
    extra = ", ".join(f"{k}={v}" for k, v in ctx.items())
    return f"{text}, {extra}" if extra else text


def _element(access: Access, index, n: int) -> str:
    return f"{access.buffer.name}[{', '.join(str(int(ix[n])) for ix in index)}]"


def _threads(threads: np.ndarray) -> str:
    values = sorted(set(int(t) for t in threads))
    if len(values) > 6:
        return f"{values[0]}, {values[1]}, ..., {values[-1]} ({len(values)} threads)"
    return ", ".join(str(v) for v in values)
