"""Layouts drawn as thread × slot grids (`verify-reducer emit --what svg`), with drawsvg.

One picture per object of a plan: every fragment's layout, every reducer's storage,
every update site's loop layout, and every finalize as its steps (codegen.finalize_svg);
a diagnostic's counterexample is drawn on the grid it names (codegen.counterexample_svg).
A row is a participating thread, a column a register slot; a cell holds one logical
element, coloured by its flat index (the legend gives the scale) and labelled with its
index where the cell is wide enough; an empty cell (a slot the thread does not use) is
grey. Replicas are told apart by a bar at the left of their threads' rows; for an update
site whose canonical guard admits one replica, the other replicas' cells are faded (they
run the loop but do not contribute).

Each grid is a `<g class="layout" data-threads data-slots data-offset>` whose cells are
`<rect class="cell" data-t=THREAD data-s=SLOT data-i=INDEX data-r=REPLICA>`, one per
(thread, slot) (an empty cell has no data-i, data-r), and each picture has a `<g
class="legend">`: tests (and tools) read the pictures as XML. The names are short and
what every cell would repeat is said once per picture (STYLE, the root's font size),
because a grid may have MAX_CELLS cells and the HTML report inlines every picture. A
picture is built from panels stacked top to bottom, so a finalize's steps and a
counterexample reuse the grid. A grid is refused past MAX_CELLS cells: a grid that large
is not readable, and the file would grow with the problem. The output is deterministic
(no ids, no clocks): the same plan gives the same bytes."""
from __future__ import annotations

import colorsys
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from verify_reducer.spec.layout import Layout
from verify_reducer.spec.physical import PhysicalPlan

MAX_CELLS = 1 << 16
CELL_W, CELL_H = 28, 14            # a cell, in px
LEFT, TOP = 64, 40                 # room for thread numbers and the title
BAR = 6                            # the replica bar's width
LEGEND_H = 36
CHAR_W = 6.2                       # a 10 px monospace character, roughly
FONT = 9                           # the labels' font size, set once on the root
# said once per picture instead of on every cell (a grid has up to MAX_CELLS of them);
# inline in the HTML report the rule is the same for every picture
STYLE = ".cell,.step,.word{stroke:#fff}"
FADED = 0.35                       # the fill opacity of a replica the guard silences

# the colour of each counterexample role (spec.diagnostics.ROLES)
ROLE_COLOURS = {"holder": "#1a9850", "present": "#1a9850", "unheld": "#d7191c",
                "stale": "#d7191c", "iteration": "#2c7bb6", "missing": "#d7191c", "duplicate": "#fdae61", "contribution": "#2c7bb6",
                "entered": "#fdae61", "copy": "#d7191c"}


NOTHING_TO_DRAW = ("the plan has nothing to draw: the pictures show fragments, reducers "
                   "(storage, update sites, finalizes) and counterexamples, and this kernel "
                   "has none of them (its loops read and write memory directly; `emit "
                   "--what threads` shows what each thread does)")


class NothingToDraw(ValueError):
    """A plan without one layout to draw: an empty picture would say nothing."""


class PictureTooLarge(ValueError):
    """A layout with more than MAX_CELLS (thread, slot) cells."""


@dataclass(frozen=True)
class Picture:
    name: str                      # a file-name stem: <kind>-<object>
    title: str
    svg: str


@dataclass(frozen=True)
class Panel:
    """A part of a picture: its size, and how to draw it with its top at y."""
    width: float
    height: float
    render: Callable                # (drawsvg module, y) -> drawsvg element


@dataclass
class Marks:
    """What a grid shows beyond the layout: cells and rows in a counterexample role,
    groups of threads outlined, and labels (with data attributes) replacing a cell's
    index."""
    cells: dict[tuple[int, int], str] = field(default_factory=dict)   # (thread, slot)
    rows: dict[int, str] = field(default_factory=dict)                # thread -> role
    groups: list[tuple[int, ...]] = field(default_factory=list)
    labels: dict[tuple[int, int], tuple[str, dict]] = field(default_factory=dict)


# ----------------------------------------------------------------------------- objects

