"""What a run will cost in memory, estimated before it starts (so a run that cannot fit
is refused with the number, not killed by the system halfway).

The model follows where the interpreter and simulator keep data. Per global tensor
element, held whole or as a block's window: the input array, the interpreter's storage
and its result copy, the simulator's storage (each the element's own size), the
interpreter's float64 bound array and the comparison's per-element masks (every tensor
is compared; its float64 temporaries are made a slab, or only the written elements, at
a time: interp.accept.judge). Per block (blocks run one after another, so the largest
counts): every on-chip buffer with its written flags and bounds, the lanes of the widest
`T.Parallel` (each lane carries loop variables, values, bounds and accounting ids), and
every contribution of the largest epoch, which the interpreter keeps until finalize to
sum exactly (value and output index, and their concatenation at finalize; the sum
itself goes 64 K terms at a time: interp.exact).

On the streaming GEMV (docs/limits.md) the estimate lies within about 20% of the traced
peak of the run's allocations (2026-12-03, tracemalloc over check_loaded in one
process: 65536², 4 sampled blocks, 198 MiB estimated for 207 traced; 16384², 53 for 65;
4096² with --blocks all, 395 for 384); the process
adds itself (the interpreter and its libraries, 60 to 150 MiB)."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.limits import MAX_ITERATIONS

from verify_reducer.interp.memory import Window

from verify_reducer.verify.epochs.bounds import trip_range
from verify_reducer.verify.epochs.scopes import Context, Frame, kernel_context

LANE_BYTES = 256              # per T.Parallel lane: env, temporaries, accounting ids
BUFFER_BYTES = 24             # per on-chip element beyond its value: flags, bound, pair
COMPARE_BYTES = 8             # per element: the comparison's masks
CONTRIBUTION_BYTES = 24       # per contribution of an epoch, held until its finalize


@dataclass(frozen=True)
class Estimate:
    data: int                 # global tensors (or their windows)
    working: int              # one block's working set

    @property
    def total(self) -> int:
        return self.data + self.working

    def describe(self) -> str:
        from verify_reducer.verify.oracle.pipeline import format_bytes
        return (f"{format_bytes(self.total)} (tensors {format_bytes(self.data)}, "
                f"per-block working set {format_bytes(self.working)})")

    def to_json(self) -> dict:
        return {"bytes": self.total, "tensors": self.data, "working_set": self.working}


def estimate(func: ir.PrimFunc, windows: list[dict[str, Window]] | None = None) -> Estimate:
    """The memory of a run of the whole grid (windows None), or of blocks run one by one
    against windows (one dict per block)."""
    if windows is None:
        sizes = [{p.name: p.size for p in func.params}]
    else:
        sizes = [{name: w.size for name, w in per_block.items()} for per_block in windows]
    data = max((sum(_tensor_bytes(p, size[p.name]) for p in func.params)
                for size in sizes), default=0)
    return Estimate(data, _working_set(func))


def _tensor_bytes(p: ir.Buffer, elements: int) -> int:
    return elements * (4 * np.dtype(p.dtype.np).itemsize + 8 + COMPARE_BYTES)


def _working_set(func: ir.PrimFunc) -> int:
    threads = func.kernel.threads
    buffers = lanes = 0
    for stmt in ir.walk(func.kernel.body):
        if isinstance(stmt, ir.Alloc):
            b = stmt.buffer
            copies = threads if b.scope == "local" else 1
            buffers += b.size * copies * (np.dtype(b.dtype.np).itemsize + BUFFER_BYTES)
        elif isinstance(stmt, ir.ParallelFor):
            n = 1
            for e in stmt.extents:
                n *= e
            lanes = max(lanes, max(n, threads))
    return buffers + max(lanes, threads) * LANE_BYTES + \
        _largest_epoch(func) * CONTRIBUTION_BYTES


def _largest_epoch(func: ir.PrimFunc) -> int:
    """The most contributions one reducer can collect in a block: every update site's
    T.Parallel lanes times the runs of the serial loops around it. A loop whose bounds
    are read at run time (`T.serial(n[0])`) is counted at most MAX_ITERATIONS times, the
    trip count the run enforces when it reaches the loop, never at its dtype's range
    (2**31 trips would be a false refusal of 128 GiB); so are the loops around one
    body together (the frontend refuses more for constant bounds, the interpreter for
    bounds it reads)."""
    per_reducer: dict[str, int] = {}

    def visit(body: ir.Body, ctx: Context, times: int, runs: int) -> None:
        for stmt in body:
            if isinstance(stmt, ir.ReducerUpdate):
                name = stmt.reducer.name
                per_reducer[name] = per_reducer.get(name, 0) + times * runs
            elif isinstance(stmt, ir.ParallelFor):
                n = 1
                for e in stmt.extents:
                    n *= e
                visit(stmt.body, ctx.enter(Frame(stmt, "body")), times * n, runs)
            elif isinstance(stmt, ir.SerialFor):
                most = trip_range(stmt, ctx)[1]
                trips = MAX_ITERATIONS if math.isinf(most) else min(int(most), MAX_ITERATIONS)
                visit(stmt.body, ctx.enter(Frame(stmt, "body")), times,
                      min(runs * trips, MAX_ITERATIONS))
            elif isinstance(stmt, ir.If):
                visit(stmt.then, ctx.enter(Frame(stmt, "then")), times, runs)
                visit(stmt.orelse, ctx.enter(Frame(stmt, "else")), times, runs)
            elif isinstance(stmt, ir.WarpGroup):
                visit(stmt.body, ctx.enter(Frame(stmt, "body")), times, runs)
            elif isinstance(stmt, ir.Let):
                ctx = ctx.bind_let(stmt)
    visit(func.kernel.body, kernel_context(func.kernel), 1, 1)
    return max(per_reducer.values(), default=0)


def physical_memory() -> int | None:
    """The memory this process may use: physical memory, or the address-space limit
    (`ulimit -v`, RLIMIT_AS) where that is lower — under `ulimit -v 4000000` a run the
    estimate puts at 3 GiB is refused with exit 2 by the default --max-memory (half of
    this), not killed halfway by the limit. None when neither is known."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = None
    limit = _address_space_limit()
    if limit is None:
        return physical
    return limit if physical is None else min(physical, limit)


def _address_space_limit() -> int | None:
    """The soft RLIMIT_AS in bytes; None when unlimited or unknown (not on Unix)."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else soft


def parse_size(text: str) -> int:
    """512M, 4G, 1.5G, 100000 (bytes): ValueError otherwise."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = units.get(t[-1:], 1)
    number = float(t[:-1] if t[-1:] in units else t)
    if not number > 0:
        raise ValueError(text)
    return int(number * scale)
