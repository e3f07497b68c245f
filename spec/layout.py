"""Layouts: where the elements of a fragment, or the iterations of a T.Parallel loop, live
among the threads of a participant set (docs/design.md §5).

A layout over a logical index space of shape S (index variables x = (x0, x1, ...)) and a
replica variable `rep` in [0, R) gives

    thread(x, rep)   the thread, relative to the participant offset, in [0, count)
    slot(x)          the per-thread register slot, in [0, slots_per_thread)

Replica r of element x lives in thread offset + thread(x, r) at slot(x). A valid layout is
injective on (x, rep) -> (thread, slot); `collision()` finds a witness when it is not.
Pairs (thread, slot) that no (x, rep) reaches are unused: idle threads of a replicated
loop, or the tail of a partial last slot (`inverse()` marks them -1).

Layouts are plain frozen data: the physical plan carries them to the simulator and the
CUDA renderer, which both evaluate them with numpy (`threads_of`, `slots_of`, `inverse`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .hashing import hashed_once
from .indexexpr import Const, IndexExpr, Var, as_expr, floordiv, mod

REP = "rep"
INDEX_NAMES = ("i", "j", "k", "l")
Indices = tuple[np.ndarray, ...]


def index_names(rank: int) -> tuple[str, ...]:
    """The default names of a fragment's index variables: i, j, k, l, then i4, i5, ..."""
    return INDEX_NAMES[:rank] if rank <= len(INDEX_NAMES) else \
        tuple(f"i{d}" for d in range(rank))


def fresh_rep(index_vars: tuple[str, ...]) -> str:
    """`rep`, or `rep_`, ... when a loop variable is already called rep."""
    name = REP
    while name in index_vars:
        name += "_"
    return name


def flat_index(shape: tuple[int, ...], index_vars: tuple[str, ...]) -> IndexExpr:
    """The row-major flattening sum(x_d * stride_d), dimensions of extent 1 dropped."""
    flat: IndexExpr = Const(0)
    stride = 1
    for extent, name in reversed(list(zip(shape, index_vars))):
        if extent > 1:
            flat = Var(name) * stride + flat
        stride *= extent
    return flat