def grid_key(kind: str, name: str, line: int | None = None) -> str:
    """The picture stem of a grid: fragment-x, storage-acc, update-acc-line34 (the
    names a Counterexample's grid and `emit --out DIR/` use)."""
    return f"{kind}-{name}" + (f"-line{line}" if line is not None else "")


def grids(plan: PhysicalPlan) -> list[tuple[str, Layout, str, int | None]]:
    """(picture stem, layout, title, contributing replica or None) of every layout grid
    of the plan, in order."""
    out = [(grid_key("fragment", b.name), layout,
            f"fragment {b.name}{list(b.shape)}: {layout.describe()}", None)
           for b, layout in plan.layouts.fragments.items()]
    for rp in plan.reducers:
        name = rp.reducer.name
        out.append((grid_key("storage", name), rp.storage,
                    f"reducer {name}{list(rp.reducer.shape)} storage ({rp.planner}): "
                    f"{rp.storage.describe()}", None))
        for site in rp.sites:
            line = site.update.span.line
            who = "every replica contributes" if site.guard_replica is None else \
                f"only replica {site.guard_replica} contributes"
            out.append((grid_key("update", name, line), site.loop,
                        f"update of {name} at line {line}: {site.loop.describe()}; {who}",
                        site.guard_replica))
    return out


def plan_pictures(plan: PhysicalPlan, diagnostics=()) -> list[Picture]:
    """Every grid of the plan, every finalize drawn as steps, and the counterexample of
    every diagnostic that carries one (drawn on its grid), one document each."""
    from .finalize_svg import finalize_pictures
    out = [Picture(name, title, stack([grid_panel(layout, title, guard)]))
           for name, layout, title, guard in grids(plan)]
    out += [Picture(name, title, stack(panels))
            for name, title, panels in finalize_pictures(plan)]
    return out + counterexample_pictures(plan, diagnostics)


def counterexample_pictures(plan: PhysicalPlan | None, diagnostics) -> list[Picture]:
    """The counterexample of every diagnostic that carries one, one document each: on
    the plan's grid it names, or on the layouts it carries (plan None: a program
    rejected before any plan exists, whose R300s carry theirs)."""
    from .counterexample_svg import counterexample_panels
    out = []
    for n, d in enumerate(d for d in diagnostics if d.counterexample is not None):
        panels = counterexample_panels(plan, d.code, d.counterexample)
        if panels:
            out.append(Picture(f"{d.code}-{n}-{_stem(d.counterexample.grid)}",
                               f"{d.code}: {d.counterexample.caption}", stack(panels)))
    return out


def _stem(grid: tuple) -> str:
    return re.sub(r"[^\w.-]+", "_", grid_key(*grid))


def plan_svg(plan: PhysicalPlan | None, diagnostics=()) -> str:
    """Every picture of plan_pictures in one document, one below the other (plan None:
    the counterexamples that carry their layouts)."""
    from .counterexample_svg import counterexample_panels
    from .finalize_svg import finalize_pictures
    panels = []
    if plan is not None:
        panels = [grid_panel(layout, title, guard)
                  for _, layout, title, guard in grids(plan)]
        for _, _, finalize in finalize_pictures(plan):
            panels += finalize
    for d in diagnostics:
        if d.counterexample is not None:
            panels += counterexample_panels(plan, d.code, d.counterexample)
    if not panels:
        raise NothingToDraw(NOTHING_TO_DRAW)
    return stack(panels)


def layout_svg(layout: Layout, title: str, guard_replica: int | None = None) -> str:
    """The layout as an SVG document (guard_replica: the one replica that contributes;
    None: all of them)."""
    return stack([grid_panel(layout, title, guard_replica)])


def stacked_svg(items: list[tuple[Layout, str, int | None]]) -> str:
    """Several layouts (layout, title, guard replica) one below the other in one SVG."""
    return stack([grid_panel(*item) for item in items])


def stack(panels: list[Panel]) -> str:
    """Panels one below the other, as one SVG document. Sizes are whole pixels, and
    what every cell would repeat is said once: the 9 px font on the root, the white
    cell borders in STYLE."""
    import drawsvg as draw
    width = math.ceil(max(p.width for p in panels))
    height = math.ceil(sum(p.height for p in panels))
    d = draw.Drawing(width, height, font_family="monospace", font_size=FONT)
    d.append_css(STYLE)
    d.append(draw.Rectangle(0, 0, width, height, fill="white"))
    y = 0
    for panel in panels:
        d.append(panel.render(draw, y))
        y += math.ceil(panel.height)
    return d.as_svg()


