"""The warp builtins, executed exactly per lane (spec.warp, docs/semantics.md §2): a
shuffle reads its operand's value on the source lane CUDA's rule picks, a
T.warp_reduce_<op> is tl::warp_reduce's butterfly (lane masks 16, 8, 4, 2, 1), each step
combined in the value's dtype as the GPU does, so every lane of a warp ends with the
same bits.

Both interpreters evaluate them on lanes that are threads (the logical one forks the
statement per thread, interp.logical; the simulator's lanes are threads): the lanes of
one group (ORIGIN, the logical lane a statement was forked from; one group in the
simulator) exchange values. `__shfl_*_sync` with the full-warp mask needs all 32 lanes
of a warp to take part: a warp some of whose threads do not reach the call, or do not
exist (a block of fewer threads than a warp), is R501."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.ops import MONOIDS, REDUCE_KINDS
from verify_reducer.spec.warp import BUTTERFLY, SHUFFLES, WARP, WARP_REDUCES, source_lane

from . import bounds as B
from .values import THREAD, Lanes, Val

ORIGIN = "@origin"      # env name: the logical lane a per-thread fork came from


def warp_call(e: ir.Call, lanes: Lanes, mem, operand) -> Val:
    """The value of a T.shfl_* or T.warp_reduce_* call on every lane; `operand` is
    interp.evaluate.operand (passed in: this module is below it)."""
    if THREAD not in lanes.env:
        raise DiagnosticError(error(
            "R102", f"T.{e.func} here depends on the physical thread in a way the "
            f"logical interpreter cannot follow", e.span))
    threads = lanes.env[THREAD].v.astype(np.int64)
    group = lanes.env[ORIGIN].v.astype(np.int64) if ORIGIN in lanes.env else \
        np.zeros(lanes.n, dtype=np.int64)
    index = _lane_index(e, threads, group)
    value = operand(e.args[0], e.dtype, lanes, mem)
    if e.func in SHUFFLES:
        b = operand(e.args[1], e.args[1].dtype, lanes, mem).v
        width = int(e.args[2].value)
        source = threads - threads % WARP + source_lane(e.func, threads % WARP, b, width)
        return value.take(index(source))
    monoid = MONOIDS[REDUCE_KINDS[WARP_REDUCES[e.func]].monoid]
    for mask in BUTTERFLY:
        value = _combine(monoid, e.dtype, value, value.take(index(threads ^ mask)))
    return value


def _lane_index(e: ir.Call, threads: np.ndarray, group: np.ndarray):
    """index(source threads) -> the lanes holding them, in each lane's own group, after
    checking that every warp a group touches takes part whole (R501) and that no thread
    appears twice in a group (a T.Parallel's iterations, R100)."""
    keys = group * (1 << 20) + threads
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    if len(keys) > 1 and (sorted_keys[1:] == sorted_keys[:-1]).any():
        raise DiagnosticError(error(
            "R100", f"T.{e.func} inside a T.Parallel is not supported: which thread runs "
            f"an iteration is the loop layout's choice, so which lane a value comes from "
            f"has no logical meaning (call it outside the loop)", e.span))
    warp_keys = group * (1 << 20) + threads - threads % WARP
    for key in np.unique(warp_keys):
        present = np.count_nonzero(warp_keys == key)
        if present != WARP:
            first = int(key % (1 << 20))
            raise DiagnosticError(error(
                "R501", f"T.{e.func} is reached by {present} of the 32 threads of warp "
                f"{first // WARP} (threads {first}..{first + WARP - 1}): a full-warp "
                f"shuffle needs every lane of the warp (a block of fewer threads than a "
                f"warp, or a branch that leaves lanes out, is undefined in CUDA)", e.span))

    def index(source: np.ndarray) -> np.ndarray:
        return order[np.searchsorted(sorted_keys, group * (1 << 20) + source)]
    return index


def _combine(monoid, dtype, a: Val, b: Val) -> Val:
    """One butterfly step a ⊕ b in dtype, with the bound rules of interp.evaluate."""
    with np.errstate(all="ignore"):
        v = dtype.quantize(monoid.combine(dtype, a.v, b.v))
    if not dtype.is_float:
        return Val(v, dtype, B.taint(a.b, b.b))
    if monoid.name == "sum":
        return Val(v, dtype, B.rounded(dtype, B.total(a.b, b.b), v))
    return Val(v, dtype, B.widest(a.b, b.b))
