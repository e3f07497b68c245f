"""The limits a program and its inputs must stay within (docs/limits.md lists them all).

Two kinds:
- target limits of a CUDA launch on sm_90 (threads per block, grid extents): a program
  beyond them cannot run anywhere, so it is R506;
- limits of this tool: sizes a run of the interpreter or the simulator cannot hold or
  cannot finish (elements of one buffer, lanes of a T.Parallel, iterations), and the
  nesting depth every recursive walker of the IR is known to handle. Beyond them the
  program gets R102 (sizes) or R100 (nesting) naming the number, never a MemoryError,
  a hang or a RecursionError.
"""
from __future__ import annotations

TARGET = "sm_90"
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)     # gridDim.x, .y, .z
GRID_AXES = ("x", "y", "z")

# Elements of one buffer or tensor (parameters, allocations, inputs) and lanes of one
# T.Parallel nest. The interpreter keeps a float64 error bound beside every value, so
# 2**26 elements of float64 are 1 GiB with their bounds.
MAX_ELEMENTS = 2**26
# Elements of all tensor parameters together (they live at the same time).
MAX_TOTAL_ELEMENTS = 2**27
# Blocks of the grid: the interpreter and the simulator run each one in Python (about a
# millisecond per stage for a small block), so 2**14 blocks already take a while.
MAX_BLOCKS = 2**14
# Iterations of the innermost body: grid blocks × the trip counts of the serial loops
# around it (each one runs in Python, some 50 µs per iteration and stage).
MAX_ITERATIONS = 2**20

# Nesting depth of one expression (every IR walker recurses on it, a few Python frames
# per level) and of statements (bodies of loops, ifs and T.ws inside each other). Python
# already refuses 100 levels of indentation; the product of both stays far below its
# recursion limit in every walker (tests/test_limits.py runs the deepest accepted
# program through every stage).
MAX_EXPR_DEPTH = 64
MAX_STMT_DEPTH = 32


def power_of_two(n: int) -> str:
    """`67108864 (2**26)` for a limit in messages."""
    exponent = n.bit_length() - 1
    return f"{n} (2**{exponent})" if n == 1 << exponent else str(n)
