"""The vector width of a free T.Parallel loop or copy: how many consecutive iterations of
its innermost dimension one thread takes when the loop is partitioned at the free level
(spec.layout.vectorized_partition; TileLang's PlanLoopPartition with the vector size of
its loop vectorizer).

A thread that runs V consecutive iterations of the innermost variable k touches V
consecutive elements of every buffer indexed `[..., k + c]`: one 16-byte access where
the renderer can prove it aligned, and, for a reducer updated at `acc[i]`, V times fewer
partials to keep and combine than under the plain partition. The width is

    V = 16 bytes / the widest element among the accesses that use k,

halved until (a) V divides the innermost extent and (c) the loop has at least one
vector of V iterations per thread; it is 1 (the plain partition) when (b) some access
uses k other than as `k + (terms free of k)` in its last dimension — a transposed,
strided or data-dependent index has no runs to gain. Accesses that do not use k (a
reducer updated at `acc[i]`, a row vector at `x[i]`) are the same element across a
vector and ask nothing of it."""
from __future__ import annotations

import math

from verify_reducer.spec.dtypes import DType
from verify_reducer.spec.indexexpr import Var, linear_terms
from .layout_access import Access

VECTOR_BYTES = 16


def vector_width(shape: tuple[int, ...], names: tuple[str, ...], accesses: list[Access],
                 count: int) -> int:
    """V for a loop over shape (variables names) making these accesses on count threads,
    by the module's rule."""
    if not shape or shape[-1] <= 1:
        return 1
    inner = names[-1]
    touching = [a for a in accesses if a.index is None or _uses(a, inner)]
    if not touching or not all(_runs_along(a, inner) for a in touching):
        return 1
    sizes = [_element_bytes(a.buffer.dtype) for a in touching]
    if None in sizes or max(sizes) > VECTOR_BYTES:
        return 1
    v = VECTOR_BYTES // max(sizes)
    total = math.prod(shape)
    while v > 1 and (shape[-1] % v or total // v < count):
        v //= 2
    return v


def _uses(access: Access, name: str) -> bool:
    return any(name in e.free_vars() for e in access.index)


def _runs_along(access: Access, name: str) -> bool:
    """Whether the access uses the variable only as `name + (terms free of it)` in its
    last dimension: consecutive iterations touch consecutive elements. An index that is
    not affine (None) may use it in any way."""
    if access.index is None:
        return False
    *outer, last = access.index
    if any(name in e.free_vars() for e in outer):
        return False
    terms, _ = linear_terms(last)
    if terms.get(Var(name)) != 1:
        return False
    return all(name not in atom.free_vars() for atom in terms if atom != Var(name))


def _element_bytes(dtype: DType) -> int | None:
    """The size of one element, or None for a dtype that is not whole bytes."""
    return dtype.bits // 8 if dtype.bits % 8 == 0 and dtype.bits else None
