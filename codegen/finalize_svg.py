"""A finalize drawn as its steps: the partials it starts from (the storage grid), then per
chunk one column per step of the plan's collective (spec.physical: shuffles, workspace
stores, reductions and loads, named barriers) with a row per participant, then the
shared workspace (which thread writes each word, which threads read it), then the
publication: the destination's layout with the words each holder combines.

For the segmented all-reduce (codegen.segmented) that is: shuffles within a warp over
the lanes sharing an output (a cell's colour is its coset: the lanes combined so far),
one store per coset leader into a (lane groups x outputs) workspace, one barrier, and
each destination holder combining its output's words. Every address comes from the
plan through spec.step_cells, the functions the simulator executes; nothing about the
collective is modelled again here."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.physical import Barrier, FinalizePlan, FromWorkspace, \
    PhysicalPlan, ReduceWorkspace, ReducerPlan, Shuffle, ToWorkspace
from verify_reducer.spec.step_cells import active, load_words, publish_words, \
    reduce_words, store_words

from .plan_svg import CELL_H, CHAR_W, LEFT, TOP, Marks, Panel, cells_of, check_size, \
    colour, grid_key, grid_panel

STEP_W = 72                        # a step's column, in px
WORD_W = 40                        # a workspace word
MAX_LABEL = 6                      # words a publication label lists before "..."


def finalize_pictures(plan: PhysicalPlan) -> list[tuple[str, str, list[Panel]]]:
    """(picture stem, title, panels) of every finalize of every reducer."""
    out = []
    for rp in plan.reducers:
        for fp in rp.finalizes:
            line = fp.finalize.span.line
            title = (f"finalize of {rp.reducer.name} at line {line} ({rp.planner}, "
                     f"width {fp.width}): {describe(fp)}")
            out.append((grid_key("finalize", rp.reducer.name, line), title,
                        finalize_panels(plan, rp, fp, title)))
    return out


def describe(fp: FinalizePlan) -> str:
    """The collective in a few words: its steps by kind, and the publication."""
    kinds = []
    for chunk in fp.chunks:
        for step in chunk.steps:
            name = _header(step)
            if not kinds or kinds[-1] != name:
                kinds.append(name)
    text = ", ".join(kinds) or "nothing to combine"
    if len(fp.chunks) > 1:
        text = f"{len(fp.chunks)} chunks of: {text}"
    return text + ("; then published from the workspace" if fp.publish else "")


def finalize_panels(plan: PhysicalPlan, rp: ReducerPlan, fp: FinalizePlan,
                    title: str) -> list[Panel]:
    offset, count = rp.participants
    panels = [grid_panel(rp.storage, title,
                         subtitle=f"the partials before the steps: threads {offset}.."
                                  f"{offset + count - 1} (rows) x slots (columns)")]
    for number, chunk in enumerate(fp.chunks):
        if chunk.steps:
            panels.append(_steps_panel(rp, fp, number))
    if rp.workspace_words:
        panels.append(_workspace_panel(plan, rp, fp))
    panels.append(_publication_panel(plan, rp, fp))
    return panels


# ----------------------------------------------------------------------------- steps

def _header(step) -> str:
    if isinstance(step, Shuffle):
        return f"shfl ^{step.mask}"
    if isinstance(step, Barrier):
        return f"bar {step.id}/{step.count}"
    if isinstance(step, ToWorkspace):
        return "store W"
    if isinstance(step, ReduceWorkspace):
        return f"reduce {step.terms}"
    return "load W" if step.terms == 1 else f"load {step.terms}"


def _words_text(words) -> str:
    words = [int(w) for w in np.asarray(words).reshape(-1)]
    if len(words) == 1:
        return f"W[{words[0]}]"
    if words == list(range(words[0], words[0] + len(words))):
        return f"W[{words[0]}..{words[-1]}]"
    return f"W[{words[0]},..]"


def step_cells(step, count: int, slots: np.ndarray) -> dict[int, tuple[str, dict]]:
    """Per active relative thread: the label and data attributes of its cell in the
    step's column (the partner it shuffles with, the words it writes or reads)."""
    rel = active(step.guards, count)
    out = {}
    if isinstance(step, Shuffle):
        for t in rel:
            out[int(t)] = (f"<->{int(t) ^ step.mask}", {"data_partner": int(t) ^ step.mask})
    elif isinstance(step, Barrier):
        out = {int(t): ("bar", {"data_barrier": step.id}) for t in rel}
    elif isinstance(step, ToWorkspace):
        words = store_words(step, rel, slots)
        for n, t in enumerate(rel):
            out[int(t)] = (_words_text(words[n]), {"data_writes": _list(words[n])})
    elif isinstance(step, ReduceWorkspace):
        src, dst = reduce_words(step, rel)
        for n, t in enumerate(rel):
            out[int(t)] = (f"{_words_text(dst[n])}=+", {"data_writes": int(dst[n]),
                                                        "data_reads": _list(src[n])})
    elif isinstance(step, FromWorkspace):
        words = load_words(step, rel, slots)
        for n, t in enumerate(rel):
            out[int(t)] = (_words_text(words[n]), {"data_reads": _list(words[n])})
    return out


