"""What a planner sees of one reducer, and the plan pieces every planner assembles.

`gather_reducers` walks a kernel once and returns, per reducer buffer in allocation
order, a `ReducerSites`: its participant set, its update sites with their loop layouts,
its finalize sites with their named barrier ids. A planner (codegen.plan_canonical,
codegen.plan_legacy, the fast planner to come) is a function ReducerSites -> ReducerPlan.

The participant set is the execution domain of the reducer's finalize — the threads that
run the collective, e.g. [128, 256) inside `T.ws(1)` — never the reducer's own layout
(TileLang #2346). Every update must run inside it, or its contribution would land in a
thread that never joins the collective."""
from __future__ import annotations

from dataclasses import dataclass

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import FinalizePlan, SitePlan
from .collectives import Collective
from .layout import LayoutMap

# Named barrier 0 is __syncthreads; the hardware has 16.
BARRIER_IDS = tuple(range(1, 16))


@dataclass(frozen=True)
class ReducerSites:
    reducer: ir.Buffer
    participants: tuple[int, int]            # (offset, count)
    updates: tuple[ir.ReducerUpdate, ...]
    finalizes: tuple[ir.ReducerFinalize, ...]
    barrier_ids: dict                        # ReducerFinalize -> named barrier id
    layouts: LayoutMap

    @property
    def word_bytes(self) -> int:
        return max(1, self.reducer.dtype.bits // 8)

    def loop(self, update: ir.ReducerUpdate) -> Layout:
        return self.layouts.update(update)

    def dst_layout(self, finalize: ir.ReducerFinalize) -> Layout | None:
        """The destination fragment's layout; None for in-place, shared or global."""
        dst = finalize.dst
        if dst is None or dst.scope != "fragment":
            return None
        return self.layouts.fragments.get(dst)


# ----------------------------------------------------------------------------- gathering

def gather_reducers(func: ir.PrimFunc, layouts: LayoutMap) -> list[ReducerSites]:
    allocs: dict[ir.Buffer, ir.Alloc] = {}
    updates: dict[ir.Buffer, list[ir.ReducerUpdate]] = {}
    finalizes: dict[ir.Buffer, list[ir.ReducerFinalize]] = {}
    order: dict[ir.Buffer, None] = {}
    for stmt in ir.walk(func.kernel.body):
        if isinstance(stmt, ir.Alloc) and stmt.buffer.is_reducer:
            allocs[stmt.buffer] = stmt
            order[stmt.buffer] = None
        elif isinstance(stmt, ir.ReducerUpdate):
            updates.setdefault(stmt.reducer, []).append(stmt)
            order[stmt.reducer] = None
        elif isinstance(stmt, ir.ReducerFinalize):
            finalizes.setdefault(stmt.reducer, []).append(stmt)
            order[stmt.reducer] = None
    all_finalizes = [f for buffer in order for f in finalizes.get(buffer, ())]
    all_finalizes.sort(key=lambda f: (f.span.line, f.span.col))
    barrier_ids = assign_barrier_ids(all_finalizes, layouts)
    out = []
    for buffer in order:
        fins = tuple(finalizes.get(buffer, ()))
        ups = tuple(updates.get(buffer, ()))
        participants = _participants(buffer, allocs.get(buffer), ups, fins, layouts)
        for update in ups:
            _check_inside(update, layouts.update(update), participants)
        out.append(ReducerSites(buffer, participants, ups, fins,
                                {f: barrier_ids[f] for f in fins}, layouts))
    return out


def _participants(buffer: ir.Buffer, alloc: ir.Alloc | None,
                  updates: tuple[ir.ReducerUpdate, ...],
                  finalizes: tuple[ir.ReducerFinalize, ...],
                  layouts: LayoutMap) -> tuple[int, int]:
    """The finalize's execution domain; without a finalize (a program verify rejects
    with R202, planned anyway for `emit`) the allocation's."""
    if not finalizes:
        if alloc is not None:
            return layouts.participants[alloc]
        return layouts.update(updates[0]).participants
    first = layouts.participants[finalizes[0]]
    for other in finalizes[1:]:
        if layouts.participants[other] != first:
            raise DiagnosticError(error(
                "R300", f"layout conflict: {buffer.name} is finalized by threads "
                f"{_range(layouts.participants[other])} here but by threads "
                f"{_range(first)} at line {finalizes[0].span.line}: a reducer has one "
                f"participant set", other.span,
                no_picture="the conflict is between two finalizes' thread ranges as "
                "wholes, not one element a thread fails to hold"))
    return first


def _check_inside(update: ir.ReducerUpdate, loop: Layout,
                  participants: tuple[int, int]) -> None:
    offset, count = participants
    if loop.offset < offset or loop.offset + loop.count > offset + count:
        raise DiagnosticError(error(
            "R300", f"layout conflict: this update of {update.reducer.name} runs on "
            f"threads {_range(loop.participants)}, outside the participant set "
            f"{_range(participants)} that finalizes it", update.span,
            Note(f"the update runs as {loop.describe()}"),
            no_picture="the conflict is between the update's thread range and the "
            "participant set as wholes, not one element a thread fails to hold"))


def assign_barrier_ids(finalizes: list[ir.ReducerFinalize],
                       layouts: LayoutMap) -> dict[ir.ReducerFinalize, int]:
    """Each finalize its own named barrier, 1..15, in source order. Past 15, a finalize
    reuses the id of an earlier finalize of the same participant set: those threads run
    finalizes one after the other (a finalize is never under divergent control flow,
    R207), so the two never wait on one barrier at the same time. Two different
    participant sets may run concurrently (warp specialization) and never share an id;
    when no id is left for a new set, planning fails."""
    ids: dict[ir.ReducerFinalize, int] = {}
    reuse: dict[tuple[int, int], list[int]] = {}
    for n, finalize in enumerate(finalizes):
        participants = layouts.participants[finalize]
        if n < len(BARRIER_IDS):
            bid = BARRIER_IDS[n]
        elif reuse.get(participants):
            pool = reuse[participants]
            bid = pool.pop(0)
            pool.append(bid)                 # round robin over the set's own ids
        else:
            raise ValueError(
                f"more than {len(BARRIER_IDS)} finalizes and none of the named barriers "
                f"1..15 belongs to threads {_range(participants)} (finalize at line "
                f"{finalize.span.line}): concurrent participant sets cannot share one")
        ids[finalize] = bid
        reuse.setdefault(participants, [])
        if bid not in reuse[participants]:
            reuse[participants].append(bid)
    return ids


# ----------------------------------------------------------------------------- pieces

def site_plans(sites: ReducerSites, guard_replica: int | None) -> tuple[SitePlan, ...]:
    return tuple(SitePlan(u, sites.loop(u), guard_replica) for u in sites.updates)


def finalize_plan(sites: ReducerSites, finalize: ir.ReducerFinalize, collective: Collective,
                  width: int, scale: int, dst_layout: Layout | None) -> FinalizePlan:
    """The barrier count is the participant count, whatever the reduction width (RFC:
    `NamedBarrier<128>` counts arriving threads, not the span of a group)."""
    return FinalizePlan(finalize, collective.chunks, width, scale,
                        sites.barrier_ids[finalize], sites.participants[1], dst_layout,
                        collective.publish)


def _range(participants: tuple[int, int]) -> str:
    offset, count = participants
    return f"{offset}..{offset + count - 1}"
