"""What the interpreter computes with: lanes and values.

A statement runs for a set of *lanes*, one per active logical iteration (one lane at the
top of a block; a `T.Parallel` multiplies them by its iteration count; an `if` keeps the
lanes whose condition holds). Every variable and every expression value is a numpy array
with one entry per lane, so a `T.Parallel` body runs once, vectorized, per statement."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spec.dtypes import DType


@dataclass(frozen=True)
class Val:
    """A value per lane in `dtype`'s numpy storage, with its error bound (None = exact)."""
    v: np.ndarray
    dtype: DType
    b: np.ndarray | None = None

    def take(self, mask: np.ndarray) -> "Val":
        return Val(self.v[mask], self.dtype, None if self.b is None else self.b[mask])


@dataclass(frozen=True)
class Lanes:
    """The active lanes of a statement: the variables in scope (name → Val, one entry per
    lane), whether they run inside a T.Parallel, and `taint`: lanes whose control flow
    depended on an uncertain float comparison (their effects get an inf bound)."""
    n: int
    env: dict[str, Val]
    parallel: bool = False
    taint: np.ndarray | None = None

    def bind(self, name: str, val: Val) -> "Lanes":
        return Lanes(self.n, {**self.env, name: val}, self.parallel, self.taint)

    def select(self, mask: np.ndarray) -> "Lanes":
        """The lanes where mask holds (the branch of an if, the live iterations of a loop)."""
        taint = None if self.taint is None else self.taint[mask]
        if taint is not None and not taint.any():
            taint = None
        return Lanes(int(mask.sum()), {k: v.take(mask) for k, v in self.env.items()},
                     self.parallel, taint)

    def tainted(self, where: np.ndarray) -> "Lanes":
        if not where.any():
            return self
        taint = where if self.taint is None else (self.taint | where)
        return Lanes(self.n, self.env, self.parallel, taint)

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
        return Lanes(self.n * count, env, True, taint)


def const(value, dtype: DType, n: int) -> Val:
    """A literal broadcast to n lanes, converted to dtype as a C cast would."""
    return Val(dtype.quantize(np.full(n, value)), dtype)
