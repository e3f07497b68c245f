"""What the interpreter computes with: lanes and values.

A statement runs for a set of *lanes*, one per active logical iteration (one lane at the
top of a block; a `T.Parallel` multiplies them by its iteration count; an `if` keeps the
lanes whose condition holds). Every variable and every expression value is a numpy array
with one entry per lane, so a `T.Parallel` body runs once, vectorized, per statement."""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field, replace

import numpy as np

from verify_reducer.spec.dtypes import DType


@dataclass(frozen=True)
class Val:
    """A value per lane in `dtype`'s numpy storage, with its error bound (None = exact)."""
    v: np.ndarray
    dtype: DType
    b: np.ndarray | None = None

    def take(self, index: np.ndarray) -> "Val":
        return Val(self.v[index], self.dtype, None if self.b is None else self.b[index])


THREAD = "__thread__"   # the env name of T.get_thread_binding() in lanes forked per thread
RECENT_BINDINGS = 32    # Let layers of an env before Lanes.bind flattens them
SLOT, ITER, REP = "@slot", "@iter", "@rep"     # lane facts inside a T.Parallel (simulator)


@dataclass(frozen=True)
class Lanes:
    """The active lanes of a statement: the variables in scope (name → Val, one entry per
    lane), whether they run inside a T.Parallel (or once per thread), and:

    - taint: lanes whose control flow depended on an uncertain float comparison (their
      effects get an inf bound);
    - threads: (lanes × block threads) bool, which physical threads reach each lane's
      statements (None: all of them); narrowed by T.ws and by ifs on the thread index;
    - divergent: an if on the thread index narrowed `threads` (finalize there is R207);
    - deferred: Let statements (by name) whose value reads the thread index, evaluated
      where used."""
    n: int
    env: dict[str, Val]
    parallel: bool = False
    taint: np.ndarray | None = None
    threads: np.ndarray | None = None
    divergent: bool = False
    deferred: dict = field(default_factory=dict)

    def bind(self, name: str, val: Val) -> "Lanes":
        deferred = {k: v for k, v in self.deferred.items() if k != name}
        # a layer per Let, flattened every RECENT_BINDINGS: copying the whole env at
        # each Let made a chain of 20,000 Lets quadratic (seconds per stage)
        env = self.env
        if isinstance(env, ChainMap) and len(env.maps) < RECENT_BINDINGS:
            env = env.new_child({name: val})
        else:
            flat: dict[str, Val] = {}
            for layer in reversed(env.maps) if isinstance(env, ChainMap) else (env,):
                flat.update(layer)
            env = ChainMap({name: val}, flat)
        return replace(self, env=env, deferred=deferred)

    def defer(self, name: str, expr) -> "Lanes":
        env = {k: v for k, v in self.env.items() if k != name}
        return replace(self, env=env, deferred={**self.deferred, name: expr})

    def select(self, mask: np.ndarray) -> "Lanes":
        """The lanes where mask holds (the branch of an if, the live iterations of a loop)."""
        return self.gather(np.flatnonzero(mask))

    def gather(self, index: np.ndarray) -> "Lanes":
        """Lanes index[0], index[1], ... of these (repeats allowed)."""
        taint = None if self.taint is None else self.taint[index]
        if taint is not None and not taint.any():
            taint = None
        return replace(self, n=len(index),
                       env={k: v.take(index) for k, v in self.env.items()}, taint=taint,
                       threads=None if self.threads is None else self.threads[index])

    def tainted(self, where: np.ndarray) -> "Lanes":
        if not where.any():
            return self
        return replace(self, taint=where if self.taint is None else (self.taint | where))

    def thread_mask(self, count: int) -> np.ndarray:
        if self.threads is None:
            return np.ones((self.n, count), dtype=bool)
        return self.threads

    def expand(self, names: tuple[str, ...], extents: tuple[int, ...],
               dtypes: tuple[DType, ...]) -> "Lanes":
        """The lanes of a T.Parallel over extents inside these lanes: every outer lane
        times every iteration, row-major (outer lane slowest)."""
        count = int(np.prod(extents, dtype=np.int64)) if extents else 1
        env = {k: Val(np.repeat(v.v, count), v.dtype,
                      None if v.b is None else np.repeat(v.b, count))
               for k, v in self.env.items()}
        grid = np.indices(extents).reshape(len(extents), -1)
        for name, row, dtype in zip(names, grid, dtypes):
            env[name] = Val(dtype.quantize(np.tile(row, self.n)), dtype)
        taint = None if self.taint is None else np.repeat(self.taint, count)
        threads = None if self.threads is None else np.repeat(self.threads, count, axis=0)
        return replace(self, n=self.n * count, env=env, parallel=True, taint=taint,
                       threads=threads)


def const(value, dtype: DType, n: int) -> Val:
    """A literal broadcast to n lanes, converted to dtype as a C cast would."""
    return Val(dtype.quantize(np.full(n, value)), dtype)