def _list(words) -> str:
    return " ".join(str(int(w)) for w in np.asarray(words).reshape(-1))


def _steps_panel(rp: ReducerPlan, fp: FinalizePlan, number: int) -> Panel:
    chunk = fp.chunks[number]
    offset, count = rp.participants
    steps = chunk.steps
    check_size(f"{count} threads x {len(steps)} steps", count, len(steps))
    slots = np.arange(chunk.first, chunk.first + chunk.count, dtype=np.int64)
    caption = (f"chunk {number}: slots {chunk.first}..{chunk.first + chunk.count - 1}, "
               f"{len(steps)} steps (columns) run by threads {offset}..{offset + count - 1}"
               f" (rows)")
    width = max(LEFT + len(steps) * STEP_W + 20, 8 + CHAR_W * len(caption))
    height = TOP + 16 + count * CELL_H + 50

    def render(draw, y0):
        g = draw.Group(class_="steps", data_chunk=number)
        g.append(draw.Text(caption, 10, 4, y0 + 16))
        top = y0 + TOP + 16
        # a shuffle's cell is coloured by its coset: the lanes combined so far
        coset = np.arange(count, dtype=np.int64)
        for column, step in enumerate(steps):
            x = LEFT + column * STEP_W
            g.append(draw.Text(_header(step), None, x + 2, top - 6))
            if isinstance(step, Shuffle):
                coset = coset & ~step.mask
            cells = step_cells(step, count, slots)
            # what every cell of the column shares is said once, on the column
            col = draw.Group(class_="step-column", data_step=column,
                             data_kind=type(step).__name__, font_size=8)
            for t in range(count):
                y = top + t * CELL_H
                if t not in cells:
                    col.append(draw.Rectangle(x, y, STEP_W - 2, CELL_H, fill="#eee",
                                              class_="step", data_t=offset + t,
                                              data_active=0))
                    continue
                label, extra = cells[t]
                fill = colour(int(coset[t]) / max(count - 1, 1), 0.7) \
                    if isinstance(step, Shuffle) else _step_fill(step)
                col.append(draw.Rectangle(x, y, STEP_W - 2, CELL_H, fill=fill, class_="step",
                                          data_t=offset + t, **extra))
                col.append(draw.Text(label, None, x + 2, y + CELL_H - 3))
            g.append(col)
        for t in range(0, count, max(1, count // 32)):
            g.append(draw.Text(str(offset + t), None, 4, top + t * CELL_H + CELL_H - 3))
        legend = draw.Group(class_="legend")
        legend.append(draw.Text(
            "shfl ^m: P += shfl_xor(P, m), colour = the lanes combined so far; store W: "
            "W[word] = P; reduce / load k: combine k words; bar id/count: named barrier; "
            "grey: the thread does not take part", 9, 4, top + count * CELL_H + 16))
        g.append(legend)
        return g
    return Panel(width, height, render)


def _step_fill(step) -> str:
    if isinstance(step, Barrier):
        return "#999999"
    if isinstance(step, ToWorkspace):
        return "#f4a582"
    return "#92c5de"                               # reads of the workspace


# ----------------------------------------------------------------------------- workspace

def workspace_use(plan: PhysicalPlan, rp: ReducerPlan, fp: FinalizePlan
                  ) -> tuple[dict, dict]:
    """{word: writer threads}, {word: reader threads} (absolute) over every chunk's
    steps and the publication."""
    offset, count = rp.participants
    writers: dict[int, set[int]] = {}
    readers: dict[int, set[int]] = {}
    for chunk in fp.chunks:
        slots = np.arange(chunk.first, chunk.first + chunk.count, dtype=np.int64)
        for step in chunk.steps:
            for t, (_, attrs) in step_cells(step, count, slots).items():
                for key, into in (("data_writes", writers), ("data_reads", readers)):
                    for w in str(attrs.get(key, "")).split():
                        into.setdefault(int(w), set()).add(offset + t)
    if fp.publish is not None:
        layout, _ = destination(rp, fp, plan.layouts.fragments)
        for (thread, _), words in _published(rp, fp, layout).items():
            for w in words:
                readers.setdefault(int(w), set()).add(thread)
    return writers, readers


def _workspace_panel(plan: PhysicalPlan, rp: ReducerPlan, fp: FinalizePlan) -> Panel:
    words = rp.workspace_words
    per_row = max(1, min(32, max(c.count for c in fp.chunks)))
    rows = -(-words // per_row)
    check_size(f"{words} workspace words", rows, per_row)
    writers, readers = workspace_use(plan, rp, fp)
    offset, count = rp.participants
    caption = (f"workspace {rp.reducer.name}_workspace[{words}]: {per_row} words a row; "
               f"a word's label is the thread that writes it")
    width = max(LEFT + per_row * WORD_W + 20, 8 + CHAR_W * len(caption))
    height = TOP + rows * CELL_H + 40

    def render(draw, y0):
        g = draw.Group(class_="workspace", data_words=words)
        g.append(draw.Text(caption, 10, 4, y0 + 16))
        for w in range(words):
            row, col = divmod(w, per_row)
            x, y = LEFT + col * WORD_W, y0 + TOP + row * CELL_H
            who = sorted(writers.get(w, ()))
            fill = colour((who[0] - offset) / max(count - 1, 1), 0.75) if who else "#dddddd"
            g.append(draw.Rectangle(x, y, WORD_W - 2, CELL_H, fill=fill, class_="word", data_word=w,
                                    data_writers=" ".join(map(str, who)),
                                    data_readers=" ".join(map(str,
                                                              sorted(readers.get(w, ()))))))
            if who:
                g.append(draw.Text(f"t{who[0]}", 8, x + 2, y + CELL_H - 3))
            if col == 0:
                g.append(draw.Text(f"W[{w}]", None, 4, y + CELL_H - 3))
        legend = draw.Group(class_="legend")
        legend.append(draw.Text("colour: the writing thread; grey: a word this finalize "
                                "leaves unused (alignment padding)", 9, 4,
                                y0 + TOP + rows * CELL_H + 16))
        g.append(legend)
        return g
    return Panel(width, height, render)


# ----------------------------------------------------------------------------- publication

def destination(rp: ReducerPlan, fp: FinalizePlan, fragments) -> tuple[object, int | None]:
    """(the layout the result is delivered in, the one replica that writes or None):
    in place the storage, every copy; a fragment its layout; a shared or global buffer
    the storage's replica 0 (as the simulator and the renderer deliver it)."""
    dst = fp.finalize.dst
    if dst is None:
        return rp.storage, None
    if dst.scope == "fragment":
        layout = fp.dst_layout or (fragments or {}).get(dst)
        return (layout, None) if layout is not None else (rp.storage, 0)
    return rp.storage, 0


def _published(rp: ReducerPlan, fp: FinalizePlan, layout) -> dict:
    """{(absolute thread, slot): the words its holder combines} for every cell of the
    destination layout."""
    held = cells_of(layout)
    threads, slots = np.nonzero(held[:, :, 0] >= 0)
    outputs = held[threads, slots, 0]
    words = publish_words(fp.publish, rp.reducer.shape, outputs)
    return {(int(t) + layout.offset, int(s)): words[n]
            for n, (t, s) in enumerate(zip(threads, slots))}


def _publication_panel(plan: PhysicalPlan, rp: ReducerPlan, fp: FinalizePlan) -> Panel:
    layout, writer = destination(rp, fp, plan.layouts.fragments)
    dst = fp.finalize.dst
    into = "in place (every copy)" if dst is None else \
        f"{dst.name} ({dst.scope}" + (", written by replica 0)" if writer == 0 else ")")
    marks = Marks()
    if fp.publish is not None:
        for cell, words in _published(rp, fp, layout).items():
            text = "+".join(f"W[{int(w)}]" for w in words[:MAX_LABEL])
            if len(words) > MAX_LABEL:
                text += f"+..({len(words)})"
            marks.labels[cell] = (text, {"data_words": _list(words)})
        how = "each holder combines the workspace words in its cell"
    else:
        how = "each holder keeps its own combined partial"
    title = f"publication of {rp.reducer.name} into {into}: {how}"
    return grid_panel(layout, title, writer, marks,
                      f"the destination's layout: {layout.describe()}")
