"""Layouts drawn as thread × slot grids (`verify-reducer emit --what svg`), with drawsvg.

One picture per object of a plan: every fragment's layout, every reducer's storage, and
every update site's loop layout. A row is a participating thread, a column a register
slot; a cell holds one logical element, coloured by its flat index (the legend gives the
scale) and labelled with its index where the cell is wide enough; an empty cell (a slot
the thread does not use) is grey. Replicas are told apart by a bar at the left of their
threads' rows; for an update site whose canonical guard admits one replica, the other
replicas' cells are hatched (they run the loop but do not contribute).

Each cell is a `<rect class="cell" data-thread=T data-slot=S data-index=...>`, the legend a
`<g class="legend">`: tests (and tools) read the pictures as XML. A picture is refused
past MAX_CELLS cells: a grid that large is not readable, and the file would grow with the
problem."""
from __future__ import annotations

import colorsys
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import PhysicalPlan

MAX_CELLS = 1 << 16
CELL_W, CELL_H = 28, 14            # a cell, in px
LEFT, TOP = 64, 40                 # room for thread numbers and the title
BAR = 6                            # the replica bar's width
LEGEND_H = 36


class PictureTooLarge(ValueError):
    """A layout with more than MAX_CELLS (thread, slot) cells."""


@dataclass(frozen=True)
class Picture:
    name: str                      # a file-name stem: <kind>-<object>
    title: str
    svg: str


def plan_pictures(plan: PhysicalPlan) -> list[Picture]:
    """Every fragment, reducer storage and update-site loop of the plan, drawn, one
    document each."""
    return [Picture(name, title, layout_svg(layout, title, guard))
            for name, layout, title, guard in _objects(plan)]


def _objects(plan: PhysicalPlan) -> list[tuple[str, Layout, str, int | None]]:
    """(file-name stem, layout, title, contributing replica or None) of every object
    drawn, in order."""
    out = [(f"fragment-{b.name}", layout,
            f"fragment {b.name}{list(b.shape)}: {layout.describe()}", None)
           for b, layout in plan.layouts.fragments.items()]
    for rp in plan.reducers:
        name = rp.reducer.name
        out.append((f"storage-{name}", rp.storage,
                    f"reducer {name}{list(rp.reducer.shape)} storage ({rp.planner}): "
                    f"{rp.storage.describe()}", None))
        for site in rp.sites:
            line = site.update.span.line
            who = "every replica contributes" if site.guard_replica is None else \
                f"only replica {site.guard_replica} contributes"
            out.append((f"update-{name}-line{line}", site.loop,
                        f"update of {name} at line {line}: {site.loop.describe()}; {who}",
                        site.guard_replica))
    return out


def layout_svg(layout: Layout, title: str, guard_replica: int | None = None) -> str:
    """The layout as an SVG document (guard_replica: the one replica that contributes;
    None: all of them)."""
    return stacked_svg([(layout, title, guard_replica)])


def stacked_svg(items: list[tuple[Layout, str, int | None]]) -> str:
    """Several layouts (layout, title, guard replica) one below the other in one SVG."""
    import drawsvg as draw
    sizes = [_size(layout, title) for layout, title, _ in items]
    d = draw.Drawing(max(w for w, _ in sizes), sum(h for _, h in sizes),
                     font_family="monospace")
    y = 0
    for (layout, title, guard), (_, height) in zip(items, sizes):
        d.append(_grid(draw, layout, title, guard, y))
        y += height
    return d.as_svg()


def plan_svg(plan: PhysicalPlan) -> str:
    """Every picture of plan_pictures in one document, one below the other."""
    return stacked_svg([item[1:] for item in _objects(plan)])


def _size(layout: Layout, title: str) -> tuple[int, int]:
    """(width, height) of one layout's picture: the grid, or the title if wider."""
    threads, slots = layout.count, layout.slots_per_thread
    if threads * slots > MAX_CELLS:
        raise PictureTooLarge(f"{threads} threads x {slots} slots = {threads * slots} "
                              f"cells, over the {MAX_CELLS} a picture draws")
    width = max(LEFT + slots * CELL_W + 16, 8 + 7 * len(title), LEFT + 16 * 12 + 260)
    return width, TOP + threads * CELL_H + LEGEND_H + 24