@hashed_once
@dataclass(frozen=True)
class Layout:
    shape: tuple[int, ...]
    index_vars: tuple[str, ...]
    thread: IndexExpr                # over index_vars and rep_var; relative to offset
    slot: IndexExpr                  # over index_vars only: every replica uses one slot
    count: int                       # participants: threads [offset, offset + count)
    replicate: int = 1
    offset: int = 0
    rep_var: str = REP
    slots_per_thread: int = field(init=False, compare=False)

    def __post_init__(self):
        shape = tuple(int(s) for s in self.shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "index_vars", tuple(self.index_vars))
        object.__setattr__(self, "thread", as_expr(self.thread))
        object.__setattr__(self, "slot", as_expr(self.slot))
        if not shape or min(shape) < 1:
            raise ValueError(f"layout shape must be non-empty and positive: {shape}")
        if len(self.index_vars) != len(shape):
            raise ValueError(f"{len(shape)} dimensions but index variables {self.index_vars}")
        if self.rep_var in self.index_vars:
            raise ValueError(f"replica variable {self.rep_var!r} is also an index variable")
        if self.replicate < 1 or self.count < 1 or self.offset < 0:
            raise ValueError("replicate and count must be >= 1, offset >= 0")
        allowed = set(self.index_vars)
        if not set(self.slot.free_vars()) <= allowed:
            raise ValueError(f"slot {self.slot} may only use {self.index_vars}")
        if not set(self.thread.free_vars()) <= allowed | {self.rep_var}:
            raise ValueError(f"thread {self.thread} uses unknown variables")
        threads, slots = self.threads_of(), self.slots_of()
        if threads.min() < 0 or threads.max() >= self.count:
            raise ValueError(f"thread {self.thread} leaves [0, {self.count})")
        if slots.min() < 0:
            raise ValueError(f"slot {self.slot} is negative somewhere")
        object.__setattr__(self, "slots_per_thread", int(slots.max()) + 1)

    # --- the index space -------------------------------------------------------------

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def participants(self) -> tuple[int, int]:
        return self.offset, self.count

    def all_indices(self) -> Indices:
        """Every logical index in row-major order, one array per dimension."""
        return np.unravel_index(np.arange(self.size), self.shape)

    def ranges(self) -> dict[str, tuple[int, int]]:
        """Inclusive ranges of the index and replica variables, for simplification."""
        out = {v: (0, e - 1) for v, e in zip(self.index_vars, self.shape)}
        out[self.rep_var] = (0, self.replicate - 1)
        return out

    # --- evaluation ------------------------------------------------------------------

    def threads_of(self, indices: Indices | None = None, absolute: bool = False) -> np.ndarray:
        """[R, N]: the thread of replica r of the n-th index (indices: one array per
        dimension, N long; default all of them, row-major)."""
        if indices is None:
            indices = self.all_indices()
        n = len(np.asarray(indices[0]).reshape(-1))
        env = {v: np.asarray(ix, dtype=np.int64).reshape(1, -1)
               for v, ix in zip(self.index_vars, indices)}
        env[self.rep_var] = np.arange(self.replicate, dtype=np.int64).reshape(-1, 1)
        threads = np.broadcast_to(self.thread.evaluate(env), (self.replicate, n))
        return threads + self.offset if absolute else np.array(threads)

    def slots_of(self, indices: Indices | None = None) -> np.ndarray:
        """[N]: the slot of the n-th index."""
        if indices is None:
            indices = self.all_indices()
        n = len(np.asarray(indices[0]).reshape(-1))
        env = {v: np.asarray(ix, dtype=np.int64).reshape(-1)
               for v, ix in zip(self.index_vars, indices)}
        return np.array(np.broadcast_to(self.slot.evaluate(env), (n,)))

    def _cells(self) -> np.ndarray:
        """[R*N]: thread*S + slot of every (rep, index), rep-major."""
        threads = self.threads_of()
        return (threads * self.slots_per_thread + self.slots_of()[None, :]).reshape(-1)

    def collision(self) -> tuple[tuple[int, int], tuple[int, int], int, int] | None:
        """None when injective; else ((flat1, rep1), (flat2, rep2), thread, slot) for
        the first two (index, replica) pairs that share a (thread, slot)."""
        cells = self._cells()
        order = np.argsort(cells, kind="stable")
        dup = np.nonzero(cells[order][1:] == cells[order][:-1])[0]
        if not len(dup):
            return None
        a, b = int(order[dup[0]]), int(order[dup[0] + 1])
        n = self.size
        cell = int(cells[a])
        return (a % n, a // n), (b % n, b // n), cell // self.slots_per_thread, \
            cell % self.slots_per_thread

    def is_injective(self) -> bool:
        return self.collision() is None

    def inverse(self) -> tuple[np.ndarray, np.ndarray]:
        """(index, replica), each [count, slots_per_thread]: for every (thread relative
        to offset, slot) the flat logical index and replica stored there, or -1 where the
        pair is unused. ValueError if the layout is not injective."""
        hit = self.collision()
        if hit is not None:
            raise ValueError(f"layout is not injective: (index, rep) {hit[0]} and {hit[1]} "
                             f"share thread {hit[2]} slot {hit[3]}")
        n = self.size
        index = np.full(self.count * self.slots_per_thread, -1, dtype=np.int64)
        replica = np.full_like(index, -1)
        cells = self._cells()
        flat = np.arange(self.replicate * n, dtype=np.int64)
        index[cells] = flat % n
        replica[cells] = flat // n
        shape = (self.count, self.slots_per_thread)
        return index.reshape(shape), replica.reshape(shape)

    # --- derived layouts and text ----------------------------------------------------

    def rename(self, index_vars: tuple[str, ...]) -> "Layout":
        """The same layout over other index variable names (the replica variable is
        renamed too if it would clash)."""
        index_vars = tuple(index_vars)
        rep = fresh_rep(index_vars)
        mapping = {old: Var(new) for old, new in zip(self.index_vars, index_vars)}
        slot = self.slot.substitute(mapping)
        mapping[self.rep_var] = Var(rep)
        return Layout(self.shape, index_vars, self.thread.substitute(mapping), slot,
                      self.count, self.replicate, self.offset, rep)

    def describe(self) -> str:
        """`thread = 8*rep + j, slot = 0, replicate 16 (threads 0..127)`."""
        last = self.offset + self.count - 1
        return (f"thread = {self.thread}, slot = {self.slot}, replicate {self.replicate} "
                f"(threads {self.offset}..{last})")

    def __str__(self) -> str:
        return self.describe()

    def to_json(self) -> dict:
        """The layout as JSON (verify_reducer/schemas/defs.schema.json `layout`): its expressions
        as text, and describe()."""
        return {"shape": list(self.shape), "index_vars": list(self.index_vars),
                "rep_var": self.rep_var, "thread": str(self.thread),
                "slot": str(self.slot), "replicate": self.replicate,
                "offset": self.offset, "count": self.count, "text": self.describe()}


# ============================================================ the standard layouts

def default_partition(shape: tuple[int, ...], count: int, offset: int = 0,
                      index_vars: tuple[str, ...] | None = None) -> Layout:
    """TileLang's partition of an index space over `count` threads (docs/design.md §5):
    flatten row-major; N >= count: thread = flat mod count, slot = flat div count (the
    last slot partial when count does not divide N); N < count: R = count div N replicas,
    thread = rep*N + flat, slot 0, and threads >= R*N sit it out."""
    shape = tuple(int(s) for s in shape)
    index_vars = tuple(index_vars) if index_vars is not None else index_names(len(shape))
    rep = fresh_rep(index_vars)
    ranges = {v: (0, e - 1) for v, e in zip(index_vars, shape)}
    flat = flat_index(shape, index_vars).simplify(ranges)
    n = math.prod(shape)
    if n >= count:
        return Layout(shape, index_vars, mod(flat, count, ranges),
                      floordiv(flat, count, ranges), count, 1, offset, rep)
    replicate = count // n
    thread = (Var(rep) * n + flat) if replicate > 1 else flat
    return Layout(shape, index_vars, thread, Const(0), count, replicate, offset, rep)


def vectorized_partition(shape: tuple[int, ...], count: int, offset: int = 0,
                         index_vars: tuple[str, ...] | None = None, vec: int = 1) -> Layout:
    """TileLang's vectorized loop partition (PlanLoopPartition with a vector size): each
    thread takes `vec` consecutive iterations of the innermost dimension, so that a
    thread's iterations can be one 16-byte access. Flatten row-major; vector
    c = flat div vec goes to thread c mod count, its elements to the consecutive slots
    (c div count)*vec + flat mod vec. vec must divide the innermost extent; with fewer
    vectors than threads (or vec 1) this is the default partition."""
    shape = tuple(int(s) for s in shape)
    index_vars = tuple(index_vars) if index_vars is not None else index_names(len(shape))
    n = math.prod(shape)
    if vec <= 1 or n // vec < count:
        return default_partition(shape, count, offset, index_vars)
    if shape[-1] % vec:
        raise ValueError(f"vector width {vec} does not divide the innermost extent "
                         f"{shape[-1]}")
    ranges = {v: (0, e - 1) for v, e in zip(index_vars, shape)}
    flat = flat_index(shape, index_vars).simplify(ranges)
    vector = floordiv(flat, vec, ranges)
    thread = mod(vector, count, ranges) if count > 1 else Const(0)
    slot = floordiv(vector, count, ranges) * vec + mod(flat, vec, ranges)
    return Layout(shape, index_vars, thread, slot.simplify(ranges), count, 1, offset,
                  fresh_rep(index_vars))


def fully_replicated(shape: tuple[int, ...], count: int, offset: int = 0,
                     index_vars: tuple[str, ...] | None = None) -> Layout:
    """Every participant holds every element: thread = rep, slot = flat index."""
    shape = tuple(int(s) for s in shape)
    index_vars = tuple(index_vars) if index_vars is not None else index_names(len(shape))
    rep = fresh_rep(index_vars)
    return Layout(shape, index_vars, Var(rep) if count > 1 else Const(0),
                  flat_index(shape, index_vars), count, count, offset, rep)
