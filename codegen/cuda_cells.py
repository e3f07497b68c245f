"""The loop over the executing thread's cells of a layout, the frame every placed
statement renders in: each (thread, slot) computes its iteration (and replica) from the
layout's inverse (codegen.cuda_layouts), as digit formulas or constant tables; unused
cells are guarded off. A mixin of codegen.cuda_stmts.KernelBody, with the C blocks the
cells open.

A cell loop's slots are unrolled, so that a register slot that follows the loop's layout is
a constant in each copy. A slot known only at run time is a select over the whole array
(codegen.cuda_access), and unrolled, each copy repeats that select: a loop of 256 slots
over a 64-slot partial expands into 32 K selects, and nvcc takes minutes or crashes.
`SELECT_LIMIT` bounds that expansion: past it the loop is rendered again, rolled.
"""
from __future__ import annotations

import re
from contextlib import contextmanager

from verify_reducer.spec.indexexpr import IndexExpr, Var
from verify_reducer.spec.layout import Layout

from .cuda_access import FLAT, LANE, REP, Frame, render_index
from .cuda_layouts import S, T, Inverse, inverse_of, table_literal, table_type


# Run-time register selects (array slots × accesses) an unrolled cell loop may expand
# into. Measured with nvcc 13.0 for sm_90 on tests/programs/valid/fuzz_row_split_windows.py
# as it rendered before its loops had windows: two loops of 98 K selects each crashed nvcc
# after two and a half minutes (docs/compiler-bugs/cicc-13.0-select-chain-crash.md), the
# same two at 65 K (an affine cell inverse instead of the table) took a minute; the 8 K of
# canonical_batched_in_place.py compile in under four seconds.
SELECT_LIMIT = 8192

SELECT = re.compile(r"\breducer_(?:get|set)\((\w+),")


def select_count(lines: list[str], slots_of: dict[str, int]) -> int:
    """The run-time register selects in lines: each reducer_get/reducer_set of an array
    selects over all its slots."""
    return sum(slots_of.get(m.group(1), 1) for line in lines for m in SELECT.finditer(line))


class CellLoops:
    """Slot loops and C blocks for codegen.cuda_stmts.KernelBody (its out, names, var,
    tables, declared and register_slots: the length of every register array)."""

    # the selects the last cell loop expands into (unrolled: per slot, times its slots)
    last_selects = 0

    @contextmanager
    def cells(self, layout: Layout, frame: Frame, used_vars: set[str] | None = None,
              with_replica: bool = False, rolled: str | None = None):
        """A loop over the executing thread's slots of layout; yields the frame in
        which the layout's index variables name the cell's logical iteration. With
        `rolled` (the reason, for the comment) the slot loop is not unrolled and every
        register slot that depends on it is a run-time select."""
        inverse = inverse_of(layout)
        slots = layout.slots_per_thread
        ranges = {T: (0, layout.count - 1), S: (0, slots - 1)}
        thread = "tid" if layout.offset == 0 else f"tid - {layout.offset}"
        c_names = {T: thread, S: "slot", FLAT: "flat", REP: "rep"}
        wanted = set(layout.index_vars) if used_vars is None else used_vars
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
            if inverse.table is not None:
                loop_vars, extra, declarations = self._table_cells(layout, inverse, frame,
                                                                   c_names)
                ranges.update(extra)
            else:
                loop_vars = dict(zip(layout.index_vars, inverse.indices))
                if inverse.replica is not None:
                    loop_vars[layout.rep_var] = inverse.replica
            inner = frame.inner(layout, {}, ranges, c_names, unrolled)
            guard = self._cell_guard(layout, inverse, inner)
            ranges.update((v, (0, e - 1)) for v, e in zip(layout.index_vars, layout.shape))
            with self.maybe_block(f"if ({guard})" if guard else None):
                for name in layout.index_vars:
                    if name in wanted:
                        declarations[self.var(name)] = render_index(loop_vars[name], inner,
                                                                    self.var).text
                        c_names[name] = self.var(name)
                if with_replica and layout.replicate > 1:
                    if inverse.table is None:
                        declarations["rep"] = render_index(loop_vars[layout.rep_var], inner,
                                                           self.var).text
                    c_names[layout.rep_var] = "rep"
                body_start = len(self.out.lines)
                yield frame.inner(layout, loop_vars, ranges, c_names, unrolled)
                if "rep" in self._declare_used(body_start, declarations) and \
                        inverse.table is not None:
                    self._rep_table(layout, inverse)
        selects = select_count(self.out.lines[start:], self.register_slots)
        self.last_selects = selects * (slots if S in unrolled else 1)

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

    def _table_cells(self, layout: Layout, inverse: Inverse, frame: Frame, c_names):
        """The inverse as constant tables indexed by the cell: flat index and replica."""
        stem = self.tables.get(layout)
        flat_table, _ = inverse.table
        if stem is None:
            stem = self.names.get(("table", layout), f"layout{len(self.tables)}")
            self.tables[layout] = stem
            self.table_text.append(
                f"// {layout.describe()}: the flat index (-1: unused) of each cell "
                f"slot*{layout.count} + thread\n"
                f"__device__ const {table_type(flat_table)} {stem}_flat"
                f"[{len(flat_table)}] = {table_literal(flat_table)};")
        cell = render_index(inverse.cell(), frame.inner(layout, {}, inverse.ranges, c_names),
                            self.var).text
        self.out.line(f"const int flat = {stem}_flat[{cell}];")
        loop_vars: dict[str, IndexExpr] = {}
        stride = layout.size
        flat = Var(FLAT)
        for name, extent in zip(layout.index_vars, layout.shape):
            stride //= extent
            loop_vars[name] = (flat // stride) % extent
        declarations = {}
        if layout.replicate > 1:
            loop_vars[layout.rep_var] = Var(REP)
            declarations["rep"] = f"{stem}_rep[{cell}]"
        return loop_vars, {FLAT: (0, layout.size - 1), REP: (0, layout.replicate - 1)}, \
            declarations

    def _rep_table(self, layout: Layout, inverse: Inverse) -> None:
        """The replica table of a tabled layout, declared once and only where a cell loop
        reads it (nvcc warns of a table no one reads)."""
        if layout in self.rep_tables:
            return
        self.rep_tables.add(layout)
        rep_table = inverse.table[1]
        self.table_text.append(
            f"// {layout.describe()}: the replica of each cell slot*{layout.count} + thread\n"
            f"__device__ const {table_type(rep_table)} {self.tables[layout]}_rep"
            f"[{len(rep_table)}] = {table_literal(rep_table)};")

    def _cell_guard(self, layout: Layout, inverse: Inverse, frame: Frame) -> str | None:
        if inverse.table is not None:
            return "flat >= 0"
        window = inverse.window
        if window is not None:
            index = render_index(window.index, frame, self.var).text
            bounds = ([f"{index} >= {window.low}"] if window.low > 0 else []) + \
                ([f"{index} < {window.high}"] if window.high < window.wide else [])
            return " && ".join(bounds)
        if inverse.used is None:
            return None
        return f"{render_index(inverse.cell(), frame, self.var).text} < {inverse.used}"

    def _declare_used(self, at: int, declarations: dict[str, str]) -> set[str]:
        """Declare, before line `at`, the cell variables the lines after it use; returns
        their names."""
        body = "\n".join(self.out.lines[at:])
        indent = "  " * self.out.depth
        used = [name for name in declarations if re.search(rf"\b{name}\b", body)]
        self.out.lines[at:at] = [f"{indent}const int {name} = {declarations[name]};"
                                 for name in used]
        return set(used)