# ----------------------------------------------------------------------------- one grid

def check_size(what: str, rows: int, columns: int) -> None:
    if rows * columns > MAX_CELLS:
        raise PictureTooLarge(f"{what}: {rows} x {columns} = {rows * columns} cells, "
                              f"over the {MAX_CELLS} a picture draws")


def grid_panel(layout: Layout, title: str, guard_replica: int | None = None,
               marks: Marks | None = None, subtitle: str | None = None,
               rows: tuple[int, int] | None = None) -> Panel:
    """One layout's grid as a panel. rows: the (first thread, count) drawn, a range
    holding the layout's participants (default: exactly them); the rows of other
    threads are empty cells, so that two layouts on different threads can be drawn on
    the same rows."""
    rows = rows or (layout.offset, layout.count)
    assert rows[0] <= layout.offset and \
        layout.offset + layout.count <= rows[0] + rows[1], (rows, layout)
    threads, slots = rows[1], layout.slots_per_thread
    check_size(f"{threads} threads x {slots} slots", threads, slots)
    marks = marks or Marks()
    cell_w = max([CELL_W] + [int(len(text) * 5.6) + 6 for text, _ in marks.labels.values()])
    cell_w = min(cell_w, 160)
    legend = LEGEND_H + (14 if marks.groups or marks.rows or marks.cells else 0)
    width = max(LEFT + slots * cell_w + 40, 8 + CHAR_W * 1.1 * len(title),
                8 + CHAR_W * len(subtitle or ""), LEFT + 16 * 12 + 260)
    height = TOP + threads * CELL_H + legend + 24
    return Panel(width, height, lambda draw, y: _grid(draw, layout, title, guard_replica,
                                                      y, marks, cell_w, subtitle, rows))


