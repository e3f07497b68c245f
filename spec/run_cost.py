"""What one run of the interpreter or the simulator will execute, counted before its first
block runs (docs/limits.md "Sizes this tool runs", R102): the runs of each serial loop's
body over the blocks the run executes, and the work those runs do.

A trip count read at run time is counted per block when its bounds depend only on the
block indices, constants and `Let` names bound to those (a causal attention's
`T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))`): the bound
is evaluated exactly over the blocks at once, with Python integers wrapped to each node's
dtype as the interpreter wraps them. A bound that reads memory, a thread index, a loop
variable or a float counts one trip here; the run then holds it to the same limits as it
goes (interp.runs.BodyRuns counts over all the blocks of the run).

Work is what the limits weigh, not body runs alone: a run of one statement costs a unit
of overhead plus the elements it touches over ELEMENTS_PER_WORK (a T.gemm M·N·K, a copy or
fill its region, a statement inside T.Parallel its lanes). spec.limits has the
measurement behind both numbers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .diagnostics import Diagnostic, error
from .dtypes import wrap_int
from .ir import (Call, Cast, Compare, Const, Copy, Expr, Fill, Gemm, If, Let, Logical,
                 ParallelFor, PrimFunc, Reduce, ReducerFinalize, ReducerInit, SerialFor,
                 Select, Stmt, Unary, Var, WarpGroup, Binary)
from .limits import (ELEMENTS_PER_WORK, MAX_BLOCKS, MAX_ITERATIONS, MAX_WORK,
                     power_of_two)
from .operators import row

WHAT_TO_DO = ("use smaller sizes, `check` (it samples blocks proved independent), or "
              "--no-verify for emit and run (docs/limits.md)")


@dataclass
class RunCount:
    """Body runs and work of one run over its blocks. loop: the serial loop whose body runs
    most (None when no loop runs at all)."""
    blocks: int
    body_runs: int = 0
    loop: SerialFor | None = None
    work: int = 0
    read_at_run_time: bool = False      # some loop bound is not constant


def check_run_size(func: PrimFunc, blocks: Sequence[tuple[int, ...]] | None,
                   why: str) -> Diagnostic | None:
    """R102 when a run of blocks (None: every block of the grid) would execute more blocks,
    more runs of one loop body, or more work than the interpreter and the simulator finish
    in seconds; `why` says why that many blocks. At T.Kernel, where the run's size is
    decided (the grid), the message naming the loop whose body runs too often."""
    total = math.prod(func.kernel.grid) if blocks is None else len(blocks)
    span = func.kernel.span
    if total > MAX_BLOCKS:
        return error("R102", f"this run would execute {total} blocks ({why}); at most "
                     f"{power_of_two(MAX_BLOCKS)} are supported (docs/limits.md)", span)
    count = count_run(func, blocks)
    if count.body_runs > MAX_ITERATIONS:
        return error("R102", f"this run would execute the body of the loop at line "
                     f"{count.loop.span.line} {count.body_runs} times ({total} block(s) × "
                     f"the trip counts of the serial loops around it{_per_block(count)}; "
                     f"{why}); at most {power_of_two(MAX_ITERATIONS)} are supported: "
                     f"{WHAT_TO_DO}", span)
    if count.work > MAX_WORK:
        return error("R102", f"this run would do {count.work} units of work ({total} "
                     f"block(s); a unit is a statement run or {ELEMENTS_PER_WORK} elements "
                     f"it touches: T.gemm M·N·K, copies, T.Parallel lanes; {why}); at most "
                     f"{power_of_two(MAX_WORK)} are supported: {WHAT_TO_DO}", span)
    return None


def _per_block(count: RunCount) -> str:
    return ", bounds read at run time evaluated per block" if count.read_at_run_time else ""


def grid_blocks(grid: tuple[int, ...]) -> np.ndarray:
    """Every block of grid, one row each, in the order a run executes them."""
    return np.indices(grid).reshape(len(grid), -1).T


def count_run(func: PrimFunc, blocks: Sequence[tuple[int, ...]] | None) -> RunCount:
    """Body runs and work of a run of blocks (None: the whole grid; the caller has held
    its size to MAX_BLOCKS)."""
    kernel = func.kernel
    chosen = grid_blocks(kernel.grid) if blocks is None else \
        np.array([tuple(b) for b in blocks], dtype=np.int64).reshape(-1, len(kernel.grid))
    env = {var.name: chosen[:, d].astype(object) for d, var in enumerate(kernel.block_vars)}
    count = RunCount(len(chosen))
    _walk(kernel.body, env, np.ones(len(chosen), dtype=object), 1, count)
    return count


def _walk(body: Sequence[Stmt], env: dict, runs: np.ndarray, lanes: int,
          count: RunCount) -> None:
    """Adds the work of body, run runs[b] times in block b with lanes lanes each."""
    env = dict(env)             # a Let binds its name for the rest of this body only
    for stmt in body:
        count.work += statement_work(stmt, lanes) * int(runs.sum())
        if isinstance(stmt, Let):
            env[stmt.var.name] = block_value(stmt.value, env)
        elif isinstance(stmt, SerialFor):
            inner = runs * _trips(stmt, env, count)
            done = int(inner.sum())
            if done > count.body_runs:
                count.body_runs, count.loop = done, stmt
            _walk(stmt.body, {**env, stmt.var.name: None}, inner, lanes, count)
        elif isinstance(stmt, ParallelFor):
            hidden = {**env, **{v.name: None for v in stmt.vars}}
            _walk(stmt.body, hidden, runs, lanes * math.prod(stmt.extents), count)
        elif isinstance(stmt, If):
            # a condition on block indices picks each block's branch; any other may
            # take either, and both are counted in full (an upper bound)
            taken = block_value(stmt.cond, env)
            if taken is None:
                _walk(stmt.then, env, runs, lanes, count)
                _walk(stmt.orelse, env, runs, lanes, count)
            else:
                then = np.asarray(taken, dtype=bool) & np.ones(len(runs), dtype=bool)
                _walk(stmt.then, env, np.where(then, runs, 0), lanes, count)
                _walk(stmt.orelse, env, np.where(then, 0, runs), lanes, count)
        elif isinstance(stmt, WarpGroup):
            _walk(stmt.body, env, runs, lanes, count)


def statement_work(stmt: Stmt, lanes: int = 1) -> int:
    """Work units of one run of stmt itself (not its nested bodies), its T.Parallel
    lanes around it: a unit of overhead plus the elements it touches / ELEMENTS_PER_WORK."""
    if isinstance(stmt, Gemm):
        elements = math.prod(stmt.mnk)
    elif isinstance(stmt, Copy):
        elements = math.prod(stmt.dst.extents)
    elif isinstance(stmt, Fill):
        elements = math.prod(stmt.region.extents)
    elif isinstance(stmt, Reduce):
        elements = stmt.src.size
    elif isinstance(stmt, (ReducerInit, ReducerFinalize)):
        elements = stmt.reducer.size
    elif isinstance(stmt, (SerialFor, ParallelFor, WarpGroup)):
        elements = 0            # their bodies count themselves
    else:
        elements = lanes
    return 1 + elements // ELEMENTS_PER_WORK


def body_work(loop: SerialFor, lanes: int = 1) -> int:
    """Work units of one run of loop's body, the bodies of serial loops inside it excepted
    (they count their own runs): what interp.runs adds per iteration as it goes."""
    total = 0
    stack = [(stmt, lanes) for stmt in loop.body]
    while stack:
        stmt, width = stack.pop()
        total += statement_work(stmt, width)
        if isinstance(stmt, ParallelFor):
            width *= math.prod(stmt.extents)
        if isinstance(stmt, (ParallelFor, If, WarpGroup)):
            nested = (stmt.then + stmt.orelse) if isinstance(stmt, If) else stmt.body
            stack.extend((sub, width) for sub in nested)
    return total


def _trips(loop: SerialFor, env: dict, count: RunCount) -> np.ndarray | int:
    """Per block, how many times loop runs; 1 where a bound cannot be evaluated here."""
    start, stop = block_value(loop.start, env), block_value(loop.stop, env)
    if start is None or stop is None or loop.step == 0:
        count.read_at_run_time = True
        return 1
    if not (isinstance(loop.start, Const) and isinstance(loop.stop, Const)):
        count.read_at_run_time = True
    span = stop - start if loop.step > 0 else start - stop
    trips = -(-span // abs(loop.step))
    return np.maximum(trips, 0) if isinstance(trips, np.ndarray) else max(trips, 0)


def block_value(expr: Expr, env: dict):
    """expr over the blocks: a Python int or an object array of them, wrapped to each
    node's integer dtype; None when it reads anything but block indices, constants and
    names bound to those, or is not an integer."""
    if not (expr.dtype.is_int or expr.dtype.is_bool):
        return None
    if isinstance(expr, Const):
        return int(expr.value)
    if isinstance(expr, Var):
        return env.get(expr.name)
    if isinstance(expr, Compare) and expr.operand_dtype.kind != "int":
        return None             # an unsigned comparison converts its operands first
    operands = _operands(expr)
    if operands is None:
        return None
    values = [block_value(e, env) for e in operands]
    if any(v is None for v in values):
        return None
    try:
        result = _apply(expr, values)
    except (ZeroDivisionError, ValueError, OverflowError):
        return None             # the run reports it where it happens
    if result is None or not expr.dtype.is_int:
        return result
    return _wrapped(result, expr.dtype)


def _operands(expr: Expr):
    if isinstance(expr, (Binary, Compare, Logical)):
        return expr.a, expr.b
    if isinstance(expr, (Unary, Cast)):
        return (expr.a,)
    if isinstance(expr, Select):
        return expr.cond, expr.a, expr.b
    if isinstance(expr, Call) and expr.func in ("min", "max") and len(expr.args) == 2:
        return expr.args
    return None


def _apply(expr: Expr, values: list):
    if isinstance(expr, Cast):
        return values[0]
    if isinstance(expr, Select):
        cond, a, b = values
        return np.where(np.asarray(cond, dtype=bool), a, b) if _any_array(values) \
            else (a if cond else b)
    if isinstance(expr, Call):
        pick = min if expr.func == "min" else max
        return np.frompyfunc(pick, 2, 1)(*values) if _any_array(values) else pick(*values)
    exact = row(expr).exact
    if exact is None:
        return None
    if isinstance(expr, Logical):
        return np.frompyfunc(lambda x, y: int(exact(bool(x), bool(y))), 2, 1)(*values)
    ufunc = np.frompyfunc(exact, len(values), 1)
    result = ufunc(*values)
    return result if _any_array(values) else int(result)


def _any_array(values) -> bool:
    return any(isinstance(v, np.ndarray) for v in values)


def _wrapped(value, dtype):
    if isinstance(value, np.ndarray):
        return np.frompyfunc(lambda v: wrap_int(int(v), dtype), 1, 1)(value)
    return wrap_int(int(value), dtype)
