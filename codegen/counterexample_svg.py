"""A diagnostic's counterexample (spec.diagnostics.Counterexample) drawn on the plan
grid it names: R300's thread that does not hold the element beside the element's
holders, R400's iteration missing from a group (and the one the group has) with the
group outlined, R503's contribution in every replica, the partials it entered and the
copy that counted it; an R300 of layout inference (found before any plan exists) on
the layouts it carries: the fragment as placed with the element's holders, and the
loop's demand with the iteration, both marking the thread in question. Every fact
comes from the counterexample and its layouts; nothing is recomputed here."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.diagnostics import Counterexample
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import PhysicalPlan

from .plan_svg import Marks, Panel, grid_key, grid_panel, grids


def find_grid(plan: PhysicalPlan, grid: tuple) -> tuple[Layout, str, int | None] | None:
    """The (layout, title, guard replica) the counterexample's grid names in this plan;
    None when the plan has no such grid (another plan's counterexample)."""
    key = grid_key(*grid)
    return next(((layout, title, guard) for name, layout, title, guard in grids(plan)
                 if name == key), None)


def counterexample_marks(layout: Layout, cx: Counterexample) -> Marks:
    """Every cell of each element (all its replicas) in the element's role, each thread's
    row in its role, each group outlined."""
    marks = Marks(rows={t: role for t, role in cx.threads}, groups=list(cx.groups))
    for index, role in cx.elements:
        if len(index) != len(layout.shape) or \
                any(not 0 <= i < e for i, e in zip(index, layout.shape)):
            continue
        indices = tuple(np.array([i], dtype=np.int64) for i in index)
        threads = layout.threads_of(indices, absolute=True)[:, 0]
        slot = int(layout.slots_of(indices)[0])
        for thread in threads:
            marks.cells[(int(thread), slot)] = role
    return marks


def counterexample_panels(plan: PhysicalPlan | None, code: str,
                          cx: Counterexample) -> list[Panel]:
    """The counterexample on its grid (no panel when the plan has no such grid), or, when
    it carries its own layouts (an R300 of layout inference, before any plan exists),
    on those: every view on the same rows of threads, so the thread in question has a
    row in each."""
    if cx.layout is not None:
        return carried_panels(code, cx)
    if plan is None:
        return []
    panels = []
    for view in cx.views():
        found = find_grid(plan, view.grid)
        if found is None:
            continue
        layout, title, guard = found
        outside = [t for t, _ in view.threads
                   if not layout.offset <= t < layout.offset + layout.count]
        subtitle = f"{code} on {title}"
        if outside:
            subtitle += f" (threads {', '.join(map(str, outside))} lie outside this grid)"
        panels.append(grid_panel(layout, f"{code}: {view.caption}", guard,
                                 counterexample_marks(layout, view), subtitle))
    return panels


def carried_panels(code: str, cx: Counterexample) -> list[Panel]:
    """A counterexample whose views carry their layouts, drawn over the threads of all
    of them."""
    views = [v for v in cx.views() if v.layout is not None]
    first = min(v.layout.offset for v in views)
    end = max(v.layout.offset + v.layout.count for v in views)
    return [grid_panel(v.layout, f"{code}: {v.caption}", None,
                       counterexample_marks(v.layout, v),
                       f"on {grid_title(v)}: {v.layout.describe()}", (first, end - first))
            for v in views]


def grid_title(cx: Counterexample) -> str:
    """The title of a grid the counterexample carries: `fragment x_frag[3, 24] as
    placed`, `T.Parallel(2, 5) at line 26`, a refused candidate's storage."""
    kind, name, *line = cx.grid
    shape = f"{list(cx.layout.shape)}" if cx.layout is not None else ""
    if kind == "loop":
        return f"{name} at line {line[0]}"
    if kind == "storage":       # carried: a refused fast-plan candidate's storage
        return f"the refused candidate's storage of {name}{shape}"
    return f"{kind} {name}{shape}" + (" as placed" if kind == "fragment" else "")