def _grid(draw, layout: Layout, title: str, guard_replica: int | None, y0: float,
          marks: Marks, cell_w: int, subtitle: str | None, rows: tuple[int, int]):
    first, threads = rows
    slots = layout.slots_per_thread
    held = np.full((threads, slots, 2), -1, dtype=np.int64)   # (flat, replica) per cell
    held[layout.offset - first:layout.offset - first + layout.count] = cells_of(layout)
    g = draw.Group(class_="layout", data_threads=threads, data_slots=slots,
                   data_offset=first)
    g.append(draw.Text(title, 11, 4, y0 + 16))
    g.append(draw.Text(subtitle or f"threads {first}..{first + threads - 1}"
                       f" (rows) x slots 0..{slots - 1} (columns), {layout.replicate} "
                       f"replica(s)", 10, 4, y0 + 30))
    top = max(layout.size - 1, 1)
    for t in range(threads):
        y = y0 + TOP + t * CELL_H
        thread = first + t
        if t % max(1, threads // 32) == 0 or thread in marks.rows:
            g.append(draw.Text(str(thread), None, 4, y + CELL_H - 3))
        for s in range(slots):
            flat, rep = held[t, s]
            x = LEFT + s * cell_w
            attrs = dict(class_="cell", data_t=thread, data_s=s)
            label, extra = marks.labels.get((thread, s), (None, {}))
            if flat < 0:
                g.append(draw.Rectangle(x, y, cell_w, CELL_H, fill="#ddd", **attrs,
                                        **extra))
                continue
            index = np.unravel_index(flat, layout.shape)
            text = ",".join(str(int(i)) for i in index)
            faded = {"fill_opacity": FADED} \
                if guard_replica is not None and rep != guard_replica else {}
            g.append(draw.Rectangle(x, y, cell_w, CELL_H, fill=colour(flat / top),
                                    data_i=text, data_r=rep, **faded, **attrs,
                                    **extra))
            label = text if label is None else label
            if len(label) * 5.6 <= cell_w:
                g.append(draw.Text(label, None, x + 2, y + CELL_H - 3))
    _replica_bars(draw, g, held, layout.replicate, y0)
    _overlay(draw, g, layout, marks, y0, cell_w, rows)
    g.append(_legend(draw, layout, y0 + TOP + threads * CELL_H + 12, guard_replica, marks))
    return g


def _overlay(draw, g, layout: Layout, marks: Marks, y0: float, cell_w: int,
             rows: tuple[int, int]) -> None:
    """Groups (a bar right of the grid on each member's row), rows and cells in a role
    (a thick outline in the role's colour)."""
    right = LEFT + layout.slots_per_thread * cell_w + 6
    first = rows[0]
    inside = range(first, first + rows[1])
    for n, members in enumerate(marks.groups):
        for thread in members:
            if thread in inside:
                y = y0 + TOP + (thread - first) * CELL_H
                g.append(draw.Rectangle(right + 6 * (n % 3), y, 4, CELL_H, fill="#4d4d4d",
                                        class_="group", data_group=n, data_t=thread))
    for thread, role in sorted(marks.rows.items()):
        if thread in inside:
            y = y0 + TOP + (thread - first) * CELL_H
            g.append(draw.Rectangle(LEFT - 1, y, layout.slots_per_thread * cell_w + 2,
                                    CELL_H, fill="none", stroke=ROLE_COLOURS[role],
                                    stroke_width=2, stroke_dasharray="4,2",
                                    class_="mark-row", data_role=role,
                                    data_t=thread))
    for (thread, slot), role in sorted(marks.cells.items()):
        if thread in inside:
            y = y0 + TOP + (thread - first) * CELL_H
            g.append(draw.Rectangle(LEFT + slot * cell_w + 1, y + 1, cell_w - 2,
                                    CELL_H - 2, fill="none", stroke=ROLE_COLOURS[role],
                                    stroke_width=2.5, class_="mark", data_role=role,
                                    data_t=thread, data_s=slot))


def cells_of(layout: Layout) -> np.ndarray:
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


def _replica_bars(draw, g, held: np.ndarray, replicate: int, y0: float) -> None:
    """The bar left of the rows: one rect per run of consecutive rows of one replica
    (a bar is not a cell, so a run is drawn once)."""
    rows = [_replica_of_row(row) for row in held]
    start = 0
    for t in range(1, len(rows) + 1):
        if t < len(rows) and rows[t] == rows[start]:
            continue
        rep = rows[start]
        if rep is not None:
            g.append(draw.Rectangle(LEFT - BAR - 2, y0 + TOP + start * CELL_H, BAR,
                                    (t - start) * CELL_H,
                                    fill=colour(rep / max(replicate - 1, 1), 0.4),
                                    class_="replica", data_r=rep))
        start = t


def _legend(draw, layout: Layout, y: float, guard_replica: int | None, marks: Marks):
    group = draw.Group(class_="legend")
    steps = 16
    for k in range(steps):
        group.append(draw.Rectangle(LEFT + k * 12, y, 12, 10, fill=colour(k / (steps - 1))))
    group.append(draw.Text(f"flat index 0 .. {layout.size - 1} of shape "
                           f"{list(layout.shape)}", 9, LEFT + steps * 12 + 6, y + 9))
    note = "grey: slot unused; left bar: the row's replica"
    if guard_replica is not None:
        note += f"; faded: replicas other than {guard_replica} (they do not contribute)"
    group.append(draw.Text(note, 9, LEFT, y + 24))
    roles = sorted(set(marks.cells.values()) | set(marks.rows.values()))
    x = LEFT
    for role in roles:
        group.append(draw.Rectangle(x, y + 30, 10, 10, fill="none",
                                    stroke=ROLE_COLOURS[role], stroke_width=2.5))
        group.append(draw.Text(role, 9, x + 14, y + 39))
        x += 24 + CHAR_W * len(role)
    if marks.groups:
        group.append(draw.Rectangle(x, y + 30, 4, 10, fill="#4d4d4d"))
        group.append(draw.Text("bar at the right: the group's threads", 9, x + 8, y + 39))
    return group


def colour(x: float, lightness: float = 0.55) -> str:
    r, g, b = colorsys.hls_to_rgb(0.75 * x, lightness, 0.65)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"
