"""The simulator's findings: R500–R505 (and R300 for an access a layout cannot place)
collected as spec.diagnostics.Diagnostic values, never raised, so a caller can print
them all. One statement that goes wrong for many threads is reported once, naming the
first threads; `threads_text` prints thread sets the way a person reads them."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.diagnostics import Counterexample, Diagnostic, Note, error
from verify_reducer.spec.source import Span


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
            key: object = None, counterexample: Counterexample | None = None) -> None:
        """Report once per (code, statement, key): a loop repeating a fault is one
        finding, not one per iteration."""
        seen = (code, span, key)
        if seen in self._seen:
            return
        self._seen.add(seen)
        self.items.append(error(code, message, span, *notes,
                                counterexample=counterexample))


def register_array(buffer) -> str:
    """The name of a buffer's register array in the generated kernel (a reducer's
    partials are `<name>_partial`)."""
    return f"{buffer.name}_partial" if buffer.is_reducer else buffer.name


def slot_outside(access: str, thread: int, slot: int, array: str, regs, threads) -> str:
    """The R505 message of a register slot past its array."""
    return (f"{access} by thread {thread} uses slot {slot}, outside {array}[{regs.slots}] "
            f"({regs.slots} slots per thread, layout {regs.layout.describe()}; "
            f"{threads_text(threads)})")


def store_conflict(flat: np.ndarray, values: np.ndarray, threads: np.ndarray):
    """The first address that one store statement writes from two threads with different
    values, as (address, (thread, value), (thread, value)), or None. On the GPU such a
    store leaves whichever thread wrote last, which no plan orders: the result is
    undefined (R504). Equal values are a benign broadcast (every replica storing the same
    result) and compare bitwise, so NaN == NaN here."""
    if len(flat) < 2:
        return None
    order = np.argsort(flat, kind="stable")
    f, v, t = flat[order], values[order], threads[order]
    bits = v.view(np.uint8).reshape(len(v), -1)
    same_address = f[1:] == f[:-1]
    differ = same_address & (bits[1:] != bits[:-1]).any(axis=1)
    if not differ.any():
        return None
    k = int(np.argmax(differ))
    return int(f[k]), (int(t[k]), v[k].item()), (int(t[k + 1]), v[k + 1].item())
