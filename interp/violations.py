"""The simulator's findings: R500–R505 (and R300 for an access a layout cannot place)
collected as spec.diagnostics.Diagnostic values, never raised, so a caller can print
them all. One statement that goes wrong for many threads is reported once, naming the
first threads; `threads_text` prints thread sets the way a person reads them."""
from __future__ import annotations

import numpy as np

from spec.diagnostics import Diagnostic, Note, error
from spec.source import Span


def threads_text(threads, limit: int = 6) -> str:
    """`threads 0..7, 16, 20..23` for a set of thread ids (ranges merged)."""
    ids = sorted({int(t) for t in np.asarray(threads).reshape(-1)})
    if not ids:
        return "no threads"
    runs: list[tuple[int, int]] = []
    for t in ids:
        if runs and t == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], t)
        else:
            runs.append((t, t))
    parts = [f"{a}" if a == b else f"{a}..{b}" for a, b in runs[:limit]]
    more = f", ... ({len(ids)} in all)" if len(runs) > limit else ""
    word = "thread" if len(ids) == 1 else "threads"
    return f"{word} {', '.join(parts)}{more}"


class Violations:
    def __init__(self):
        self.items: list[Diagnostic] = []
        self._seen: set = set()

    def add(self, code: str, message: str, span: Span | None, *notes: Note,
            key: object = None) -> None:
        """Report once per (code, statement, key): a loop repeating a fault is one
        finding, not one per iteration."""
        seen = (code, span, key)
        if seen in self._seen:
            return
        self._seen.add(seen)
        self.items.append(error(code, message, span, *notes))


def register_array(buffer) -> str:
    """The name of a buffer's register array in the generated kernel (a reducer's
    partials are `<name>_partial`)."""
    return f"{buffer.name}_partial" if buffer.is_reducer else buffer.name


def slot_outside(access: str, thread: int, slot: int, array: str, regs, threads) -> str:
    """The R505 message of a register slot past its array."""
    return (f"{access} by thread {thread} uses slot {slot}, outside {array}[{regs.slots}] "
            f"({regs.slots} slots per thread, layout {regs.layout.describe()}; "
            f"{threads_text(threads)})")
