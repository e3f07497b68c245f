"""What a run of the interpreter or the simulator executes, bounded (docs/limits.md, R102):
the blocks of a whole grid with the body runs and the work they will do (counted by
spec.run_cost before the first block runs, bounds read from block indices evaluated per
block; the blocks then enumerated lazily), and, as the run goes, the runs of every serial
loop body and their work over all the blocks of the run, so a bound read from memory is
held to the same limits as one known up front."""
from __future__ import annotations

import math
from typing import Iterable, Iterator

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.limits import MAX_ITERATIONS, MAX_WORK, power_of_two
from verify_reducer.spec.run_cost import WHAT_TO_DO, body_work, check_run_size


def blocks_to_run(func: ir.PrimFunc, blocks=None) -> tuple[Iterable[tuple[int, ...]], int]:
    """The blocks a run executes, and how many: the given ones (their caller counted
    them: verify.oracle.pipeline.check_loaded), or every block of the grid — then
    refused (R102) when they are more blocks, body runs or work than a run finishes, and
    never listed up front (a grid of 2**31 - 1 blocks is 2**31 tuples)."""
    if blocks is not None:
        chosen = list(blocks)
        return chosen, len(chosen)
    too_long = check_run_size(func, None, "a run executes every block of the grid")
    if too_long is not None:
        raise DiagnosticError([too_long])
    return np.ndindex(*func.kernel.grid), math.prod(func.kernel.grid)


class BodyRuns:
    """Runs of each serial loop's body and the work they do, over every block of one run
    (one counter per run, shared by its blocks). The up-front count already holds what
    block indices and constants decide; a loop whose bounds are read from memory, alone
    or nested, is held to MAX_ITERATIONS runs and the run to MAX_WORK here."""

    def __init__(self):
        self.runs: dict[ir.SerialFor, int] = {}
        self.work = 0
        self._body_work: dict[ir.SerialFor, int] = {}

    def count(self, loop: ir.SerialFor, iterations: Iterable) -> Iterator:
        """iterations, each counted as a run of loop's body (R102 past a limit)."""
        weight = self._body_work.get(loop)
        if weight is None:
            weight = self._body_work[loop] = body_work(loop)
        for item in iterations:
            done = self.runs.get(loop, 0) + 1
            if done > MAX_ITERATIONS:
                raise DiagnosticError(error(
                    "R102", f"this loop's body would run more than "
                    f"{power_of_two(MAX_ITERATIONS)} times in this run (all its blocks), "
                    f"the most that is supported; its bounds, or those of the loops around "
                    f"it, are read at run time: {WHAT_TO_DO}", loop.span))
            self.work += weight
            if self.work > MAX_WORK:
                raise DiagnosticError(error(
                    "R102", f"this run would do more than {power_of_two(MAX_WORK)} units "
                    f"of work (a statement run, or the elements it touches), the most that "
                    f"is supported; this loop's bounds, or those of the loops around it, "
                    f"are read at run time: {WHAT_TO_DO}", loop.span))
            self.runs[loop] = done
            yield item