def _grid(draw, layout: Layout, title: str, guard_replica: int | None, y0: int):
    """One layout's picture as a group, its top at y0."""
    threads, slots = layout.count, layout.slots_per_thread
    held = _cells(layout)                          # [thread, slot] -> (flat, replica)
    g = draw.Group(class_="layout")
    g.append(draw.Text(title, 11, 4, y0 + 16))
    g.append(draw.Text(f"threads {layout.offset}..{layout.offset + threads - 1} "
                       f"(rows) x slots 0..{slots - 1} (columns), {layout.replicate} "
                       f"replica(s)", 10, 4, y0 + 30))
    top = max(layout.size - 1, 1)
    for t in range(threads):
        y = y0 + TOP + t * CELL_H
        if t % max(1, threads // 32) == 0:
            g.append(draw.Text(str(layout.offset + t), 9, 4, y + CELL_H - 3))
        for s in range(slots):
            flat, rep = held[t, s]
            x = LEFT + s * CELL_W
            attrs = dict(class_="cell", data_thread=layout.offset + t, data_slot=s)
            if flat < 0:
                g.append(draw.Rectangle(x, y, CELL_W, CELL_H, fill="#dddddd",
                                        stroke="white", data_index="", **attrs))
                continue
            index = np.unravel_index(flat, layout.shape)
            label = ",".join(str(int(i)) for i in index)
            silent = guard_replica is not None and rep != guard_replica
            g.append(draw.Rectangle(x, y, CELL_W, CELL_H, fill=_colour(flat / top),
                                    stroke="white", fill_opacity=0.35 if silent else 1,
                                    data_index=label, data_replica=rep, **attrs))
            if len(label) * 6 <= CELL_W:
                g.append(draw.Text(label, 9, x + 2, y + CELL_H - 3))
        rep = _replica_of_row(held[t])
        if rep is not None:
            g.append(draw.Rectangle(LEFT - BAR - 2, y, BAR, CELL_H,
                                    fill=_colour(rep / max(layout.replicate - 1, 1), 0.4),
                                    class_="replica", data_replica=rep))
    g.append(_legend(draw, layout, y0 + TOP + threads * CELL_H + 12, guard_replica))
    return g


def _cells(layout: Layout) -> np.ndarray:
    """[count, slots, 2]: per (thread, slot) the flat logical index it holds and the
    replica, (-1, -1) where it holds nothing."""
    out = np.full((layout.count, layout.slots_per_thread, 2), -1, dtype=np.int64)
    threads = layout.threads_of()                  # [R, N]
    slots = layout.slots_of()                      # [N]
    flat = np.arange(layout.size)
    for r in range(layout.replicate):
        out[threads[r], slots, 0] = flat
        out[threads[r], slots, 1] = r
    return out


def _replica_of_row(row: np.ndarray) -> int | None:
    reps = {int(r) for r in row[:, 1] if r >= 0}
    return reps.pop() if len(reps) == 1 else None


def _legend(draw, layout: Layout, y: int, guard_replica: int | None):
    group = draw.Group(class_="legend")
    steps = 16
    for k in range(steps):
        group.append(draw.Rectangle(LEFT + k * 12, y, 12, 10, fill=_colour(k / (steps - 1))))
    group.append(draw.Text(f"flat index 0 .. {layout.size - 1} of shape "
                           f"{list(layout.shape)}", 9, LEFT + steps * 12 + 6, y + 9))
    note = "grey: slot unused; left bar: the row's replica"
    if guard_replica is not None:
        note += f"; faded: replicas other than {guard_replica} (they do not contribute)"
    group.append(draw.Text(note, 9, LEFT, y + 24))
    return group


def _colour(x: float, lightness: float = 0.55) -> str:
    r, g, b = colorsys.hls_to_rgb(0.75 * x, lightness, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
