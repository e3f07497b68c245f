"""The text form of a LayoutMap (`verify-reducer emit --what layout`): every fragment,
T.Parallel loop and update outside T.Parallel with its layout, in source order."""
from __future__ import annotations

from verify_reducer.spec import ir

from .layout import LayoutMap


def format_layouts(layouts: LayoutMap, func: ir.PrimFunc) -> str:
    """Every fragment, T.Parallel loop and update outside T.Parallel, one per line in
    source order: `line 12 T.Parallel(8): thread = 8*rep + j, slot = 0, replicate 16 ...`."""
    rows: list[tuple[int, int, str]] = []
    for buffer, layout in layouts.fragments.items():
        rows.append((buffer.span.line, 0, f"line {buffer.span.line} {buffer.name}"
                     f"{list(buffer.shape)}: {layout.describe()}"))
    for stmt, in_loop in _statements(func.kernel.body, False):
        if isinstance(stmt, ir.ParallelFor) and stmt in layouts.loops:
            extents = ", ".join(str(e) for e in stmt.extents)
            rows.append((stmt.span.line, 1, f"line {stmt.span.line} T.Parallel({extents}): "
                         f"{layouts.loops[stmt].describe()}"))
        elif isinstance(stmt, ir.ReducerUpdate) and not in_loop and stmt in layouts.updates:
            rows.append((stmt.span.line, 2, f"line {stmt.span.line} update of "
                         f"{stmt.reducer.name} outside T.Parallel: "
                         f"{layouts.updates[stmt].describe()}"))
    return "\n".join(text for _, _, text in sorted(rows, key=lambda r: (r[0], r[1])))


def _statements(body: ir.Body, in_loop: bool):
    """Every statement with whether it sits inside a T.Parallel, pre-order."""
    for stmt in body:
        yield stmt, in_loop
        for sub in ir.children(stmt):
            yield from _statements(sub, in_loop or isinstance(stmt, ir.ParallelFor))
