"""Races between the blocks of one launch through global memory (R504).

The blocks of a launch run in no order and nothing orders one block's plain accesses
against another's. So two accesses of one global element from two distinct blocks,
at least one a write, race — unless both are atomic updates of one monoid, which
commute (verify.oracle.blocks checks each block's contributions then):

- a plain read or store of an element that T.atomic_* updates: the element holds, at
  any moment, some partial of the contributions made so far, and the read meets
  whichever partial that block happens to see; the store lands before or after any
  contribution. Reported at the plain access, the atomic update as a note;
- a plain store and a plain read of one element (a read-modify-write from several
  blocks loses updates: both read, then both write), or two plain stores (which value
  remains depends on which block runs last). Reported at the store;
- atomic updates of two monoids of one element (T.atomic_add and T.atomic_max): each is
  indivisible, but they do not commute, so the element ends as the blocks happen to
  run. Reported at the later statement, the other as a note.

For every such pair of accesses of one tensor, Z3 over two distinct symbolic blocks
(verify.oracle.blocks.collision: the loop ranges, the enclosing `if`s, the element
inside the tensor). Only a *witness* is reported: a model of two encodings that are
the expressions themselves (no loaded value or unencoded operation stood in for, no
condition left out). Z3's `unknown`, or a model that leans on a stand-in, reports
nothing here; those blocks are then not proved independent, every block runs and the
report says why. Within one block, accesses are ordered by the program and the plan's
barriers (the simulator's race tracking)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, Note, error

from .blocks import Access, collision, global_accesses, within


def block_races(func: ir.PrimFunc) -> list[Diagnostic]:
    """At most one R504 per tensor: the first witnessed pair of its accesses."""
    if all(g == 1 for g in func.kernel.grid):
        return []
    accesses = global_accesses(func)
    found: list[Diagnostic] = []
    for buffer in dict.fromkeys(a.buffer for a in accesses if a.write):
        mine = [a for a in accesses if a.buffer is buffer]
        for first, second in _pairs(mine):
            meeting = collision(func.kernel, first, second)
            if meeting is not None and meeting.witness:
                found.append(_race(first, second, meeting.text))
                break
    return found


def _pairs(accesses: list[Access]):
    """(the access reported at, the other) for every pair that races if it meets: an
    atomic update against each plain access first (the atomic is the note), then each
    plain store against each plain access, itself included (two blocks running it)."""
    for atomic in (a for a in accesses if a.atomic and a.write):
        for plain in (a for a in accesses if not a.atomic):
            yield plain, atomic
    for store in (a for a in accesses if a.write and not a.atomic):
        for other in (a for a in accesses if not a.atomic):
            yield store, other
    # atomic updates of two monoids (an add and a max) of one element: each indivisible,
    # but they do not commute, so the element ends as the blocks happen to run
    updates = [a for a in accesses if a.atomic and a.write]
    for i, first in enumerate(updates):
        for second in updates[i + 1:]:
            if first.atomic != second.atomic:
                yield second, first


def _race(access: Access, other: Access, meeting: str) -> Diagnostic:
    name = access.buffer.name
    if other.atomic and access.atomic:
        return error(
            "R504", f"race between blocks: {meeting}; atomic updates of {name} by "
            f"{access.atomic} and by {other.atomic} do not commute, so the element ends "
            f"as the blocks happen to run (blocks of one launch run in no order)",
            access.span, Note(f"the atomic update by {other.atomic}", other.span))
    if other.atomic:
        return error(
            "R504", f"race between blocks: {meeting}; {name} is updated atomically, so "
            f"another block's plain {'store' if access.write else 'read'} meets it at an "
            f"unknown point of its contributions", access.span,
            Note("the atomic update", other.span))
    if other.write:
        why = ("which value remains depends on which block runs last (blocks of one "
               "launch run in no order)")
    elif within(other.span, access.span):
        why = ("a read-modify-write from several blocks: both blocks can read the "
               "element before either stores it, and one update is lost (T.atomic_add "
               "makes it one indivisible update)")
    else:
        why = ("the read sees the element before or after the other block's store, "
               "as the blocks happen to run (blocks of one launch run in no order)")
    notes = () if within(other.span, access.span) else \
        (Note("the other store" if other.write else "the read", other.span),)
    return error("R504", f"race between blocks: {meeting}; {why}", access.span, *notes)
