"""A diagnostic's counterexample (spec.diagnostics.Counterexample) drawn on the plan
grid it names: R300's thread that does not hold the element beside the element's
holders, R400's iteration missing from a group (and the one the group has) with the
group outlined, R503's contribution in every replica, the partials it entered and the
copy that counted it. Every fact comes from the counterexample and the plan's layout;
nothing is recomputed here."""
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


def counterexample_panels(plan: PhysicalPlan, code: str, cx: Counterexample) -> list[Panel]:
    """The counterexample on its grid (no panel when the plan has no such grid)."""
    found = find_grid(plan, cx.grid)
    if found is None:
        return []
    layout, title, guard = found
    outside = [t for t, _ in cx.threads
               if not layout.offset <= t < layout.offset + layout.count]
    subtitle = f"{code} on {title}"
    if outside:
        subtitle += f" (threads {', '.join(map(str, outside))} lie outside this grid)"
    return [grid_panel(layout, f"{code}: {cx.caption}", guard,
                       counterexample_marks(layout, cx), subtitle)]
