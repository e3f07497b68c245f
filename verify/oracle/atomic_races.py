"""Races between blocks through an atomically updated global element (R504).

The blocks of one launch run in no order, so an element that T.atomic_* updates holds,
at any moment of the launch, some partial sum of the contributions made so far. A plain
read of it by another block sees whichever partial that block happens to meet, and a
plain store by another block may land before or after any contribution — both are
races, whatever the values. For every atomic update and every plain access (a load, a
store, a copy or fill region, a whole-tensor use) of the same global tensor, Z3 is asked
whether two distinct blocks can reach one element (verify.oracle.blocks' encoding: the
loop ranges, the guards of the enclosing `if`s, the element inside the tensor). A model
is a race, reported at the plain access with the atomic update as a note, naming the
element and the two blocks. `unknown` (the solver's timeout) reports nothing: this check
only ever names a race it has a witness for. Within one block, accesses are ordered by
the program and the plan's barriers (the simulator's race tracking)."""
from __future__ import annotations

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, Note, error

from .blocks import _collision, global_accesses


def atomic_races(func: ir.PrimFunc) -> list[Diagnostic]:
    accesses = global_accesses(func)
    atomics = [a for a in accesses if a.atomic and a.write]
    if not atomics or all(g == 1 for g in func.kernel.grid):
        return []
    found: list[Diagnostic] = []
    for atomic in atomics:
        for plain in (a for a in accesses if a.buffer is atomic.buffer and not a.atomic):
            verdict = _collision(func.kernel, atomic, plain)
            if verdict is None or verdict.startswith("Z3 could not decide"):
                continue
            found.append(error(
                "R504", f"race between blocks: {verdict}; {atomic.buffer.name} is updated "
                f"atomically, so another block's plain {'store' if plain.write else 'read'} "
                f"meets it at an unknown point of its contributions",
                plain.span, Note("the atomic update", atomic.span)))
            break
    return found
