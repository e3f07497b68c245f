"""The loop over the executing thread's cells of a layout, printed: the frame every placed
statement renders in. What the loop is — each (thread, slot)'s iteration and replica from
the layout's inverse (digit formulas or constant tables), the guard on unused cells, and
whether the slot loop is unrolled — is codegen.lower.cells.CellLoop, decided there; this
module prints it. A mixin of codegen.cuda_stmts.KernelBody, with the C blocks the cells
open.

The one thing measured here is the run-time register selects the printed body makes per
slot (`select_count`): the statement printers decide those accesses as they render
(codegen.cuda_access), and codegen.lower.cells decides from their count whether the slot
loop is rolled (codegen.cuda_stmts renders the loop again when it is)."""
from __future__ import annotations

import re
from contextlib import contextmanager

from verify_reducer.spec.layout import Layout

from .cuda_access import LANE, Frame, render_index
from .lower import cells as lowering
from .lower.cells import FLAT, REP, S, T, CellLoop

SELECT = re.compile(r"\breducer_(?:get|set)\((\w+),")


def select_count(lines: list[str], slots_of: dict[str, int]) -> int:
    """The run-time register selects in lines: each reducer_get/reducer_set of an array
    selects over all its slots."""
    return sum(slots_of.get(m.group(1), 1) for line in lines for m in SELECT.finditer(line))


def table_literal(values: tuple[int, ...]) -> str:
    """A C initializer list, 16 values a line."""
    rows = [", ".join(str(v) for v in values[i:i + 16]) for i in range(0, len(values), 16)]
    return "{\n    " + ",\n    ".join(rows) + "}"


def table_type(values: tuple[int, ...]) -> str:
    return "short" if max(values, default=0) < 2 ** 15 else "int"


class CellLoops:
    """Slot loops and C blocks for codegen.cuda_stmts.KernelBody (its out, names, var,
    tables, declared and register_slots: the length of every register array)."""

    # the run-time register selects of one slot of the last cell loop's body
    last_selects = 0

    @contextmanager
    def cells(self, layout: Layout, frame: Frame, used_vars: set[str] | None = None,
              with_replica: bool = False, loop: CellLoop | None = None):
        """The cell loop of layout (`loop`, or codegen.lower.cells.cell_loop's), printed;
        yields the frame in which the layout's index variables name the cell's logical
        iteration. A rolled loop's register slots that depend on the slot are run-time
        selects."""
        loop = lowering.cell_loop(layout) if loop is None else loop
        slots = loop.slots
        ranges = loop.ranges
        thread = "tid" if layout.offset == 0 else f"tid - {layout.offset}"
        c_names = {T: thread, S: "slot", FLAT: "flat", REP: "rep"}
        wanted = set(layout.index_vars) if used_vars is None else used_vars
        rolled = loop.rolled
        unrolled = frame.unrolled if rolled is None or slots == 1 else frozenset({LANE})
        start = len(self.out.lines)
        if slots > 1:
            if rolled is not None:
                self.out.comment(f"not unrolled: {rolled}")
            self.out.line("#pragma unroll" if rolled is None else "#pragma unroll 1")
            header = f"for (int slot = 0; slot < {slots}; ++slot)"
        else:
            header = ""                      # a block of its own: its names stay local
        with self.maybe_block(header):
            declarations: dict[str, str] = {}
            inner = frame.inner(layout, {}, ranges, c_names, unrolled)
            loop_vars = dict(zip(layout.index_vars, loop.indices))
            if loop.replica is not None:
                loop_vars[layout.rep_var] = loop.replica
            if loop.tables is not None:
                cell = render_index(loop.cell, inner, self.var).text
                self.out.line(f"const int flat = {self._flat_table(loop)}[{cell}];")
                if layout.replicate > 1:
                    declarations["rep"] = f"{self.tables[layout]}_rep[{cell}]"
            guard = " && ".join(self._bound(bound, inner) for bound in loop.guard)
            ranges.update((v, (0, e - 1)) for v, e in zip(layout.index_vars, layout.shape))
            with self.maybe_block(f"if ({guard})" if guard else None):
                for name in layout.index_vars:
                    if name in wanted:
                        declarations[self.var(name)] = render_index(loop_vars[name], inner,
                                                                    self.var).text
                        c_names[name] = self.var(name)
                if with_replica and layout.replicate > 1:
                    if loop.tables is None:
                        declarations["rep"] = render_index(loop_vars[layout.rep_var], inner,
                                                           self.var).text
                    c_names[layout.rep_var] = "rep"
                body_start = len(self.out.lines)
                yield frame.inner(layout, loop_vars, ranges, c_names, unrolled)
                if "rep" in self._declare_used(body_start, declarations) and \
                        loop.tables is not None:
                    self._rep_table(loop)
        self.last_selects = select_count(self.out.lines[start:], self.register_slots)

    @contextmanager
    def maybe_block(self, header: str | None):
        """A C block under header; None: none; "": a bare block for local names, unless
        a block has just been opened anyway."""
        opened = self.out.lines and self.out.lines[-1].endswith("{")
        if header is None or header == "" and opened:
            yield
        else:
            with self.out.block(header):
                self.declared.append(set())
                yield
                self.declared.pop()

    def _flat_table(self, loop: CellLoop) -> str:
        """The name of the loop's flat-index table, declared with the layout's first loop."""
        layout = loop.layout
        stem = self.tables.get(layout)
        if stem is None:
            stem = self.names.get(("table", layout), f"layout{len(self.tables)}")
            self.tables[layout] = stem
            flat = loop.tables.flat
            self.table_text.append(
                f"// {layout.describe()}: the flat index (-1: unused) of each cell "
                f"slot*{layout.count} + thread\n"
                f"__device__ const {table_type(flat)} {stem}_flat"
                f"[{len(flat)}] = {table_literal(flat)};")
        return f"{stem}_flat"

    def _rep_table(self, loop: CellLoop) -> None:
        """The replica table of a tabled layout, declared once and only where a cell loop
        reads it (nvcc warns of a table no one reads)."""
        layout = loop.layout
        if layout in self.rep_tables:
            return
        self.rep_tables.add(layout)
        replica = loop.tables.replica
        self.table_text.append(
            f"// {layout.describe()}: the replica of each cell slot*{layout.count} + thread\n"
            f"__device__ const {table_type(replica)} {self.tables[layout]}_rep"
            f"[{len(replica)}] = {table_literal(replica)};")

    def _bound(self, bound, frame: Frame) -> str:
        """A test of the cell guard as C."""
        index = render_index(bound.expr, frame, self.var).text
        return " && ".join(([f"{index} >= {bound.low}"] if bound.low is not None else []) +
                           ([f"{index} < {bound.high}"] if bound.high is not None else []))

    def _declare_used(self, at: int, declarations: dict[str, str]) -> set[str]:
        """Declare, before line `at`, the cell variables the lines after it use; returns
        their names."""
        body = "\n".join(self.out.lines[at:])
        indent = "  " * self.out.depth
        used = [name for name in declarations if re.search(rf"\b{name}\b", body)]
        self.out.lines[at:at] = [f"{indent}const int {name} = {declarations[name]};"
                                 for name in used]
        return set(used)
