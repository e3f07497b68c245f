"""What a run of the interpreter or the simulator executes, bounded as it goes: the
blocks of a whole grid (checked before the first one runs, enumerated lazily) and the
runs of each serial loop body in one block (counted as they happen, so bounds read at
run time are held to the same limit as constant ones: docs/limits.md, R102)."""
from __future__ import annotations

import math
from typing import Iterable, Iterator

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError, error
from verify_reducer.spec.frontend.sizes import check_run_size
from verify_reducer.spec.limits import MAX_ITERATIONS, power_of_two


def blocks_to_run(func: ir.PrimFunc, blocks=None) -> tuple[Iterable[tuple[int, ...]], int]:
    """The blocks a run executes, and how many: the given ones, or every block of the
    grid — then refused (R102 at T.Kernel) when there are more than a run finishes, and
    never listed up front (a grid of 2**31 - 1 blocks is 2**31 tuples)."""
    if blocks is not None:
        chosen = list(blocks)
        return chosen, len(chosen)
    grid = func.kernel.grid
    total = math.prod(grid)
    too_long = check_run_size(func, total, "a run executes every block of the grid")
    if too_long is not None:
        raise DiagnosticError([too_long])
    return np.ndindex(*grid), total


class BodyRuns:
    """Runs of each serial loop's body in one block (one counter per block). The
    frontend bounds constant trip counts and their products; a loop whose bounds are
    read at run time, alone or nested, is held to MAX_ITERATIONS here."""

    def __init__(self):
        self.runs: dict[ir.SerialFor, int] = {}

    def count(self, loop: ir.SerialFor, iterations: Iterable) -> Iterator:
        """iterations, each counted as a run of loop's body (R102 past the limit)."""
        for item in iterations:
            done = self.runs.get(loop, 0) + 1
            if done > MAX_ITERATIONS:
                raise DiagnosticError(error(
                    "R102", f"this loop's body would run more than "
                    f"{power_of_two(MAX_ITERATIONS)} times in one block, the most that is "
                    f"supported; its bounds, or those of the loops around it, are read at "
                    f"run time (docs/limits.md)", loop.span))
            self.runs[loop] = done
            yield item
