"""Shrinking a finding: greedy delta debugging over the kernel description. Each step
tries smaller variants (drop reducers, shrink the grid, one warp, tiles, rows and
columns, a 1-D reducer, one update loop, plain contributions, no seed, batch, predicate,
staging or warp group; a split-K kernel's own: verify.fuzzing.splitk.variants) and keeps
the first one that still shows the same finding signature, until no variant does or the
budget of checks is spent."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator

from verify_reducer.verify.fuzzing import splitk
from verify_reducer.verify.fuzzing.grammar import Kernel, Reducer, _magnitude

Signature = tuple[str, str, str, str]


def minimize(k: Kernel | splitk.SplitK, signature: Signature,
             signature_of: Callable[[Kernel | splitk.SplitK], Signature | None],
             budget: int = 80) -> Kernel | splitk.SplitK:
    """The smallest variant of k found that signature_of still maps to signature."""
    checks = 0
    progress = True
    while progress and checks < budget:
        progress = False
        smaller = splitk.variants(k) if isinstance(k, splitk.SplitK) else _variants(k)
        for candidate in smaller:
            if checks >= budget:
                break
            checks += 1
            if signature_of(candidate) == signature:
                k, progress = candidate, True
                break
    return k


def _variants(k: Kernel) -> Iterator[Kernel]:
    """Smaller kernels than k, the biggest cuts first; each one valid by construction."""
    for n in range(len(k.reducers)):
        if len(k.reducers) > 1:
            yield _without(k, n)
    if k.blocks > 1:
        yield replace(k, grid=(1,))
    for d, extent in enumerate(k.grid):
        if extent > 1:
            yield replace(k, grid=k.grid[:d] + (1,) + k.grid[d + 1:])
    if len(k.grid) > 1:
        yield replace(k, grid=(k.blocks,))
    if k.ws:
        yield replace(k, ws=False, threads=128)
    elif k.threads > 32:
        yield replace(k, threads=32)       # one warp
    if k.interleave:
        yield replace(k, interleave=False)
    if k.fused:
        yield replace(k, fused=False)
    if k.splits:
        yield replace(k, splits=())
        if len(k.splits) > 1:
            for cut in k.splits:
                yield replace(k, splits=tuple(c for c in k.splits if c != cut))
    if k.kept:
        yield replace(k, kept=0)
        if k.kept > 1:
            yield replace(k, kept=1)
    if k.tiles > 1:
        yield _sized(k, tiles=k.tiles // 2 if k.tiles > 2 else 1)
    if k.rows > 1:
        yield _sized(k, rows=k.rows // 2)
        yield _sized(k, rows=1)
    if k.cols > 1:
        cols = k.cols // 2
        yield _sized(k, cols=cols, valid=min(k.valid, cols) if k.valid < k.cols else cols,
                     tail=min(k.tail, cols - 1))
    if k.tail:
        yield _sized(k, tail=0, reducers=tuple(replace(r, predicate=None)
                                               for r in k.reducers))
    if k.valid < k.cols:
        yield _sized(k, valid=k.cols, reducers=tuple(replace(r, predicate=None)
                                                     for r in k.reducers))
    if k.mode in ("pipelined", "staged"):
        width = k.cols * k.tiles - k.tail
        yield _sized(k, mode="direct", cols=width, valid=width, tiles=1, tail=0,
                     reducers=tuple(replace(r, predicate=None) for r in k.reducers))
    for n, r in enumerate(k.reducers):
        for simpler in _simpler(r):
            yield _sized(k, reducers=k.reducers[:n] + (simpler,) + k.reducers[n + 1:])


def _simpler(r: Reducer) -> Iterator[Reducer]:
    if r.value not in ("plain", "consume"):
        yield replace(r, value="plain")
    if r.seed is not None:
        yield replace(r, seed=None)
    if r.batch is not None:
        yield replace(r, batch=None)
    if r.predicate == "select":
        yield replace(r, predicate="if")
    if r.in_dtype != r.dtype and r.value != "consume":
        yield replace(r, in_dtype=r.dtype)
    if r.dtype in ("float16", "bfloat16", "float8_e4m3fn") and r.value != "consume":
        yield replace(r, dtype="float32", in_dtype="float32")
    if r.output != "copy":
        yield replace(r, output="copy")
    if r.user_op is not None:
        yield replace(r, user_op=None)      # the built-in op the declared one stands for
    if r.surface != "v2" and r.surface != "legacy":
        yield replace(r, surface="v2")


def _without(k: Kernel, n: int) -> Kernel:
    """k without reducer n; its consumers become plain reducers, later indices shift."""
    kept = []
    for m, r in enumerate(k.reducers):
        if m == n:
            continue
        if r.consumes == n:
            r = replace(r, consumes=None, value="plain")
        elif r.consumes is not None and r.consumes > n:
            r = replace(r, consumes=r.consumes - 1)
        kept.append(r)
    return replace(k, reducers=tuple(kept))


def _sized(k: Kernel, **changes) -> Kernel:
    """k with changes, each reducer's batch and input range refitted to the new sizes
    (fewer contributions never need a smaller range; a batch must divide the rows)."""
    k = replace(k, **changes)
    k = replace(k, splits=tuple(c for c in k.splits if c < k.cols))
    fitted = []
    for r in k.reducers:
        if r.batch is not None and k.rows % r.batch:
            r = replace(r, batch=None)
        if r.value != "consume":
            m = _magnitude(k, r.dtype, r.op, r.in_dtype, r.value)
            r = replace(r, magnitude=min(r.magnitude, m or 1))
        fitted.append(r)
    if k.mode == "serial" and any(r.surface == "rfc" for r in fitted):
        fitted = [replace(r, surface="v2") if r.surface == "rfc" else r for r in fitted]
    return replace(k, reducers=tuple(fitted))
