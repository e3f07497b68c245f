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

from .target import DEFAULT_TARGET, target

# The launch limits are the target's own (spec.target holds the one table).
TARGET = DEFAULT_TARGET
MAX_THREADS_PER_BLOCK = target(TARGET).threads_per_block
MAX_GRID = target(TARGET).grid            # gridDim.x, .y, .z
GRID_AXES = ("x", "y", "z")

# Elements of what one block holds or runs at once: an on-chip buffer (fragment,
# shared, local, reducer), the lanes of one T.Parallel nest, and a given input array
# (held whole). The interpreter keeps a float64 error bound beside every value, so
# 2**26 elements of float64 are 1 GiB with their bounds.
MAX_ELEMENTS = 2**26
# Elements of one declared T.Tensor parameter. `check` holds only the windows of the
# blocks it runs (verify.oracle.blocks) and `run` refuses what is over --max-memory before it
# starts, so the declared size only has to keep every flat index far inside int64.
MAX_TENSOR_ELEMENTS = 2**40
# Blocks one run executes: the interpreter and the simulator run each in Python (about a
# millisecond per stage for a small block), so 2**14 blocks already take a while. `check`
# runs a sample when the blocks are proved independent; all of them otherwise.
MAX_BLOCKS = 2**14
# Runs of the innermost body: the blocks executed × the trip counts of the serial loops
# around it in one block (each one runs in Python, some 50 µs per iteration and stage).
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
