"""Where a logical element lives in the generated kernel, as C: a fragment element is a
register slot of the executing thread (the slot its layout gives), a local buffer is a
per-thread array, shared and global buffers are flat row-major memory.

A `Frame` says where statements run: the participant set and, inside a loop over a
layout's slots, each loop variable as an index expression over `t` (the thread relative
to the participant offset) and `s` (the slot). Register slots are computed by
substituting those expressions into the fragment's slot expression and simplifying, so
an access that follows the loop's own layout comes out as `x_frag[slot]`.

A register slot that stays unknown after unrolling (it depends on the thread, a serial
loop variable or data) is read through `reducer_get` and written through `reducer_set`
(runtime header), which select over the unrolled slots: indexing the array directly would
move it to local memory, where CUDA 13.0's ptxas miscompiles 16-bit stores (see
docs/compiler-bugs/ptxas-13.0-local-u8-store.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable
from verify_reducer.spec import addressing
from verify_reducer.spec.indexexpr import IndexExpr, Var
from verify_reducer.spec.layout import Layout
from .cuda_exprs import ADD, ATOM, C
from .lower.cells import S
from .lower.copies import LANE          # the element of a run of a vectorized copy

TERM = "$term"

# A logical index: an integer IndexExpr when it is affine in known variables, else the
# C text of the expression (a data-dependent index).
Index = IndexExpr | C


# Variables of loops the renderer unrolls: a slot over these alone is a constant in every
# unrolled copy. The slot loop of a cell loop is unrolled unless its run-time register
# accesses would make the unrolled code too large (codegen.cuda_cells.SELECT_LIMIT).
UNROLLED = frozenset({S, LANE})


@dataclass
class Frame:
    participants: tuple[int, int]
    loop_vars: dict[str, IndexExpr] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    c_names: dict[str, str] = field(default_factory=dict)   # variable → C text
    unrolled: frozenset[str] = UNROLLED

    def inner(self, layout: Layout, loop_vars: dict[str, IndexExpr],
              ranges: dict[str, tuple[int, int]], c_names: dict[str, str],
              unrolled: frozenset[str] | None = None) -> "Frame":
        return Frame(layout.participants, dict(self.loop_vars, **loop_vars),
                     dict(self.ranges, **ranges), dict(self.c_names, **c_names),
                     self.unrolled if unrolled is None else unrolled)


def render_index(ix: IndexExpr, frame: Frame, var_name, ranges=None) -> C:
    """An index expression as C text: loop variables by their C names."""
    names = {v: frame.c_names.get(v) or var_name(v) for v in ix.free_vars()}
    text = ix.to_c(names, ranges or frame.ranges)
    return C(text, ATOM if text.isidentifier() or text.isdigit() else ADD)


@dataclass(frozen=True)
class Place:
    """Where an element lives, as C: `array[index]`, or a register array at a slot known
    only at run time (`static` false), reached through the runtime's select helpers."""
    array: str
    index: C
    static: bool = True

    @property
    def read(self) -> C:
        if self.static:
            return C(f"{self.array}[{self.index.text}]")
        return C(f"reducer_get({self.array}, {self.index.text})")

    def assign(self, value: str) -> str:
        """The statement that stores value here."""
        if self.static:
            return f"{self.array}[{self.index.text}] = {value};"
        return f"reducer_set({self.array}, {self.index.text}, {value});"


def register_place(array: str, layout: Layout, indices: tuple[Index, ...], frame: Frame,
                   var_name: Callable[[str], str]) -> Place:
    """array's element at the slot `layout` gives the executing thread."""
    if all(isinstance(ix, IndexExpr) for ix in indices):
        slot = layout.slot.substitute(dict(zip(layout.index_vars, indices)))
        slot = slot.substitute(frame.loop_vars).simplify(frame.ranges)
        static = set(slot.free_vars()) <= frame.unrolled
        if static and isinstance(slot, Var) and slot.name == S:
            return Place(array, C("slot"))
        return Place(array, render_index(slot, frame, var_name), static)
    texts = {v: (render_index(ix, frame, var_name) if isinstance(ix, IndexExpr) else ix).text
             for v, ix in zip(layout.index_vars, indices)}
    return Place(array, C(layout.slot.to_c(texts)), static=False)


def flat_offset(shape: tuple[int, ...], indices: tuple[Index, ...], frame: Frame,
                var_name) -> C:
    """Row-major flat position of an element of a buffer of shape (the simulator
    computes the same spec.addressing.flat_offset)."""
    if all(isinstance(ix, IndexExpr) for ix in indices):
        return render_index(addressing.flat_offset(shape, indices), frame, var_name,
                            ranges={})
    text = None
    for extent, ix in zip(shape, indices):
        part = ix if isinstance(ix, C) else render_index(ix, frame, var_name, ranges={})
        text = part.text if text is None else f"({text}) * {extent} + {part.at(ADD + 1)}"
    return C(text, ADD)


def swizzled_offset(swizzle, indices: tuple[Index, ...], frame: Frame, var_name) -> C:
    """The element offset of a 2-D shared element in its stage under the plan's swizzle
    (codegen.lower.wgmma.Swizzle): the chunked offset, then the XOR of
    reducer_swizzle (runtime header) in element units."""
    row, col = indices
    if isinstance(row, IndexExpr) and isinstance(col, IndexExpr):
        chunked = render_index(swizzle.chunked(row, col), frame, var_name, ranges={})
    else:
        r, c = (ix if isinstance(ix, C) else render_index(ix, frame, var_name, ranges={})
                for ix in (row, col))
        w = swizzle.chunk_cols
        chunked = C(f"({c.text}) / {w} * {swizzle.rows * w} + ({r.text}) * {w} + "
                    f"({c.text}) % {w}", ADD)
    right, left = swizzle.c_shift()
    return C(f"reducer_swizzle({chunked.text}, {right}, {swizzle.mask}, {left})", ATOM)
